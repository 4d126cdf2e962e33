//===- vouch_main.cpp - the vouch driver ------------------------*- C++ -*-===//
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "tools/Commands.h"

namespace {

struct Command {
  const char *name;
  const char *summary;
  int (*run)(const std::vector<std::string> &);
};

const Command kCommands[] = {
    {"check", "parse, lower and verify a model description",
     vouch::driver::runCheck},
    {"emit-ir", "print the model in the vouch dialect",
     vouch::driver::runEmitIR},
    {"run", "run a model's forward pass in the reference interpreter",
     vouch::driver::runInterpret},
    {"build", "compile a model to a native executable that trains it",
     vouch::driver::runBuild},
    {"report", "print the plan / capsule audit report for a profile",
     vouch::driver::runReport},
};

void printUsage(FILE *out) {
  std::fprintf(out,
               "vouch - an ahead-of-time compiler from model descriptions to "
               "accounted-for programs\n\nusage: vouch <command> [options] "
               "FILE\n\ncommands:\n");
  for (const Command &c : kCommands)
    std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'vouch <command> --help' describes a command's "
                    "options.\nExit status: 0 success, 1 the model or its data "
                    "refused or the C++ compiler\nfailed, 2 bad options or "
                    "output path, 6 out of memory (docs/language.md).\n");
}

} // namespace

int runCommand(int argc, char **argv);

// A model too large is refused before it is allocated (`run --interpret`); an
// allocation that fails anyway ends the command with a message and exit 6,
// never an abort.
int main(int argc, char **argv) {
  try {
    return runCommand(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: out of memory (std::bad_alloc)\n");
    return 6;
  }
}

int runCommand(int argc, char **argv) {
  if (argc < 2) {
    printUsage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    printUsage(stdout);
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command &c : kCommands)
    if (name == c.name)
      return c.run(args);
  std::fprintf(stderr, "error: unknown command '%s'\n\n", name.c_str());
  printUsage(stderr);
  return 2;
}
