//===- Catalog.cpp - the capsules vouch ships -------------------*- C++ -*-===//
//
// Capsules are built from a few templates (as the seed's nativePointwise /
// nativeReduction / nativeAccumulation builders): one for the reference
// provider, one for native CUDA kernels, one for the BLAS libraries. What a
// template cannot know about an op (its formula, its cpu kernel, which tests
// cover it, who computes it on cuda) is the op's row of the op table, set in
// its ODS record.
//
//===----------------------------------------------------------------------===//
#include "capsules/Catalog.h"

#include <optional>
#include <string>

#include "capsules/Evidence.h"

namespace vouch::capsules {

std::vector<const OpFacts *> computeOpFacts() {
  std::vector<const OpFacts *> ops;
  for (const OpFacts &facts : opTable())
    if (facts.isPlanned())
      ops.push_back(&facts);
  return ops;
}

Expected<std::vector<Provider>> cudaProvidersOf(const OpFacts &facts) {
  std::vector<Provider> providers;
  for (std::string_view name : splitList(facts.cudaProviders)) {
    Expected<Provider> provider = parseProvider(name);
    if (!provider)
      return Error{"vouch." + std::string(facts.mnemonic) + ": " +
                   provider.error()};
    providers.push_back(*provider);
  }
  return providers;
}

std::string capsuleName(Provider provider, std::string_view op) {
  std::string name(toString(provider));
  for (char &c : name)
    if (c == '-')
      c = '_';
  return name + "." + std::string(op);
}

namespace {

/// Whether the op sums (its numerical policy then fixes a reduction order):
/// by its family, or by its own record (OpFacts::sums).
bool sums(const OpFacts &spec) {
  OpFamily family = spec.family;
  return spec.sums || family == OpFamily::Reduction || family == OpFamily::Loss ||
         family == OpFamily::Gemm || family == OpFamily::Normalization ||
         family == OpFamily::BatchNormalization ||
         family == OpFamily::Attention || family == OpFamily::Convolution;
}

/// The evidence a table key names, or not-provided for an empty key.
Evidence evidenceFor(std::string_view key) {
  return key.empty() ? uncitedEvidence(EvidenceKind::NotProvided)
                     : citedEvidence(EvidenceKind::TestSuite, key);
}

ContractDescriptor contract(std::string claim, std::string summary,
                            Evidence evidence, Provenance provenance = {}) {
  return {std::move(claim), std::move(summary), std::move(evidence),
          std::move(provenance)};
}

/// The VJP contract is the same rule on every device: vouch owns backward
/// rules, and each op the rule builds is planned and gated on its own.
ContractDescriptor vjpContract(const OpFacts &spec) {
  if (!spec.hasVjp)
    return contract("no VJP: the op has no operands to differentiate",
                    "", uncitedEvidence(EvidenceKind::NotApplicable));
  return contract("vouch's VJP rule for vouch." + std::string(spec.mnemonic) +
                      ", built at compile time by vouch-autodiff; each op it "
                      "builds is planned and gated on its own",
                  "checked against central finite differences in float64",
                  citedEvidence(EvidenceKind::TestSuite, "gradcheck"),
                  {"ir/VouchOps.cpp", "VJPOpInterface::buildVJP", ""});
}

/// What NVRTC's -fmad (kNativeCudaFmad) lets vouch's kernels do.
Contraction nativeContraction() {
  return kNativeCudaFmad ? Contraction::FusedMultiplyAdd : Contraction::None;
}

/// vouch's own cuda kernel for an op family: where it comes from (its
/// recipe and the kernel library template it instantiates), what the GPU
/// suite checks of its values, and the order in which it sums.
struct NativeKernel {
  Provenance provenance;
  const char *valueSummary;
  ReductionOrder reduce;
};

NativeKernel nativeKernel(OpFamily family) {
  const char *nvrtc = "NVRTC: sm_90 cubin plus PTX";
  const char *compared = "compared with the cpu f64 reference by the GPU suite";
  const char *tree = "block reductions in a fixed order (halving trees, or warp "
                     "butterflies then the warps in order) and no float atomics "
                     "(a multi-block loss adds its blocks' partials in block "
                     "order in its last block; two runs give the same bits); "
                     "compared with the cpu f64 reference by the GPU suite";
  switch (family) {
  case OpFamily::Reduction:
    return {{"codegen/recipes/ReductionRecipe.cpp, runtime/cuda/kernels/reduce.cuh",
             "vouch::reduce_sum_kernel / vouch::column_sum_kernel / "
             "vouch::reduce_extreme_kernel",
             nvrtc},
            tree, ReductionOrder::FixedTree};
  case OpFamily::Index:
    return {{"codegen/recipes/IndexRecipe.cpp, runtime/cuda/kernels/index.cuh",
             "vouch::gather_kernel / vouch::gather_quads_kernel",
             "NVRTC: sm_90 cubin plus PTX; a rank-0 input is broadcast inside "
             "a fused pointwise kernel instead"},
            compared, ReductionOrder::None};
  case OpFamily::Loss:
    return {{"codegen/recipes/LossRecipe.cpp, runtime/cuda/kernels/loss.cuh",
             "vouch::mse_loss_kernel", nvrtc},
            tree, ReductionOrder::FixedTree};
  case OpFamily::Gemm:
    return {{"codegen/recipes/GemmRecipe.cpp, runtime/cuda/kernels/matmul.cuh",
             "vouch::small_product_kernel / vouch::small_linear_kernel",
             "NVRTC: sm_90 cubin plus PTX; planned only for products the "
             "profile's small-product rule covers"},
            "one thread per output, its k products folded left from index 0 "
            "as the cpu reference does, no atomics (two runs give the same "
            "bits); checked bit for bit by the kernel lab and against the cpu "
            "f64 reference by the GPU suite",
            ReductionOrder::LeftFold};
  case OpFamily::Normalization:
    return {{"codegen/recipes/NormalizationRecipe.cpp, "
             "runtime/cuda/kernels/softmax.cuh, runtime/cuda/kernels/layernorm.cuh",
             "vouch::softmax_kernel / vouch::softmax_grad_kernel / "
             "vouch::layer_norm_kernel / vouch::layer_norm_grad_kernel",
             nvrtc},
            "a warp or a block per row (rows of up to 4096 held in registers; "
            "longer contiguous ones staged in shared memory by a cluster of two "
            "blocks, half a row each, and read once where the launch has the "
            "memory, else a block per row reading it twice), its statistics "
            "(max, sums) folded per thread and combined in a fixed order (warp "
            "butterflies then the warps in order, halving trees on the general "
            "paths, a staged row's halves in rank order; layer_norm_grad's "
            "column sums per block, then added in two levels by the last "
            "blocks to arrive) with no atomics, in the element type (two runs "
            "give the same bits); checked by the kernel lab and compared with "
            "the cpu f64 reference by the GPU suite",
            ReductionOrder::FixedTree};
  case OpFamily::BatchNormalization:
    return {{"codegen/recipes/BatchNormRecipe.cpp, runtime/cuda/kernels/batchnorm.cuh",
             "vouch::batch_norm_kernel / vouch::batch_norm_grad_kernel", nvrtc},
            "a channel per block of 512, or per thread-block cluster of 8 where "
            "a channel has at least 32768 elements and there are at most 256 "
            "channels (a rule of the shape, not the device); statistics and "
            "each element's arithmetic in double, rounded to the element type "
            "once: each thread folds its elements in index order, a fixed "
            "halving tree adds a block's threads, a cluster's blocks are added "
            "in rank order through distributed shared memory (every block gets "
            "the same bits), no atomics (two runs give the same bits); checked "
            "by the kernel lab against a double reference and compared with "
            "the cpu f64 reference by the GPU suite",
            ReductionOrder::FixedTree};
  case OpFamily::Attention:
    return {{"codegen/recipes/AttentionRecipe.cpp, "
             "runtime/cuda/kernels/attention.cuh",
             "vouch::attention_forward_kernel / vouch::attention_delta_kernel / "
             "vouch::attention_dkdv_kernel / vouch::attention_dq_kernel "
             "(f32 under products=tf32 / bf16: their *_tf32_kernel / "
             "*_bf16_kernel twins, mma.sync on tensor cores)",
             nvrtc},
            "the online softmax: each query's keys in ascending tiles, its "
            "running max and sum rescaled as the max grows, in the element "
            "type (f32 under products=tf32 / bf16: the tile products' "
            "operands rounded to TF32 / bf16, their sums in f32; with heads of "
            "at most 64 (attention64.cuh) each exponential e^x the hardware's "
            "2^x of x·log2 e, ex2.approx, about 2 ulp); the "
            "gradient's dk and dv summed over the queries, and dq "
            "over the keys, in ascending tiles by the one block that writes "
            "them (no atomics: two runs give the same bits); checked by the "
            "kernel lab against a float64 reference and compared with the cpu "
            "f64 reference by the GPU suite",
            ReductionOrder::FixedTree};
  case OpFamily::Pool:
    // Each op names its own kernel (cudaKernel); the summing ones (sums = 1)
    // state the left fold each thread's sequence is.
    return {{"codegen/recipes/PoolRecipe.cpp, runtime/cuda/kernels/pool.cuh",
             "vouch::max_pool_kernel / vouch::avg_pool_kernel / "
             "vouch::smooth_max_pool_kernel and their *_grad_kernel",
             nvrtc},
            "one thread per window (forward) or per input element (gradients: "
            "the windows covering it in ascending order), its terms folded "
            "left from 0 in the cpu kernels' order, no atomics (two runs give "
            "the same bits); checked by the kernel lab and compared with the "
            "cpu f64 reference by the GPU suite",
            ReductionOrder::None};
  case OpFamily::Convolution:
    // Its op names its kernel (cudaKernel) and says how it sums
    // (cudaKernelNote).
    return {{"codegen/recipes/ConvRecipe.cpp, "
             "runtime/cuda/kernels/col2im_matmul.cuh",
             "vouch::col2im_matmul_kernel", nvrtc},
            "checked by the kernel lab against a float64 reference and "
            "compared with the cpu f64 reference by the GPU suite",
            ReductionOrder::FixedTree};
  case OpFamily::View:
    return {{"codegen/recipes/ViewRecipe.cpp", "",
             "no kernel: the result aliases the input's buffer"},
            compared, ReductionOrder::None};
  default:
    return {{"codegen/recipes/PointwiseRecipe.cpp, runtime/cuda/kernels/pointwise.cuh",
             "vouch::pointwise_kernel (vouch_pointwise_<ops>)", nvrtc},
            compared, ReductionOrder::None};
  }
}

//===----------------------------------------------------------------------===//
// reference.<op>: cpu
//===----------------------------------------------------------------------===//

KernelCapsule referenceCapsule(const OpFacts &spec) {
  std::string op(spec.mnemonic);
  bool inKernels = !spec.cpuKernel.empty();
  Provenance where =
      inKernels ? Provenance{"runtime/cpu_kernels.h", std::string(spec.cpuKernel),
                             std::string(spec.cpuKernelNote)}
                : spec.family == OpFamily::View
                ? Provenance{"codegen/recipes/ViewRecipe.cpp", "",
                             "no loop: the result aliases the input's buffer"}
                : Provenance{"codegen/recipes/PointwiseRecipe.cpp", "",
                             spec.family == OpFamily::Pointwise
                                 ? "a loop over the op's "
                                   "PointwiseOpInterface::emitScalarExpr"
                                 : "a loop"};
  // cpu_kernels_test walks every kernel of runtime/cpu_kernels.h over its
  // layouts; the value evidence is the row's own (cpuEvidence).
  Evidence value = evidenceFor(spec.cpuEvidence);

  KernelCapsule c;
  c.name = "reference." + op;
  c.op = op;
  c.provider = Provider::Reference;
  c.device = Device::Cpu;
  c.trust = TrustLevel::Checked;
  c.supportsForward = true;
  c.vjpMode = spec.hasVjp ? VjpMode::BackendVjp : VjpMode::None;
  c.maxRank = 0; // int64 strides in std::vector: no limit
  c.acceptsTransposeFlags = spec.transposeFlags;

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
      inKernels ? citedEvidence(EvidenceKind::TestSuite, "cpu-kernels") : value,
      where);
  std::string summary = sums(spec)
                            ? "folds left from index 0 in row-major order "
                              "(sums start at 0)"
                            : "one loop, one rounding per element";
  c.value = contract(std::string(spec.formula) + ", in f32 or f64", summary,
                     value, where);
  c.vjp = vjpContract(spec);

