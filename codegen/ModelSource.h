//===- ModelSource.h - the C++ of a model's executable ----------*- C++ -*-===//
//
// Generated code is tables and kernels, nothing else: the model's
// description, the cpu Program with its kernel functions, the cuda Program
// with its NVRTC-compiled cubin and PTX, and a main() of a few lines handing
// them to the runtime (runtime/train_main.h). Its size grows with the
// model's tables, not with code per op.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_MODELSOURCE_H
#define VOUCH_CODEGEN_MODELSOURCE_H

#include <string>
#include <vector>

#include "codegen/Nvrtc.h"
#include "codegen/ProgramBuilder.h"
#include "passes/Gate.h"
#include "runtime/model_api.h"

namespace vouch::codegen {

struct BackendSource {
  const ProgramBuilder *program = nullptr;
  const AcceptedGraphPlan *plan = nullptr;
  /// cuda only: the binary of each of cudaKernelUnits(*program), in order.
  const std::vector<CudaBinary> *binaries = nullptr;
  /// cuda only: whether those units hold the kernels' f64 entry points (the
  /// executable then runs --dtype f64 on cuda; vouch build's --f64-kernels).
  bool f64Kernels = false;
};

struct ModelSourceInput {
  std::string sourceName; ///< the model file, for the header comment
  rt::ModelDescription description;
  BackendSource cpu;
  BackendSource cuda; ///< program == nullptr: a cpu-only executable
};

/// The parts of emitModelSource's file: compiled with -DVOUCH_PART=1 ..
/// kModelSourceParts, each is a translation unit of the program, and the
/// objects link into the executable. Part 1 holds the cpu kernels, the cpu
/// tables and the cubin and PTX; part 2 the runtime's heavier headers and
/// everything else.
inline constexpr int kModelSourceParts = 2;

/// A binary the executable carries (a Program's tables, the cubin, the
/// PTX) as a file: `file` is its name beside the source, which includes it
/// through the assembler (`.incbin`).
struct SourceBlob {
  std::string file, bytes;
};

/// The executable's whole C++ source: compiled as it is, it is the whole
/// program; NativeBuild compiles its parts side by side. With `blobs`, the
/// binaries are not string literals but files collected there, which the
/// source includes through the assembler: compile it with `-Xassembler
/// -I<their directory>` (vouch build does; g++ reads a literal at about 6
/// MB/s, GPT-2's cubin and PTX are 17 MB of it). Without, the file is
/// self-contained (`--emit=cpp`).
std::string emitModelSource(const ModelSourceInput &input,
                            std::vector<SourceBlob> *blobs = nullptr);

/// At most this many NVRTC programs per model: the executor's kernels and
/// up to kMaxCudaUnits - 1 groups of the program's kernels.
inline constexpr size_t kMaxCudaUnits = 64;

/// How many of a program's `kernelCount` kernels share a unit: 1 up to
/// kMaxCudaUnits - 1 kernels, else the fewest that keep the units at most
/// kMaxCudaUnits.
size_t kernelsPerCudaUnit(size_t kernelCount);

/// Whether a cuda backend built from `plan` can run f64 models at all: not
/// where its products round their operands (tf32, bf16), as
/// runtime/cuda/executor.h's cuda_program_backend decides from the same
/// ProductMath, so such a build has no use for f64 kernels (vouch build
/// refuses --f64-kernels with it).
bool cudaRunsF64(const AcceptedGraphPlan &plan);

/// `source` without its f64 entry points: each `extern "C" __global__ ...
/// <name>_f64(...) { ... }`, the form every kernel recipe writes them in,
/// removed with its body (what the f32 entries share, the library headers
/// and the op structs, stays). Fails where an entry's body does not close.
mlir::FailureOr<std::string> withoutF64Entries(const std::string &source);

/// `program`'s kernels as NVRTC programs that compile side by side, named
/// `<model>.<i>.cu`: unit 0 the executor's own kernels, then each kernel of
/// the table alone, or, past kMaxCudaUnits - 1 kernels, consecutive kernels
/// in groups of equal count (the split depends on the program only, not on
/// the machine, so the executable's images do not either).
/// Without `withF64`, the program kernels' f64 entry points are left out
/// (withoutF64Entries; the executor's own kernels keep theirs).
mlir::FailureOr<std::vector<CudaUnit>>
cudaKernelUnits(const ProgramBuilder &program, bool withF64 = true);

/// The units' sources one after another: one source of all the kernels
/// (what --emit-dir writes as kernels.cu; it compiles as one program too).
std::string cudaKernelSource(const ProgramBuilder &program);

/// The same, of the units as given.
std::string cudaKernelSource(const std::vector<CudaUnit> &units);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_MODELSOURCE_H
