//===- Arguments.cpp - binding call arguments to parameters ---------------===//
#include "frontend/Arguments.h"

#include "frontend/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace vouch::frontend;

std::string Signature::format() const {
  std::string text = name.str() + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i)
      text += ", ";
    text += params[i].name.str();
    if (!params[i].isRequired())
      text += " = " + params[i].defaultText.str();
  }
  return text + ")";
}

static std::string plural(size_t count, llvm::StringRef noun) {
  return std::to_string(count) + " " + noun.str() + (count == 1 ? "" : "s");
}

std::optional<llvm::SmallVector<int>>
vouch::frontend::bindArguments(const Signature &signature,
                               llvm::ArrayRef<ast::Argument> args,
                               llvm::SMLoc callLoc, ErrorEmitter emitError,
                               const SourceDiagnostics &diagnostics) {
  llvm::ArrayRef<ParamSpec> params = signature.params;
  llvm::SmallVector<int> bound(params.size(), -1);
  bool ok = true;
  bool usedKeywords = false;
  size_t numRequired = llvm::count_if(
      params, [](const ParamSpec &p) { return p.isRequired(); });

  size_t positional = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const ast::Argument &arg = args[i];
    if (!arg.keyword.empty()) {
      usedKeywords = true;
      continue;
    }
    if (usedKeywords) {
      emitError(arg.getLoc())
          << "positional arguments must come before keyword arguments";
      ok = false;
      continue;
    }
    if (positional == params.size()) {
      size_t given = llvm::count_if(
          args, [](const ast::Argument &a) { return a.keyword.empty(); });
      mlir::InFlightDiagnostic diag = emitError(arg.getLoc());
      diag << "'" << signature.name << "' takes ";
      if (params.empty())
        diag << "no " << signature.noun << "s";
      else if (numRequired == params.size())
        diag << plural(params.size(), signature.noun);
      else
        diag << numRequired << " to " << plural(params.size(), signature.noun);
      diag << ", got " << given << ": " << signature.format();
      return std::nullopt;
    }
    bound[positional++] = static_cast<int>(i);
  }

  for (size_t i = 0; i < args.size(); ++i) {
    const ast::Argument &arg = args[i];
    if (arg.keyword.empty())
      continue;
    const auto *param = llvm::find_if(
        params, [&](const ParamSpec &p) { return p.name == arg.keyword; });
    if (param == params.end()) {
      llvm::SmallVector<llvm::StringRef> names;
      for (const ParamSpec &p : params)
        names.push_back(p.name);
      mlir::InFlightDiagnostic diag = emitError(arg.keywordLoc);
      diag << "'" << signature.name << "' has no " << signature.noun << " '"
           << arg.keyword << "'";
      if (std::optional<llvm::StringRef> close =
              findClosestName(arg.keyword, names))
        diag << "; did you mean '" << *close << "'?";
      if (names.empty())
        diag << " (it takes none)";
      else
        diag << " (known: " << joinNames(names) << ")";
      ok = false;
      continue;
    }
    int &slot = bound[param - params.begin()];
    if (slot >= 0) {
      mlir::InFlightDiagnostic diag = emitError(arg.keywordLoc);
      diag << signature.noun << " '" << arg.keyword << "' of '"
           << signature.name << "' is given twice";
      diag.attachNote(diagnostics.getLocation(args[slot].getLoc()))
          << "first given here";
      ok = false;
      continue;
    }
    slot = static_cast<int>(i);
  }
  if (!ok)
    return std::nullopt;

  llvm::SmallVector<llvm::StringRef> missing;
  for (size_t i = 0; i < params.size(); ++i)
    if (bound[i] < 0 && params[i].isRequired())
      missing.push_back(params[i].name);
  if (missing.empty())
    return bound;
  mlir::InFlightDiagnostic diag = emitError(callLoc);
  if (!usedKeywords && numRequired == params.size()) {
    diag << "'" << signature.name << "' takes "
         << plural(params.size(), signature.noun) << ", got " << args.size();
  } else if (!usedKeywords) {
    diag << "'" << signature.name << "' takes " << numRequired << " to "
         << plural(params.size(), signature.noun) << ", got " << args.size();
  } else {
    diag << "'" << signature.name << "' is missing " << signature.noun
         << (missing.size() == 1 ? " " : "s ");
    llvm::interleaveComma(missing, diag, [&](llvm::StringRef name) {
      diag << "'" << name << "'";
    });
  }
  diag << ": " << signature.format();
  return std::nullopt;
}
