//===- Evidence.cpp - the one table of tests cited as evidence --*- C++ -*-===//
//
// Keep one entry per line, reference second: tools/check_evidence.sh reads
// the references out of this file with grep.
//
//===----------------------------------------------------------------------===//
#include "capsules/Evidence.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace vouch::capsules {

const std::vector<Citation> &citations() {
  // clang-format off
  static const std::vector<Citation> table = {
    {"ir-verifier", "tests/lit/ir/invalid.mlir", "the op verifiers reject ill-shaped ops, message by message"},
    {"gradcheck", "//tests:gradcheck_test", "every VJP rule against central finite differences of the float64 reference interpreter"},
    {"cpu-kernels", "//runtime:cpu_kernels_test", "runtime/cpu_kernels.h against independently written loops, including every transpose flag and the left-fold order"},
    {"cpu-build", "//codegen:cpu_build_test", "an emitted cpu executable's first-step loss equals the reference interpreter's on a quickstart-shaped MLP"},
    {"gate", "//passes:gate_test", "the assurance gate's obligations, one rejection case each (UInt32 ABI, ranks, identity, trust, VJP, numerics)"},
    {"gemm-flags", "//capsules:catalog_test", "row-major transpose flags map to cuBLAS transa/transb with swapped operands"},
    {"nvrtc", "//tests:nvrtc_kernels_test", "every kernel emitted for the examples compiles with NVRTC for sm_90 and every entry point is in the PTX"},
    {"optimizer", "//runtime:optim_test", "two steps of every optimizer kind against values computed in Python (float64)"},
    {"cpu-executor", "//runtime:executor_test", "the cpu executor runs a Program's tables: batches, forward, tape, VJPs, against hand-written references"},
    {"cuda-executor", "//runtime/cuda:executor_test", "on a GPU: the cuda executor's training steps (batch selection, every optimizer kind, the loss ring) against the host optimizer and the cpu executor"},
    {"gpu-suite", "tests/gpu/run.sh", "on an H200: every op of tests/gpu/*.vouch and the examples, forward and VJP, cuda f64 within 1e-12 and f32 within 1e-5 of the cpu f64 reference; runs bitwise equal; graph = no graph; memcheck clean"},
  };
  // clang-format on
  return table;
}

const Citation *findCitation(std::string_view key) {
  for (const Citation &c : citations())
    if (c.key == key)
      return &c;
  return nullptr;
}

Evidence citedEvidence(EvidenceKind kind, std::string_view key) {
  const Citation *c = findCitation(key);
  if (!c) {
    std::fprintf(stderr, "vouch: capsule evidence cites unknown key `%s`\n",
                 std::string(key).c_str());
    std::abort();
  }
  return Evidence{kind, std::string(c->reference)};
}

Evidence uncitedEvidence(EvidenceKind kind) { return Evidence{kind, ""}; }

} // namespace vouch::capsules
