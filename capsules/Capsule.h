//===- Capsule.h - the audit record of one kernel ---------------*- C++ -*-===//
//
// A KernelCapsule (seed: native-cuda-capsules.txt, 5.3.3) describes one
// operation-provider pair: who computes the op, on which device, under which
// shape / layout / value / VJP contracts, with what evidence, and under which
// numerical policy. Capsules are data: the planner selects them, the
// assurance gate checks them, reports print them. They never execute.
//
// Every enum here has one spelling, used by reports, JSON, profiles and
// error messages alike (`toString`), and parses back where users type it.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_CAPSULE_H
#define VOUCH_CAPSULES_CAPSULE_H

#include <string>
#include <string_view>
#include <vector>

#include "capsules/Expected.h"

namespace vouch::capsules {

/// Who computes an op. When cuBLAS computes a product the capsule says
/// cublas, not native-cuda (seed 5.3.6).
enum class Provider { Reference, NativeCuda, Cublas, Cublaslt, Cufft, Libtorch };

/// Every device name parses; only cpu and cuda have maintained profiles.
enum class Device { Cpu, Cuda, Rocm, Metal, Wasm, Tpu, Trainium, Custom, External };

/// How much the capsule's claims are backed, strongest first.
enum class TrustLevel { Verified, Checked, Fuzzed, TrustedExternal };

/// none: forward only. backend-vjp: the op's VJP rule (vouch's, built by
/// vouch-autodiff) runs on this capsule's backend. tape: the forward value
/// comes from this provider, the VJP is vouch's rule run from the tape on
/// another provider (the LibTorch-forward hybrid of seed 5.3.9).
enum class VjpMode { None, Tape, BackendVjp };

enum class EvidenceKind {
  RuntimeGuard,    ///< checked before every call
  TestSuite,       ///< a test in this tree (cited by label or lit path)
  FuzzOracle,      ///< randomised comparison against an oracle
  TrustedBoundary, ///< an external component taken on trust
  NotApplicable,   ///< the contract says nothing for this op
  NotProvided,     ///< no evidence yet: the report says so
};

enum class Rounding { NearestEven, ImplementationDefined };
enum class Subnormals { Preserved, FlushToZero, ImplementationDefined };
/// none: every operation rounds on its own. fma: the compiler may fuse a·b + c
/// into one rounding (NVRTC's -fmad=true). implementation-defined: a library
/// decides (cuBLAS).
enum class Contraction { None, FusedMultiplyAdd, ImplementationDefined };
/// none: the op sums nothing. left-fold: sequential from index 0, starting
/// at 0 (the reference interpreter's order). fixed-order-tree: a reduction
/// tree fixed by the kernel's source (vouch's CUDA block reductions: no
/// atomics), so every run gives the same bits, though not the left fold's.
/// library-fixed: the library's own order (cuBLAS / cuBLASLt), the same
/// run to run on one GPU model with one toolkit version under the
/// configuration the capsule's value contract names; not the left fold's,
/// and not promised across GPU models or versions. implementation-defined:
/// an order that may change from run to run.
enum class ReductionOrder {
  None,
  LeftFold,
  FixedTree,
  LibraryFixed,
  ImplementationDefined
};
/// What an f32 product's operands are rounded to before they are multiplied
/// (the sums stay f32): fp32 not at all; tf32 to 10 mantissa bits
/// (cuBLAS's CUBLAS_COMPUTE_32F_FAST_TF32, mma.sync .tf32); bf16 to 8
/// (mma.sync .bf16; for cuBLAS, bf16 copies of the operands:
/// runtime/cuda/gemm_call.h). Ordered: each rounds more than the one before.
/// f64 products are never rounded.
enum class ProductPrecision { Fp32, Tf32, Bf16 };

std::string_view toString(Provider);
std::string_view toString(Device);
std::string_view toString(TrustLevel);
std::string_view toString(VjpMode);
std::string_view toString(EvidenceKind);
std::string_view toString(Rounding);
std::string_view toString(Subnormals);
std::string_view toString(Contraction);
std::string_view toString(ReductionOrder);
std::string_view toString(ProductPrecision);

/// Every device name, in enum order: "cpu", "cuda", "rocm", ...
const std::vector<std::string_view> &deviceNames();
/// "cuda" -> Device::Cuda; anything else is an error listing the known
/// names.
Expected<Device> parseDevice(std::string_view name);
Expected<Provider> parseProvider(std::string_view name);
/// "fp32", "tf32", "bf16"; anything else is an error listing them.
Expected<ProductPrecision> parseProductPrecision(std::string_view name);

/// Whether a provider can run on a device at all (reference: cpu; the
/// NVIDIA libraries and native CUDA: cuda; LibTorch: cpu or cuda).
bool providerRunsOn(Provider, Device);

/// What backs a claim. `reference` is a Bazel test label (`//pkg:name`) or a
/// lit test path (`tests/lit/...`), and always comes from the one citation
/// table (capsules/Evidence.h); empty for kinds that cite no test.
struct Evidence {
  EvidenceKind kind = EvidenceKind::NotProvided;
  std::string reference;
};

/// Where the implementation lives: source file, the native symbol called
/// (a C++ function, a library entry point, or an emitted kernel symbol
/// pattern), and a free-form note.
struct Provenance {
  std::string sourceFile;
  std::string nativeSymbol;
  std::string note;
};

/// One of a capsule's four contracts (shape, layout, value, VJP).
struct ContractDescriptor {
  std::string claim;   ///< what is promised, one line
  std::string summary; ///< how it is established, one line
  Evidence evidence;
  Provenance provenance;
};

struct NumericalPolicy {
  Rounding round = Rounding::NearestEven;
  Subnormals subnormal = Subnormals::ImplementationDefined;
  Contraction contract = Contraction::ImplementationDefined;
  ReductionOrder reduce = ReductionOrder::ImplementationDefined;
  /// The most its f32 products may be rounded when the profile asks for it
  /// (cuBLAS / cuBLASLt GEMMs and the fused attention's tensor-core
  /// kernels: bf16); fp32: never. A capsule computes in the lesser of this
  /// and the profile's precision (productPrecisionOf).
  ProductPrecision fastestProducts = ProductPrecision::Fp32;
};

/// What a capsule's f32 products compute in under a profile asking for
/// `requested`: the lesser of that and what the capsule can do.
inline ProductPrecision productPrecisionOf(const NumericalPolicy &numeric,
                                           ProductPrecision requested) {
  return requested < numeric.fastestProducts ? requested
                                             : numeric.fastestProducts;
}

/// `numeric=[round=…,subnormal=…,contract=…,reduce=…]`, exactly as the
/// seed prints it. The product precision is not part of this text: reports
/// print it beside it (`products=…`), for capsules that may round products.
std::string formatNumericalPolicy(const NumericalPolicy &);

struct KernelCapsule {
  std::string name; ///< e.g. "native_cuda.matmul"; unique in a registry
  std::string op;   ///< dialect op name without `vouch.`, e.g. "matmul"
  Provider provider = Provider::Reference;
  Device device = Device::Cpu;
  TrustLevel trust = TrustLevel::Checked;
  bool supportsForward = true;
  VjpMode vjpMode = VjpMode::None;
  ContractDescriptor shape, layout, value, vjp;
  NumericalPolicy numeric;
  /// Machine-checked parts of the shape and layout contracts: the largest
  /// rank the kernel handles (0: no limit) and whether it reads operands
  /// through transpose flags (matmul's transpose_lhs / transpose_rhs).
  int maxRank = 0;
  bool acceptsTransposeFlags = false;
};

/// `op: name provider=… trust=… vjp=… numeric=[…]`: the first line of a
/// capsule's report entry (BRIEF.md, seed 5.3.1).
std::string formatCapsuleHeadline(const KernelCapsule &);

/// `claim (summary; evidence: kind reference)`: one contract line.
std::string formatContract(const ContractDescriptor &);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_CAPSULE_H
