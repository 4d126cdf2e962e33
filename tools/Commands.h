//===- Commands.h - the vouch driver's commands -----------------*- C++ -*-===//
#ifndef VOUCH_TOOLS_COMMANDS_H
#define VOUCH_TOOLS_COMMANDS_H

#include <string>
#include <vector>

namespace vouch::driver {

/// Each command takes the arguments after its name and returns the exit
/// code: 0 success, 1 the model was rejected (diagnostics printed), 2 a
/// usage error.
int runCheck(const std::vector<std::string> &args);
int runEmitIR(const std::vector<std::string> &args);
int runInterpret(const std::vector<std::string> &args);
int runBuild(const std::vector<std::string> &args);
int runReport(const std::vector<std::string> &args);

} // namespace vouch::driver

#endif // VOUCH_TOOLS_COMMANDS_H
