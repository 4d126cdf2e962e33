//===- Evidence.cpp - the one table of tests cited as evidence --*- C++ -*-===//
//
// tools/check_evidence.sh reads this table through //capsules:evidence_dump
// (not from this file), so entries may span lines.
//
//===----------------------------------------------------------------------===//
#include "capsules/Evidence.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace vouch::capsules {

namespace {

/// Models of the GPU suite, as tools/gpu_suite.sh packages them: every one
/// of tests/gpu and the examples that hold the others' capsules
/// (resnet_small: col2im_matmul, which no tests/gpu model's convolution is
/// wide enough for).
constexpr std::string_view kGpuSuiteModels =
    "examples/quickstart_mlp.vouch examples/residual_mlp.vouch "
    "examples/resnet_small.vouch tests/gpu/*.vouch";

/// The models tools/gpu_suite.sh also builds with --precision bf16.
constexpr std::string_view kGpuSuiteBf16Models =
    "tests/gpu/ops_attention.vouch tests/gpu/ops_library.vouch "
    "tests/gpu/ops_padded.vouch tests/gpu/ops_conv.vouch "
    "tests/gpu/ops_classes.vouch tests/gpu/ops_head.vouch examples/tiny_gpt.vouch";

} // namespace

const std::vector<Citation> &citations() {
  // clang-format off
  static const std::vector<Citation> table = {
    {"ir-verifier", "tests/lit/ir/invalid.mlir",
     "the op verifiers reject ill-shaped ops, message by message",
     names("'vouch.{op}' op", "tests/lit/ir/invalid.mlir")},
    {"gradcheck", "//tests:gradcheck_test",
     "every VJP rule against central finite differences of the float64 reference interpreter",
     names("{\"{op}\", {{", "tests/gradcheck_test.cpp")},
    {"cpu-kernels", "//runtime:cpu_kernels_test",
     "runtime/cpu_kernels.h against independently written loops, including every transpose flag and the left-fold order",
     names("{symbol}<", "runtime/cpu_kernels_test.cc")},
    {"cpu-build", "//codegen:cpu_build_test",
     "an emitted cpu executable's first-step loss equals the reference interpreter's on a quickstart-shaped MLP",
     names("vouch.{op} %", "codegen/cpu_build_test.cpp")},
    {"gate", "tests/lit/capsules/gate-bounds.mlir",
     "the assurance gate rejects every cuda capsule on an op beyond its bounds: rank, the UInt32 CUDA ABI, cuBLAS's int extents",
     names("vouch.capsule = \"{capsule}\"", "tests/lit/capsules/gate-bounds.mlir")},
    {"gemm-flags", "//capsules:catalog_test",
     "row-major transpose flags map to cuBLAS transa/transb with swapped operands",
     names("the call of vouch.{op}\"", "capsules/catalog_test.cpp")},
    {"nvrtc", "//tests:nvrtc_kernels_test",
     "every kernel emitted for the GPU suite's models compiles with NVRTC for sm_90 and every entry point is in the PTX",
     plans("checked_cuda", kGpuSuiteModels)},
    {"nvrtc-bf16", "//tests:nvrtc_kernels_test",
     "every kernel emitted for the GPU suite's bf16 builds (--precision bf16, vouch.round_bf16 included) compiles with NVRTC for sm_90 and every entry point is in the PTX",
     plans("checked_cuda+bf16", kGpuSuiteBf16Models)},
    {"optimizer", "//runtime:optim_test",
     "two steps of every optimizer kind, each schedule and clip_grad_norm against PyTorch 1.13 (float64)",
     names("{capsule}", "runtime/optim_test.cc")},
    {"cpu-executor", "//runtime:executor_test",
     "the cpu executor runs a Program's tables: batches, forward, tape, VJPs, against hand-written references",
     names("{capsule}", "runtime/executor_test.cc")},
    {"cuda-executor", "//runtime/cuda:executor_test",
     "on a GPU: the cuda executor's training steps (batch selection, every optimizer kind, schedules, clip_grad_norm, the loss ring) against the host optimizer and the cpu executor",
     names("{capsule}", "runtime/cuda/executor_test.cc")},
    {"golden-torch", "//tests:golden_activations_mlp_test",
     "examples/activations_mlp.vouch built for cpu: every step's loss and the final params against PyTorch (float64) within 1e-9, ties of maximum/minimum included",
     plans("checked_cpu", "examples/activations_mlp.vouch")},
    {"golden-torch-slice", "//tests:golden_slice_mlp_test",
     "examples/slice_mlp.vouch built for cpu: every step's loss and the final params against PyTorch (float64) within 1e-9: gelu in both forms, slices with negative bounds and a step, concat, and their VJPs",
     plans("checked_cpu", "examples/slice_mlp.vouch")},
    {"golden-torch-digits", "//tests:golden_digits_mlp_test",
     "examples/digits_mlp.vouch built for cpu on the sklearn digits: every step's loss and the final params against PyTorch (float64) within 1e-9: int32 labels, cross_entropy and its dlogits, layer_norm, gelu, AdamW",
     plans("checked_cpu", "examples/digits_mlp.vouch")},
    {"golden-torch-embedding", "//tests:golden_embedding_bag_test",
     "examples/embedding_bag.vouch built for cpu on synthetic token ids: every step's loss and the final params against PyTorch (float64) within 1e-9: int32 ids, embedding and its fixed-order table gradient, cross_entropy",
     plans("checked_cpu", "examples/embedding_bag.vouch")},
    {"golden-torch-pool", "//tests:golden_pool_digits_test",
     "examples/pool_digits.vouch built for cpu on the sklearn digits: every step's loss and the final params against PyTorch (float64) within 1e-9: max_pool (with ties), avg_pool and smooth_max_pool in 1-D, 2-D and 3-D with strides and padding, flatten, and their VJPs",
     plans("checked_cpu", "examples/pool_digits.vouch")},
    {"tokens", "//tests:tokens_equivalence_test",
     "a token stream's windows (sequential and random) train exactly as the npy rows an independent script cuts from the same file, bit for bit",
     plans("checked_cpu", "tests/tokens/tiny_tokens.vouch tests/tokens/tiny_tokens_random.vouch")},
    {"blas-device", "//runtime/cuda:blas_test",
     "on a GPU: the runtime's cuBLASLt call of an op against double products and sums of the same values, under fp32, tf32, bf16 operands and f64; two runs bitwise; the refused epilogue's fallback",
     names("{op}_row_major(", "runtime/cuda/blas_test.cc")},
    {"gpu-suite-bf16", "tests/gpu/run.sh",
     "on a GPU: the GPU suite's bf16 builds (--precision bf16: products of bf16 operands, f32 sums) against the cpu f64 reference within bf16's declared tolerances; runs bitwise equal",
     plans("checked_cuda+bf16", kGpuSuiteBf16Models)},
    {"gpu-suite", "tests/gpu/run.sh",
     "on an H200: every op of the GPU suite's models (tests/gpu/*.vouch and the examples), forward and VJP, cuda f64 within 1e-12 and f32 within 1e-5 of the cpu f64 reference; runs bitwise equal; graph = no graph; memcheck clean",
     plans("checked_cuda", kGpuSuiteModels)},
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

std::vector<std::string_view> splitWords(std::string_view list) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < list.size()) {
    size_t start = list.find_first_not_of(' ', i);
    if (start == std::string_view::npos)
      break;
    size_t end = std::min(list.find(' ', start), list.size());
    words.push_back(list.substr(start, end - start));
    i = end;
  }
  return words;
}

