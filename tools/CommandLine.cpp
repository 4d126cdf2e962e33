//===- CommandLine.cpp - strict flag parsing for the vouch driver ---------===//
#include "tools/CommandLine.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace vouch::driver {

void CommandLine::option(const std::string &name, const std::string &meta,
                         const std::string &help, std::string defaultValue) {
  order_.push_back(name);
  specs_[name] = Spec{meta, help, std::move(defaultValue), true};
}

void CommandLine::flag(const std::string &name, const std::string &help) {
  order_.push_back(name);
  specs_[name] = Spec{"", help, "", false};
}

bool CommandLine::parse(const std::vector<std::string> &args,
                        std::string &error) {
  if (!specs_.count("help"))
    flag("help", "print this help and exit");
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0 || arg == "--") {
      if (arg == "-v" && specs_.count("verbose")) { // -v for --verbose
        seen_["verbose"] = "1";
        continue;
      }
      if (arg.size() > 1 && arg[0] == '-' && arg != "-o") {
        error = "unknown option '" + arg + "'";
        return false;
      }
      if (arg == "-o") { // the one short alias: -o for --output
        if (!specs_.count("output") || i + 1 >= args.size()) {
          error = "'-o' needs a value";
          return false;
        }
        seen_["output"] = args[++i];
        continue;
      }
      positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    bool inlineValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inlineValue = true;
    }
    auto it = specs_.find(name);
    if (it == specs_.end()) {
      error = "unknown option '--" + name + "' for 'vouch " + command_ + "'";
      return false;
    }
    if (!it->second.takesValue) {
      if (inlineValue) {
        error = "option '--" + name + "' takes no value";
        return false;
      }
      seen_[name] = "1";
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= args.size()) {
        error = "option '--" + name + "' needs a value (" + it->second.meta +
                ")";
        return false;
      }
      value = args[++i];
    }
    seen_[name] = value;
  }
  return true;
}

int CommandLine::parseOrExit(const std::vector<std::string> &args,
                             size_t positionals) {
  std::string error;
  if (!parse(args, error)) {
    std::fprintf(stderr, "error: %s\n(see 'vouch %s --help')\n", error.c_str(),
                 command_.c_str());
    return 2;
  }
  if (wantsHelp()) {
    std::fputs(help().c_str(), stdout);
    return 0;
  }
  if (positional().size() != positionals) {
    std::fprintf(stderr, "error: expected %zu input file%s, got %zu\n\n%s",
                 positionals, positionals == 1 ? "" : "s", positional().size(),
                 help().c_str());
    return 2;
  }
  return -1;
}

std::optional<std::string>
CommandLine::choice(const std::string &name,
                    const std::vector<std::string> &choices) const {
  std::string value = get(name);
  std::string known;
  for (const std::string &c : choices) {
    if (c == value)
      return value;
    known += (known.empty() ? "" : ", ") + c;
  }
  std::fprintf(stderr, "error: --%s must be one of %s, got '%s'\n",
               name.c_str(), known.c_str(), value.c_str());
  return std::nullopt;
}

std::string CommandLine::get(const std::string &name) const {
  if (auto it = seen_.find(name); it != seen_.end())
    return it->second;
  auto spec = specs_.find(name);
  return spec == specs_.end() ? "" : spec->second.defaultValue;
}

bool CommandLine::getInt(const std::string &name, long long &out,
                         std::string &error) const {
  std::string text = get(name);
  errno = 0;
  char *end = nullptr;
  out = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    error = "option '--" + name + "' expects an integer, got '" + text + "'";
    return false;
  }
  return true;
}

bool CommandLine::getCount(const std::string &name, long long min,
                           long long max, long long &out, std::string &error,
                           const std::string &why) const {
  if (!getInt(name, out, error))
    return false;
  if (out < min)
    error = "--" + name + " must be at least " + std::to_string(min);
  else if (out > max)
    error = "--" + name + " must be at most " + std::to_string(max) +
            (why.empty() ? "" : " (" + why + ")") + ", got " +
            std::to_string(out);
  else
    return true;
  return false;
}

std::string CommandLine::help() const {
  std::ostringstream out;
  out << "vouch " << command_ << " - " << summary_ << "\n\nusage: vouch "
      << command_ << " " << usage_ << "\n\noptions:\n";
  for (const std::string &name : order_) {
    const Spec &spec = specs_.at(name);
    std::string left = "--" + name + (spec.takesValue ? " " + spec.meta : "");
    out << "  " << left;
    out << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ')
        << spec.help;
    if (!spec.defaultValue.empty())
      out << " (default: " << spec.defaultValue << ")";
    out << "\n";
  }
  return out.str();
}

} // namespace vouch::driver