  c.numeric.round = Rounding::NearestEven;
  c.numeric.subnormal = Subnormals::Preserved;
  c.numeric.contract = Contraction::None;
  c.numeric.reduce =
      sums(spec) ? ReductionOrder::LeftFold : ReductionOrder::None;
  return c;
}

//===----------------------------------------------------------------------===//
// native_cuda.<op>, cublas.matmul, cublaslt.linear: cuda
//===----------------------------------------------------------------------===//

const char *kCudaShapeClaim =
    " verifier requires; rank ≤ 8; every axis, index and element count "
    "fits the UInt32 CUDA ABI";

/// The cuBLAS handle's configuration, under which its summation order is
/// the same run to run (runtime/cuda/blas.h).
const char *kCublasConfiguration =
    "atomics off (CUBLAS_ATOMICS_NOT_ALLOWED), the handle's fixed 32 MiB "
    "workspace, one call at a time (never side by side in a graph)";

/// The BLAS calls vouch makes for products (capsules/GemmCall.h): which
/// entry points, how they read row-major operands, and the configuration
/// of the calls (every cuBLAS call shares the handle's).
struct BlasTemplate {
  Provider provider;
  const char *op;
  const char *symbol;
  const char *layout;
  const char *configuration = kCublasConfiguration;
  /// What the value contract says besides the product (a second result).
  const char *valueNote = "";
};
const BlasTemplate kBlasTemplates[] = {
    {Provider::Cublas, "matmul", "cublasGemmEx / cublasGemmStridedBatchedEx",
     "row-major operands read in place: C = op(lhs)·op(rhs) as "
     "column-major Cᵀ = op(rhs)ᵀ·op(lhs)ᵀ, transa / transb from the "
     "flags; no transposed copy"},
    {Provider::Cublaslt, "linear", "cublasLtMatmul",
     "row-major x [rows, in] and W [out, in] read in place: y = "
     "x·Wᵀ + b as cublasLtMatmul(transa=T, transb=N, A=weight, "
     "B=input) with the bias epilogue",
     "a fixed 32 MiB workspace, split-K reductions none, compute-type or "
     "output-type only (in-place excluded), one algorithm pinned per shape, "
     "one call at a time; where cuBLASLt offers no such algorithm for the "
     "bias epilogue (its answer for that shape and type), the step runs "
     "cublasGemmEx plus a bias-broadcast GEMM with atomics off instead, "
     "and the tape and --audit-launches say so with cuBLASLt's reason",
     "; under the bf16 option a linear of bf16 operands whose result only "
     "bf16 readers take, where nothing pads its output (the op table's "
     "bf16Result; its call names `D bf16`), has cuBLASLt store y as bf16 (D = "
     "CUDA_R_16BF, the f32 sums rounded by its epilogue), no f32 y written; "
     "its bias, if any, is then read rounded to bf16 (a vouch.round_bf16, as "
     "autocast rounds it; the call names `bias bf16`: CUDA 13.0 stores no "
     "bf16 D beside an f32 bias) and added to the f32 sums before the "
     "rounding (measured bitwise the f32 D of the same values, the bias's as "
     "f32, rounded to nearest even, with and without a bias, at GPT-2's four "
     "linear shapes on an H100: tools/bench/linear_bf16_out.cu); where "
     "cuBLASLt refuses a bf16 D, the f32 "
     "linear of the same values goes to the executor's scratch (with a bias: "
     "cublasGemmEx and the bias-broadcast GEMM of bf16 operands) and one "
     "vouch_round_bf16 launch rounds it into y, as the tape and "
     "--audit-launches say"},
    {Provider::Cublaslt, "linear_weight_grad", "cublasLtMatmul",
     "row-major grad [rows, out] and input [rows, in] read in place: "
     "weight_grad = gradᵀ·input as cublasLtMatmul(transa=N, transb=T, "
     "A=input, B=grad) with the BGRADB epilogue writing bias_grad (B's sums "
     "over k = rows); no transposed copy",
     "a fixed 32 MiB workspace, split-K reductions none, compute-type or "
     "output-type only (in-place excluded), one algorithm pinned per shape, "
     "one call at a time; where cuBLASLt offers no such algorithm for the "
     "BGRADB epilogue, the step runs cublasGemmEx for weight_grad and "
     "column-sum GEMMs of grad with a column of ones for bias_grad (atomics "
     "off) instead, and the tape and --audit-launches say so with cuBLASLt's "
     "reason",
     "; bias_grad sums grad as the product reads it: its f32 values under "
     "fp32 and the tf32 option (the epilogue reads them before the tensor "
     "cores round them), its bf16 roundings under the bf16 option, in f32"},
};

/// The cuda capsule of `spec` by `provider`, or nothing where no template
/// covers the pair (a BLAS library computes products only; cuFFT and
/// LibTorch have none).
std::optional<KernelCapsule> cudaCapsule(const OpFacts &spec,
                                         Provider provider) {
  std::string op(spec.mnemonic);
  KernelCapsule c;
  c.name = capsuleName(provider, op);
  c.op = op;
  c.provider = provider;
  c.device = Device::Cuda;
  c.trust = TrustLevel::Checked;
  c.supportsForward = true;
  c.vjpMode = spec.hasVjp ? VjpMode::BackendVjp : VjpMode::None;
  c.maxRank = 8;
  c.vjp = vjpContract(spec);

  c.numeric.round = Rounding::NearestEven;
  c.numeric.subnormal = Subnormals::ImplementationDefined;
  c.numeric.contract = Contraction::ImplementationDefined;

  Evidence gate = citedEvidence(EvidenceKind::TestSuite, "gate");
  Provenance gateSource{"passes/Gate.cpp", "", ""};
  Evidence value = evidenceFor(spec.cudaEvidence);

  for (const BlasTemplate &blas : kBlasTemplates) {
    if (blas.provider != provider || op != blas.op)
      continue;
    c.acceptsTransposeFlags = true;
    // bf16 by rounded operand copies (the executor's vouch_round_bf16), not
    // cuBLAS's COMPUTE_32F_FAST_16BF, which was measured to keep bits bf16
    // drops (runtime/cuda/gemm_call.h).
    c.numeric.fastestProducts = ProductPrecision::Bf16;
    c.numeric.reduce = ReductionOrder::LibraryFixed;
    Provenance library{"runtime/cuda/executor.cc, runtime/cuda/blas.cc",
                       blas.symbol,
                       "NVIDIA's library: a trusted boundary below the "
                       "value contract"};
    c.shape = contract("static shapes as the vouch." + op + kCudaShapeClaim +
                           "; m, n, k and the batch fit cuBLAS's int",
                       "checked at compile time by the assurance gate", gate,
                       gateSource);
    c.layout = contract(
        blas.layout,
        "the flag mapping is unit-tested; the calls run in the GPU suite",
        citedEvidence(EvidenceKind::TestSuite, "gemm-flags"),
        {"capsules/GemmCall.cpp", blas.symbol, ""});
    c.value = contract(std::string(spec.formula) +
                           ", in the element type (f32: CUBLAS_COMPUTE_32F; "
                           "under the profile's tf32 option its operands "
                           "rounded to TF32 (COMPUTE_32F_FAST_TF32), a "
                           "row-pitch extent (N; M when A is transposed; K "
                           "when A is not, or B is) that is not a multiple "
                           "of 4 padded with zeros: the operands it spans "
                           "copied "
                           "by vouch_repitch_f32 launches into the "
                           "executor's scratch, a padded output copied out "
                           "by one; under "
                           "its bf16 option each operand first rounded to "
                           "bf16, nearest even: a bf16 value (vouch."
                           "round_bf16's) read in place, else by a "
                           "vouch_round_bf16 launch "
                           "into the executor's scratch (its row-pitch "
                           "extents padded to multiples of 8 with zeros, a "
                           "padded output "
                           "copied out by vouch_repitch_f32), and read as "
                           "CUDA_R_16BF, products and sums in f32, the "
                           "result f32; each step's call names its padding; "
                           "the added products are 0 · 0 or land outside "
                           "the output; f64: "
                           "CUBLAS_COMPUTE_64F); summed in the "
                           "library's own order, "
                           "the same bits run to run on one GPU model with "
                           "one toolkit version under vouch's configuration: " +
                           blas.configuration + blas.valueNote +
                           "; not promised across GPU models or toolkit "
                           "versions, nor equal to the cpu left fold",
                       "computed by cuBLAS, a trusted boundary whose "
                       "run-to-run reproducibility under this configuration "
                       "NVIDIA documents; compared with the cpu f64 "
                       "reference, and split-K-prone products run twice "
                       "bitwise, by the GPU suite",
                       value, library);
    return c;
  }
  if (provider != Provider::NativeCuda)
    return std::nullopt;

  NativeKernel native = nativeKernel(spec.family);
  // An op with a kernel of its own, not its family's (slice, concat).
  if (!spec.cudaKernel.empty())
    native.provenance = {std::string(spec.cudaKernelSource),
                         std::string(spec.cudaKernel), "NVRTC: sm_90 cubin plus PTX"};
  c.acceptsTransposeFlags = spec.transposeFlags;
  c.numeric.reduce = native.reduce;
  // A summing op of a non-summing family: each output's thread adds its terms
  // in ascending index order, as the cpu left fold does.
  if (spec.sums && native.reduce == ReductionOrder::None)
    c.numeric.reduce = ReductionOrder::LeftFold;
  // An op whose record says contraction "none" writes its formula with
  // intrinsics NVRTC never contracts (gelu: runtime/cuda/kernels/gelu.cuh),
  // so -fmad does not reach it, fused or alone.
  bool uncontracted = spec.contraction == "none";
  c.numeric.contract = uncontracted ? Contraction::None : nativeContraction();
  std::string shapeClaim = "static shapes as the vouch." + op + kCudaShapeClaim;
  // The fused attention's f32 kernels compute their products on tensor
  // cores under the profile's tf32 or bf16 option (attention.cuh's *_tf32 and
  // *_bf16 kernels; attention64.cuh's for heads of at most 64).
  if (spec.family == OpFamily::Attention)
    c.numeric.fastestProducts = ProductPrecision::Bf16;
  // The implicit-GEMM convolution's f32 kernel has a TF32 twin
  // (col2im_matmul.cuh); a bf16 profile runs it in TF32, as its report says.
  if (spec.family == OpFamily::Convolution)
    c.numeric.fastestProducts = ProductPrecision::Tf32;
  if (spec.family == OpFamily::Attention)
    shapeClaim += "; heads (q's and v's feature extents) of at most " +
                  std::to_string(kMaxAttentionHeadDim) +
                  " (runtime/cuda/kernels/attention.cuh's kAttentionMaxHeadDim)";
  c.shape = contract(shapeClaim, "checked at compile time by the assurance gate",
                     gate, gateSource);
  std::string layout = "dense row-major device buffers; flat indices in 64-bit "
                       "(long long) arithmetic, divided in 32 bits where both "
                       "operands fit";
  if (c.acceptsTransposeFlags)
    layout += "; lhs and rhs read through trans_a / trans_b, never copied";
  c.layout = contract(layout,
                      "NVRTC compiles every emitted kernel; the GPU suite "
                      "runs them against the cpu f64 reference",
                      citedEvidence(EvidenceKind::TestSuite, "nvrtc"),
                      native.provenance);
  std::string valueSummary = native.valueSummary;
  if (!spec.cudaKernelNote.empty())
    valueSummary += "; " + std::string(spec.cudaKernelNote);
  // A product's bf16 result is cuBLASLt's (cudaCapsule's library template
  // says so): the small-product kernel stores f32 only.
  if (spec.bf16Result >= 0 && spec.family != OpFamily::Gemm)
    valueSummary += "; under the profile's bf16 option, where only bf16 products read "
                    "result " + std::to_string(spec.bf16Result) + " (vouch-round-bf16-"
                    "operands), the kernel stores it as bf16, each value computed in "
                    "the element type and rounded to nearest even as it is stored (the "
                    "kernel lab checks it bitwise against the stored f32 value rounded)";
  if (spec.bf16Twin >= 0)
    valueSummary +=
        "; under the profile's bf16 option, where bf16 products read result " +
        std::to_string(spec.bf16Twin) +
        " rounded and other ops read its f32 value, the vouch.round_bf16 of it "
        "(vouch-round-bf16-operands's) is fused with the op (`fused=` in the "
        "plan): the kernel stores the result twice, as f32 and as its bf16 twin, "
        "each twin value the f32 value rounded to nearest even as it is stored "
        "(the kernel lab checks the twin bitwise against the stored f32 value "
        "rounded), and the rounding has no launch of its own";
  if (uncontracted)
    valueSummary += "; every product and sum of the formula rounds on its own "
                    "(__fmul_rn / __fadd_rn / __dmul_rn / __dadd_rn, never "
                    "contracted by NVRTC; the PTX is checked for fma by "
                    "//tests:nvrtc_kernels_test)";
  c.value = contract(std::string(spec.formula) + ", in the element type",
                     valueSummary, value, native.provenance);
  return c;
}

//===----------------------------------------------------------------------===//
// The step's own work: batch selection and the optimizer
//===----------------------------------------------------------------------===//

/// What each optimizer computes per element (the train clause's
/// hyper-parameters; t is the 1-based step count).
struct OptimizerRule {
  std::string_view name;
  const char *formula;
};
const OptimizerRule kOptimizerRules[] = {
    {"sgd", "g' = g + wd·p (when wd ≠ 0); buf = g' at t = 1, else momentum·buf "
            "+ g' (when momentum ≠ 0, else buf = g'); p -= lr·buf (PyTorch's "
            "SGD)"},
    {"adam", "g' = g + wd·p (L2, when wd ≠ 0); m = β1·m + (1-β1)·g'; v = β2·v "
             "+ (1-β2)·g'²; p -= lr·(m/(1-β1^t)) / (√(v/(1-β2^t)) + eps) "
             "(PyTorch's Adam)"},
    {"adamw", "p -= lr·wd·p first (decoupled decay), then Adam's update "
              "without L2 (PyTorch's AdamW)"},
    {"rmsprop", "g' = g + wd·p (when wd ≠ 0); v = α·v + (1-α)·g'²; d = g' / "
                "(√v + eps); buf = momentum·buf + d, d = buf (when momentum ≠ "
                "0); p -= lr·d (PyTorch's RMSprop, centered=False)"},
    {"adagrad", "g' = g + wd·p (when wd ≠ 0); v += g'²; p -= lr / (1 + "
                "(t-1)·lr_decay) · g' / (√v + eps) (PyTorch's Adagrad)"},
};

// Every optimizer's lr is that of the step under the clause's schedule.
constexpr const char *kScheduleFormula =
    "; lr of step i = lr_at(i) (constant; step: lr·γ^⌊i/step_size⌋; "
    "exponential: lr·γ^i; warmup_cosine: lr·i/warmup for i < warmup, then "
    "min_lr + (lr - min_lr)·(1 + cos(π·min(1, (i-warmup)/(total-warmup))))/2), "
    "computed in double from the step counter";

KernelCapsule stepCapsule(Device device, std::string op) {
  Provider provider = *stepProvider(device);
  KernelCapsule c;
  c.name = capsuleName(provider, op);
  c.op = std::move(op);
  c.provider = provider;
  c.device = device;
  c.trust = TrustLevel::Checked;
  c.supportsForward = true;
  c.vjpMode = VjpMode::None;
  c.maxRank = 0;
  c.vjp = contract("no VJP: the step's own work is not differentiated", "",
                   uncitedEvidence(EvidenceKind::NotApplicable));
  c.numeric.round = Rounding::NearestEven;
  c.numeric.reduce = ReductionOrder::None;
  if (device == Device::Cuda) {
    c.numeric.subnormal = Subnormals::ImplementationDefined;
    c.numeric.contract = nativeContraction();
  } else {
    c.numeric.subnormal = Subnormals::Preserved;
    c.numeric.contract = Contraction::None;
  }
  return c;
}

KernelCapsule selectBatchCapsule(Device device) {
  KernelCapsule c = stepCapsule(device, std::string(kSelectBatchWork));
  bool cuda = device == Device::Cuda;
  Provenance where =
      cuda ? Provenance{"runtime/cuda/kernels/executor.cuh",
                        "vouch_select_batch_<t>",
                        "one launch per step copies every data field (kept "
                        "in one block, as 32-bit words); the batch index and "
                        "epoch are read from the device step counter, a "
                        "shuffled epoch's rows computed by shuffle.h"}
           : Provenance{"runtime/train_main.cc, runtime/executor.cc",
                        "Run<T>::training_batch, "
                        "CpuProgramModel<T>::forward_fields",
                        "memcpy of each data field's host rows (gathered "
                        "row by row for a shuffled epoch)"};
  Evidence tested = citedEvidence(EvidenceKind::TestSuite,
                                  cuda ? "cuda-executor" : "cpu-executor");
  c.shape = contract("the model's data fields (inputs, then targets; f32, f64 "
                     "or i32); the dataset holds num_batches whole batches",
                     "checked when the data are loaded", tested, where);
  c.layout = contract(cuda ? "dense row-major device buffers; the whole dataset "
                             "resident on the device, uploaded once"
                           : "dense row-major host buffers",
                      "a flat element copy", tested, where);
  c.value = contract("step k trains on batch b = k mod num_batches of epoch "
                     "k div num_batches: its rows in file order or, with the "
                     "train clause's shuffle, rows shuffled_row(b·batch + j, "
                     "rows, seed, epoch) (runtime/cuda/kernels/shuffle.h, the "
                     "same function on cpu and cuda); each field's rows copied "
                     "exactly (int32 fields as int32) into the field's buffer",
                     cuda ? "a copy (no arithmetic); training matches the cpu "
                            "executor step by step"
                          : "a copy (no arithmetic)",
                     tested, where);
  return c;
}

KernelCapsule selectWindowsCapsule(Device device) {
  KernelCapsule c = stepCapsule(device, std::string(kSelectWindowsWork));
  bool cuda = device == Device::Cuda;
  Provenance where =
      cuda ? Provenance{"runtime/cuda/kernels/executor.cuh, "
                        "runtime/cuda/kernels/token_windows.h",
                        "vouch_select_windows_<t>",
                        "one launch per step; the windows' starts computed "
                        "from the device step counter (token_windows.h), the "
                        "tokens read over the bus from the file's mapping, "
                        "registered with cudaHostRegister (read-only, mapped), "
                        "or from mapped pinned memory where registering is "
                        "refused (--mem-stats says which)"}
           : Provenance{"runtime/tokens.cc, runtime/cuda/kernels/token_windows.h",
                        "vouch::rt::fill_token_batch",
                        "the windows copied from the file's mapping"};
  Evidence tested = citedEvidence(EvidenceKind::TestSuite,
                                  cuda ? "gpu-suite" : "tokens");
  c.shape = contract("one i32 input and one i32 target of [batch, T]; the "
                     "token file (llm.c .bin or 1-D npy, uint16 / uint32 / "
                     "int32) holds at least T + 1 tokens, each below the "
                     "vocabulary",
                     "checked when the file is opened", tested, where);
  c.layout = contract(cuda ? "the token file stays in host memory (never "
                             "uploaded whole); the batch buffers are dense "
                             "row-major device buffers"
                           : "dense row-major host buffers",
                      "a copy of T + 1 tokens per row, converted to int32",
                      tested, where);
  c.value = contract("step k, row r: the window of T + 1 tokens at start "
                     "n·T, n = (k·batch + r) mod floor((N - 1) / T) "
                     "(sequential), or at a start drawn from the run seed, k "
                     "and r (random; token_windows.h, the same function on "
                     "cpu and cuda); input = its first T tokens, target = its "
                     "last T",
                     "a copy (no arithmetic)", tested, where);
  return c;
}

KernelCapsule optimizerCapsule(Device device, const OptimizerRule &rule) {
  KernelCapsule c = stepCapsule(device, optimizerWork(rule.name));
  bool cuda = device == Device::Cuda;
  Provenance where =
      cuda ? Provenance{"runtime/cuda/kernels/optimizer.cuh, "
                        "runtime/cuda/kernels/executor.cuh",
                        "vouch_optimizer_<t>",
                        "one launch for every parameter (blockIdx.y selects "
                        "it); its last block to finish stores the step's loss "
                        "into the loss ring (pinned host memory, read by the "
                        "host after cudaStreamSynchronize at log points: no "
                        "copy call) and advances the device step counter"}
           : Provenance{"runtime/optim.cc", "vouch::rt::Optimizer<T>::step",
                        "a loop over every parameter's elements"};
  Evidence tested = citedEvidence(EvidenceKind::TestSuite,
                                  cuda ? "cuda-executor" : "optimizer");
  c.shape = contract("every parameter and its gradient, m and v of the same "
                     "element count",
                     cuda ? "the executor sizes the state from the program's "
                            "parameter table"
                          : "the optimizer is built from the parameter sizes",
                     tested, where);
  c.layout = contract(cuda ? "dense device buffers, one ParamSlot (p, g, m, v, "
                             "n) per parameter, 64-bit element indices"
                           : "dense host buffers, 64-bit element indices",
                      "elementwise: each element updated independently",
                      tested, where);
  c.value = contract(std::string(rule.formula) + kScheduleFormula +
                         (cuda ? " read from device memory" : "") +
                         "; with clipping, g scaled by the clip_grad_norm "
                         "coefficient first; hyper-parameters in double, "
                         "element math in the element type",
                     cuda ? "matches the host optimizer (runtime/optim.cc) "
                            "for every optimizer kind"
                          : "two steps of each kind against values computed "
                            "in Python (float64)",
                     tested, where);
  return c;
}

KernelCapsule clipCapsule(Device device) {
  KernelCapsule c = stepCapsule(device, std::string(kClipGradNormWork));
  bool cuda = device == Device::Cuda;
  // A sum over every gradient element: a fixed order on both devices.
  c.numeric.reduce = cuda ? ReductionOrder::FixedTree : ReductionOrder::LeftFold;
  Provenance where =
      cuda ? Provenance{"runtime/cuda/kernels/optimizer.cuh, "
                        "runtime/cuda/kernels/executor.cuh",
                        "vouch_grad_norm_<t>",
                        "a fixed grid of 256 blocks of 256 threads before the "
                        "optimizer: each thread sums a fixed share of g² in "
                        "double, a fixed shared-memory tree combines each "
                        "block's, and the last block to finish adds the "
                        "blocks' sums in block order by the same tree (no "
                        "float atomics: an integer ticket picks that block, "
                        "never an order); the norm and coefficient stay in "
                        "device memory for the optimizer launch"}
           : Provenance{"runtime/optim.cc", "vouch::rt::Optimizer<T>::step",
                        "the norm summed in double in parameter order, then "
                        "the update reads g·coef"};
  Evidence tested = citedEvidence(EvidenceKind::TestSuite,
                                  cuda ? "cuda-executor" : "optimizer");
  c.shape = contract("every parameter's gradient; one scalar norm",
                     "the parameter table", tested, where);
  c.layout = contract(cuda ? "dense device buffers through the optimizer's "
                             "ParamSlots; [norm, coefficient] as two doubles"
                           : "dense host buffers",
                      "a sum over every element", tested, where);
  c.value = contract("norm = √(Σ over every gradient element of g²) in "
                     "double; coef = max_norm / (norm + 1e-6) when below 1, "
                     "else 1; the update uses g·coef (torch.nn.utils."
                     "clip_grad_norm_); the gradients are not rewritten",
                     cuda ? "matches the host optimizer with the same "
                            "clipping; bitwise repeatable"
                          : "steps against PyTorch's clip_grad_norm_ "
                            "(float64)",
                     tested, where);
  return c;
}

} // namespace

