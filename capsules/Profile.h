//===- Profile.h - backend profiles and their assurance policies -*- C++ -*-===//
//
// A BackendProfile names a target device, the providers it may use (in
// order of preference, per op), the trust levels its assurance policy
// accepts and the numerical behaviour it allows. It declares build
// capabilities; it is not a hardware probe (the runtime tells a native CUDA
// build with a device from one without, and from a CPU-only build).
//
//   checked_cpu            cpu;  reference kernels; verified / checked
//   checked_cuda           cuda; cublaslt / cublas for linear / matmul,
//                          native-cuda otherwise; verified / checked;
//                          f32 products unrounded unless the `tf32` or
//                          `bf16` option is given
//   libtorch_forward_cuda  cuda; forward values from LibTorch where it has
//                          a capsule, vouch's VJPs from the tape; any trust
//                          level; needs the LibTorch provider, which this
//                          build does not link, so the gate rejects it
//
// Only cpu and cuda have maintained profiles: every other device name
// parses, and asking for its profile is an error, never a CPU run.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_PROFILE_H
#define VOUCH_CAPSULES_PROFILE_H

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capsules/Capsule.h"

namespace vouch::capsules {

/// Which trust levels a profile accepts: verified → verified only;
/// checked → verified, checked; external → every level, trusted-external
/// included.
enum class AssurancePolicy { Verified, Checked, External };
std::string_view toString(AssurancePolicy);
bool allowsTrust(AssurancePolicy, TrustLevel);

/// The numerical behaviour a profile accepts from its capsules; anything
/// stricter is accepted too (nearest-even, preserved subnormals, no
/// contraction, no or left-fold reduction always pass).
struct NumericsAllowance {
  bool implementationDefinedRounding = false;
  bool subnormalFlushOrImplementationDefined = false;
  bool contraction = false;
  /// Any reduction order but left-fold and none: fixed-order-tree,
  /// library-fixed, implementation-defined (whether the order may change
  /// run to run is the determinism obligation's business).
  bool implementationDefinedReduction = false;
};

struct ProfileOptions {
  /// cuda profiles: let f32 products (cuBLAS GEMMs, the fused attention's
  /// tensor-core kernels) round their operands to TF32 or bf16.
  ProductPrecision products = ProductPrecision::Fp32;
};

/// The extents of a product: C[b] (m x n) = A[b] (m x k) · B[b] (k x n).
struct ProductExtents {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

/// Products small enough that launch latency, not arithmetic, bounds them:
/// batch·m·n·k ≤ maxMultiplyAdds and k ≤ maxK. The profile then prefers
/// vouch's own kernel (native-cuda, runtime/cuda/kernels/matmul.cuh) to
/// cuBLAS / cuBLASLt, whose kernels cost several microseconds at any size.
/// All zero: never.
struct SmallProductRule {
  int64_t maxMultiplyAdds = 0;
  int64_t maxK = 0;
  bool covers(const ProductExtents &p) const {
    return p.k <= maxK && p.batch * p.m * p.n * p.k <= maxMultiplyAdds;
  }
};

struct BackendProfile {
  std::string name;
  Device device = Device::Cpu;
  AssurancePolicy assurance = AssurancePolicy::Checked;
  /// Providers the profile may use, and the default order of preference.
  std::vector<Provider> providers;
  /// Per-op preference orders that replace the default one (cuda: from the
  /// op table's cudaProviders).
  std::vector<std::pair<std::string, std::vector<Provider>>> opPreferences;
  /// Providers the profile cannot work without (LibTorch for
  /// libtorch_forward_cuda): the gate rejects the profile while one of them
  /// is not linked into this build.
  std::vector<Provider> requiredProviders;
  NumericsAllowance numerics;
  SmallProductRule smallProducts;
  /// What f32 products may round their operands to (the `tf32` / `bf16`
  /// option); every capsule computes in productPrecisionOf(its numeric,
  /// this).
  ProductPrecision products = ProductPrecision::Fp32;
  std::string description; ///< one line, for reports

  /// Preference order for `op`: its override, else `providers`. For a
  /// product (`product` given) the small-product rule covers, native-cuda
  /// moves ahead of the BLAS libraries (where the order has it).
  std::vector<Provider>
  preferenceFor(std::string_view op,
                std::optional<ProductExtents> product = std::nullopt) const;
  bool allowsProvider(Provider) const;
  /// `name`, plus `+tf32` / `+bf16` for the option: what parseProfileSpec
  /// reads back, and what vouch-plan records on the model.
  std::string spec() const;
};

/// "checked_cpu", "checked_cuda", "libtorch_forward_cuda".
const std::vector<std::string_view> &profileNames();

/// A profile by name; an unknown name is an error listing the known ones.
/// `tf32` or `bf16` on a cpu profile is an error.
Expected<BackendProfile> lookupProfile(std::string_view name,
                                       const ProfileOptions &options = {});
/// `name[+option...]`, e.g. "checked_cuda+tf32" (the pass option syntax);
/// the options `tf32` and `bf16` exclude each other.
Expected<BackendProfile> parseProfileSpec(std::string_view spec);

/// The maintained profile of a device (cpu → checked_cpu, cuda →
/// checked_cuda); any other device is the error
/// "device `rocm` has no maintained runtime profile".
Expected<BackendProfile> profileForDevice(Device device,
                                          const ProfileOptions &options = {});
/// parseDevice, then profileForDevice.
Expected<BackendProfile> profileForDeviceName(std::string_view name,
                                              const ProfileOptions &options = {});

/// Whether this build can emit calls to the provider. Everything but
/// LibTorch is linked.
bool providerLinked(Provider);
/// Why a provider cannot be used in this build; empty when it can.
std::string providerUnavailableReason(Provider);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_PROFILE_H