namespace {

/// Whether `name` matches `pattern`, where `*` matches any run of
/// characters.
bool matches(std::string_view pattern, std::string_view name) {
  size_t star = pattern.find('*');
  if (star == std::string_view::npos)
    return pattern == name;
  std::string_view head = pattern.substr(0, star);
  if (name.substr(0, head.size()) != head)
    return false;
  std::string_view rest = pattern.substr(star + 1);
  for (size_t i = head.size(); i <= name.size(); ++i)
    if (matches(rest, name.substr(i)))
      return true;
  return false;
}

} // namespace

std::vector<std::string> citedModels(const Citation &c,
                                     const std::string &root) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (std::string_view word : splitWords(c.exercises.models)) {
    size_t slash = word.rfind('/');
    std::string_view dir =
        slash == std::string_view::npos ? "" : word.substr(0, slash + 1);
    std::string_view file = word.substr(dir.size());
    std::vector<std::string> found;
    std::error_code ec;
    if (file.find('*') != std::string_view::npos)
      for (const fs::directory_entry &e :
           fs::directory_iterator(root + std::string(dir), ec))
        if (matches(file, e.path().filename().string()))
          found.push_back(std::string(dir) + e.path().filename().string());
    std::sort(found.begin(), found.end());
    if (found.empty())
      found.push_back(std::string(word));
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
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