const std::vector<std::string_view> &stepOptimizers() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const OptimizerRule &rule : kOptimizerRules)
      out.push_back(rule.name);
    return out;
  }();
  return names;
}

std::string optimizerWork(std::string_view optimizer) {
  return std::string(optimizer) + "_step";
}

std::optional<Provider> stepProvider(Device device) {
  switch (device) {
  case Device::Cpu:
    return Provider::Reference;
  case Device::Cuda:
    return Provider::NativeCuda;
  default:
    return std::nullopt;
  }
}

std::vector<KernelCapsule> stepCatalog() {
  std::vector<KernelCapsule> out;
  for (Device device : {Device::Cpu, Device::Cuda}) {
    out.push_back(selectBatchCapsule(device));
    out.push_back(selectWindowsCapsule(device));
    for (const OptimizerRule &rule : kOptimizerRules)
      out.push_back(optimizerCapsule(device, rule));
    out.push_back(clipCapsule(device));
  }
  return out;
}

std::vector<KernelCapsule> referenceCatalog() {
  std::vector<KernelCapsule> out;
  for (const OpFacts *spec : computeOpFacts())
    out.push_back(referenceCapsule(*spec));
  return out;
}

std::vector<KernelCapsule> cudaCatalog() {
  std::vector<KernelCapsule> out;
  for (const OpFacts *spec : computeOpFacts()) {
    Expected<std::vector<Provider>> providers = cudaProvidersOf(*spec);
    if (!providers)
      continue;
    // Every provider of the op's list that computes it: the plan chooses
    // among them (a product the small-product rule covers runs native).
    for (Provider provider : *providers)
      if (std::optional<KernelCapsule> c = cudaCapsule(*spec, provider))
        out.push_back(std::move(*c));
  }
  return out;
}

} // namespace vouch::capsules
