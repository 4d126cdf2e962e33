//===- CommandLine.h - strict flag parsing for the vouch driver -*- C++ -*-===//
//
// Each command declares its flags with help text; anything else on the
// command line is an error naming the flag, never silently ignored.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_TOOLS_COMMANDLINE_H
#define VOUCH_TOOLS_COMMANDLINE_H

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vouch::driver {

class CommandLine {
public:
  CommandLine(std::string command, std::string summary, std::string usage)
      : command_(std::move(command)), summary_(std::move(summary)),
        usage_(std::move(usage)) {}

  /// Declares `--name VALUE` (or `--name=VALUE`).
  void option(const std::string &name, const std::string &meta,
              const std::string &help, std::string defaultValue = "");
  /// Declares the boolean `--name`.
  void flag(const std::string &name, const std::string &help);

  /// Parses `args`; on error returns false with `error` set.
  bool parse(const std::vector<std::string> &args, std::string &error);
  /// Parses `args` for a command taking `positionals` files, printing the
  /// help or the error: -1 to go on, else the exit code (0 after --help,
  /// 2 on a usage error).
  int parseOrExit(const std::vector<std::string> &args, size_t positionals);
  /// The value of option `name`, which must be one of `choices`; prints the
  /// error and returns nullopt otherwise.
  std::optional<std::string> choice(const std::string &name,
                                    const std::vector<std::string> &choices) const;

  bool has(const std::string &name) const { return seen_.count(name) != 0; }
  std::string get(const std::string &name) const;
  /// Parses an integer option; false with `error` set if malformed.
  bool getInt(const std::string &name, long long &out,
              std::string &error) const;
  /// Parses an integer option that must lie in [min, max]; false with
  /// `error` set if malformed or outside: "--NAME must be at least MIN", or
  /// "--NAME must be at most MAX (why), got N" (without " (why)" if empty).
  bool getCount(const std::string &name, long long min, long long max,
                long long &out, std::string &error,
                const std::string &why = "") const;
  const std::vector<std::string> &positional() const { return positional_; }
  bool wantsHelp() const { return has("help"); }
  std::string help() const;

private:
  struct Spec {
    std::string meta, help, defaultValue;
    bool takesValue;
  };
  std::string command_, summary_, usage_;
  std::vector<std::string> order_;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> seen_;
  std::vector<std::string> positional_;
};

} // namespace vouch::driver

#endif // VOUCH_TOOLS_COMMANDLINE_H
