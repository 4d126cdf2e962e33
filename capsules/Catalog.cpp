//===- Catalog.cpp - the capsules vouch ships -------------------*- C++ -*-===//
//
// Capsules are built from a few templates (as the seed's nativePointwise /
// nativeReduction / nativeAccumulation builders) and a per-op table. What a
// template cannot know (which tests cover which op) is written out per op.
//
//===----------------------------------------------------------------------===//
#include "capsules/Catalog.h"

#include <map>
#include <string>

#include "capsules/Evidence.h"

namespace vouch::capsules {

const std::vector<OpSpec> &computeOps() {
  using F = OpFamily;
  static const std::vector<OpSpec> ops = {
      {"fill", F::Generator, "every element equals the attribute `value`", false},
      {"matmul", F::Accumulation, "op(lhs)·op(rhs) per batch entry, op() transposing the last two axes when flagged", true},
      {"linear", F::Accumulation, "input·weightᵀ + bias per row, weight stored [out, in]", true},
      {"add", F::Pointwise, "lhs + rhs elementwise", true},
      {"sub", F::Pointwise, "lhs - rhs elementwise", true},
      {"mul", F::Pointwise, "lhs * rhs elementwise", true},
      {"relu", F::Pointwise, "max(x, 0) elementwise", true},
      {"step", F::Pointwise, "1 where x > 0, else 0, elementwise", true},
      {"scale", F::Pointwise, "input · factor elementwise", true},
      {"broadcast", F::View, "input axis i becomes result axis dims[i]; extent-1 axes repeat", true},
      {"reshape", F::View, "the same elements in row-major order, another shape", true},
      {"permute", F::View, "result axis i is input axis perm[i]", true},
      {"reduce_sum", F::Reduction, "sum over `axes`", true},
      {"reduce_mean", F::Reduction, "sum over `axes` divided by the reduced element count", true},
      {"mse_loss", F::Accumulation, "mean of (prediction - target)² over all elements", true},
  };
  return ops;
}

const OpSpec *findOpSpec(std::string_view op) {
  for (const OpSpec &spec : computeOps())
    if (spec.op == op)
      return &spec;
  return nullptr;
}

namespace {

bool sums(OpFamily family) {
  return family == OpFamily::Reduction || family == OpFamily::Accumulation;
}

ContractDescriptor contract(std::string claim, std::string summary,
                            Evidence evidence, Provenance provenance = {}) {
  return {std::move(claim), std::move(summary), std::move(evidence),
          std::move(provenance)};
}

/// The VJP contract is the same rule on every device: vouch owns backward
/// rules, and each op the rule builds is planned and gated on its own.
ContractDescriptor vjpContract(const OpSpec &spec) {
  if (!spec.hasVjp)
    return contract("no VJP: the op has no operands to differentiate",
                    "", uncitedEvidence(EvidenceKind::NotApplicable));
  return contract("vouch's VJP rule for vouch." + std::string(spec.op) +
                      ", built at compile time by vouch-autodiff; each op it "
                      "builds is planned and gated on its own",
                  "checked against central finite differences in float64",
                  citedEvidence(EvidenceKind::TestSuite, "gradcheck"),
                  {"ir/VouchOps.cpp", "VJPOpInterface::buildVJP", ""});
}

//===----------------------------------------------------------------------===//
// reference.<op>: cpu
//===----------------------------------------------------------------------===//

/// Ops computed by a function of runtime/cpu_kernels.h, with that function.
const std::map<std::string_view, std::string_view> &cpuKernelSymbols() {
  static const std::map<std::string_view, std::string_view> symbols = {
      {"matmul", "vouch::rt::matmul<T>"},
      {"linear", "vouch::rt::linear<T>"},
      {"broadcast", "vouch::rt::broadcast_in_dim<T>"},
      {"reduce_sum", "vouch::rt::reduce_sum<T>"},
      {"reduce_mean", "vouch::rt::reduce_sum<T>"},
      {"permute", "vouch::rt::permute<T>"},
      {"mse_loss", "vouch::rt::mse_loss<T>"},
  };
  return symbols;
}

/// Evidence for a reference capsule's value contract.
Evidence referenceValueEvidence(std::string_view op) {
  // cpu_kernels_test compares each kernel with independently written loops;
  // reduce_mean's division after the sum is not covered, so it cites none.
  if (op != "reduce_mean" && cpuKernelSymbols().count(op))
    return citedEvidence(EvidenceKind::TestSuite, "cpu-kernels");
  // The quickstart end-to-end test compares the first-step loss, which
  // flows through relu's forward loop.
  if (op == "relu")
    return citedEvidence(EvidenceKind::TestSuite, "cpu-build");
  return uncitedEvidence(EvidenceKind::NotProvided);
}

KernelCapsule referenceCapsule(const OpSpec &spec) {
  std::string op(spec.op);
  auto kernel = cpuKernelSymbols().find(spec.op);
  bool inKernels = kernel != cpuKernelSymbols().end();
  Provenance where =
      inKernels ? Provenance{"runtime/cpu_kernels.h", std::string(kernel->second),
                             op == "reduce_mean"
                                 ? "then divides by the reduced element count"
                                 : ""}
                : Provenance{"codegen/CpuEmitter.cpp", "",
                             spec.family == OpFamily::Pointwise
                                 ? "inline loop of the op's "
                                   "PointwiseOpInterface::emitScalarExpr"
                                 : "inline loop"};

  KernelCapsule c;
  c.name = "reference." + op;
  c.op = op;
  c.provider = Provider::Reference;
  c.device = Device::Cpu;
  c.trust = TrustLevel::Checked;
  c.supportsForward = true;
  c.vjpMode = spec.hasVjp ? VjpMode::BackendVjp : VjpMode::None;
  c.maxRank = 0; // int64 strides in std::vector: no limit
  c.acceptsTransposeFlags = op == "matmul";

  c.shape = contract("static shapes as the vouch." + op +
                         " verifier requires; any rank; int64 indexing",
                     "checked by the op verifier before planning",
                     citedEvidence(EvidenceKind::TestSuite, "ir-verifier"),
                     {"ir/VouchOps.cpp", "", ""});
  std::string layout = "dense row-major host buffers";
  if (c.acceptsTransposeFlags)
    layout += "; lhs and rhs read through trans_a / trans_b, never copied";
  c.layout = contract(
      layout,
      inKernels ? "the kernel walks flat buffers with row-major strides"
                : "one loop over the flat index",
      inKernels ? citedEvidence(EvidenceKind::TestSuite, "cpu-kernels")
                : referenceValueEvidence(op),
      where);
  std::string summary = sums(spec.family)
                            ? "sums fold left from index 0, starting at 0"
                            : "one loop, one rounding per element";
  c.value = contract(std::string(spec.formula) + ", in f32 or f64", summary,
                     referenceValueEvidence(op), where);
  c.vjp = vjpContract(spec);

  c.numeric.round = Rounding::NearestEven;
  c.numeric.subnormal = Subnormals::Preserved;
  c.numeric.contract = Contraction::None;
  c.numeric.reduce =
      sums(spec.family) ? ReductionOrder::LeftFold : ReductionOrder::None;
  return c;
}

//===----------------------------------------------------------------------===//
// native_cuda.<op>, cublas.matmul, cublaslt.linear: cuda
//===----------------------------------------------------------------------===//

const char *kCudaShapeClaim =
    " verifier requires; rank ≤ 8; every axis, index and element count "
    "fits the UInt32 CUDA ABI";

KernelCapsule cudaCapsule(const OpSpec &spec) {
  std::string op(spec.op);
  KernelCapsule c;
  c.op = op;
  c.device = Device::Cuda;
  c.trust = TrustLevel::Checked;
  c.supportsForward = true;
  c.vjpMode = spec.hasVjp ? VjpMode::BackendVjp : VjpMode::None;
  c.maxRank = 8;
  c.vjp = vjpContract(spec);

  c.numeric.round = Rounding::NearestEven;
  c.numeric.subnormal = Subnormals::ImplementationDefined;
  c.numeric.contract = Contraction::ImplementationDefined;
  // vouch's own reductions are fixed trees (no atomics); cuBLAS picks its
  // own (set below).
  c.numeric.reduce =
      sums(spec.family) ? ReductionOrder::FixedTree : ReductionOrder::None;

  Evidence gate = citedEvidence(EvidenceKind::TestSuite, "gate");
  Provenance gateSource{"passes/Gate.cpp", "", ""};

  if (op == "matmul" || op == "linear") {
    bool lt = op == "linear";
    c.name = lt ? "cublaslt.linear" : "cublas.matmul";
    c.provider = lt ? Provider::Cublaslt : Provider::Cublas;
    c.acceptsTransposeFlags = true;
    c.numeric.tf32Allowed = true;
    c.numeric.reduce = ReductionOrder::ImplementationDefined;
    std::string symbol =
        lt ? "cublasLtMatmul" : "cublasGemmEx / cublasGemmStridedBatchedEx";
    Provenance library{"codegen/CudaEmitter.cpp, runtime/cuda/blas.cc", symbol,
                       "NVIDIA's library: a trusted boundary below the "
                       "value contract"};
    c.shape = contract("static shapes as the vouch." + op + kCudaShapeClaim +
                           "; m, n, k and the batch fit cuBLAS's int",
                       "checked at compile time by the assurance gate", gate,
                       gateSource);
    c.layout = contract(
        lt ? "row-major x [rows, in] and W [out, in] read in place: y = "
             "x·Wᵀ + b as cublasLtMatmul(transa=T, transb=N, A=weight, "
             "B=input) with the bias epilogue"
           : "row-major operands read in place: C = op(lhs)·op(rhs) as "
             "column-major Cᵀ = op(rhs)ᵀ·op(lhs)ᵀ, transa / transb from the "
             "flags; no transposed copy",
        "the flag mapping is unit-tested; the calls run in the GPU suite",
        citedEvidence(EvidenceKind::TestSuite, "gemm-flags"),
        {"capsules/GemmCall.cpp", symbol, ""});
    c.value = contract(std::string(spec.formula) +
                           ", in f32; TF32 products only under the profile's "
                           "tf32 option",
                       "computed by cuBLAS (a trusted boundary); compared "
                       "with the cpu f64 reference by the GPU suite",
                       citedEvidence(EvidenceKind::TestSuite, "gpu-suite"),
                       library);
    return c;
  }

  c.name = "native_cuda." + op;
  c.provider = Provider::NativeCuda;
  Provenance kernel{"codegen/CudaSchedule.cpp",
                    "<model>_n<node>_" + op + " / <model>_b<node>_<k>_" + op,
                    "NVRTC: sm_90 cubin plus PTX"};
  c.shape = contract("static shapes as the vouch." + op + kCudaShapeClaim,
                     "checked at compile time by the assurance gate", gate,
                     gateSource);
  c.layout = contract("dense row-major device buffers, UInt32 flat indices",
                      "NVRTC compiles every emitted kernel; the GPU suite "
                      "runs them against the cpu f64 reference",
                      citedEvidence(EvidenceKind::TestSuite, "nvrtc"), kernel);
  std::string summary =
      sums(spec.family)
          ? "block reductions with a fixed tree and no atomics (two runs "
            "give the same bits); compared with the cpu f64 reference by "
            "the GPU suite"
          : "compared with the cpu f64 reference by the GPU suite";
  c.value = contract(std::string(spec.formula) + ", in the element type",
                     summary, citedEvidence(EvidenceKind::TestSuite, "gpu-suite"),
                     kernel);
  return c;
}

} // namespace

std::vector<KernelCapsule> referenceCatalog() {
  std::vector<KernelCapsule> out;
  for (const OpSpec &spec : computeOps())
    out.push_back(referenceCapsule(spec));
  return out;
}

std::vector<KernelCapsule> cudaCatalog() {
  std::vector<KernelCapsule> out;
  for (const OpSpec &spec : computeOps())
    out.push_back(cudaCapsule(spec));
  return out;
}

} // namespace vouch::capsules
