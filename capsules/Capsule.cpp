//===- Capsule.cpp - spellings and formatting of capsule fields --*- C++ -*-===//
#include "capsules/Capsule.h"

#include <array>

namespace vouch::capsules {

//===----------------------------------------------------------------------===//
// Spellings: one table per enum, indexed by the enumerator
//===----------------------------------------------------------------------===//

namespace {

constexpr std::array<std::string_view, 6> kProviderNames = {
    "reference", "native-cuda", "cublas", "cublaslt", "cufft", "libtorch"};
constexpr std::array<std::string_view, 9> kDeviceNames = {
    "cpu", "cuda", "rocm", "metal", "wasm", "tpu", "trainium", "custom",
    "external"};
constexpr std::array<std::string_view, 3> kProductPrecisionNames = {
    "fp32", "tf32", "bf16"};

template <class E, size_t N>
std::string_view lookupName(const std::array<std::string_view, N> &names,
                            E value) {
  return names[static_cast<size_t>(value)];
}

template <size_t N>
std::string joinNames(const std::array<std::string_view, N> &names) {
  std::string out;
  for (size_t i = 0; i < N; ++i)
    out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

/// The enumerator named `name` in `names` (enum order); else the error
/// "unknown <what> `name` (known <what>s: ...)".
template <class E, size_t N>
Expected<E> parseName(const std::array<std::string_view, N> &names,
                      std::string_view name, const std::string &what) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name)
      return static_cast<E>(i);
  return Error{"unknown " + what + " `" + std::string(name) + "` (known " +
               what + "s: " + joinNames(names) + ")"};
}

} // namespace

std::string_view toString(Provider p) { return lookupName(kProviderNames, p); }
std::string_view toString(Device d) { return lookupName(kDeviceNames, d); }

std::string_view toString(TrustLevel t) {
  static constexpr std::array<std::string_view, 4> names = {
      "verified", "checked", "fuzzed", "trusted-external"};
  return lookupName(names, t);
}

std::string_view toString(VjpMode m) {
  static constexpr std::array<std::string_view, 3> names = {"none", "tape",
                                                            "backend-vjp"};
  return lookupName(names, m);
}

std::string_view toString(EvidenceKind k) {
  static constexpr std::array<std::string_view, 6> names = {
      "runtime-guard",    "test-suite",     "fuzz-oracle",
      "trusted-boundary", "not-applicable", "not-provided"};
  return lookupName(names, k);
}

std::string_view toString(Rounding r) {
  static constexpr std::array<std::string_view, 2> names = {
      "nearest-even", "implementation-defined"};
  return lookupName(names, r);
}

std::string_view toString(Subnormals s) {
  static constexpr std::array<std::string_view, 3> names = {
      "preserved", "flush-to-zero", "implementation-defined"};
  return lookupName(names, s);
}

std::string_view toString(Contraction c) {
  static constexpr std::array<std::string_view, 3> names = {
      "none", "fma", "implementation-defined"};
  return lookupName(names, c);
}

std::string_view toString(ReductionOrder r) {
  static constexpr std::array<std::string_view, 5> names = {
      "none", "left-fold", "fixed-order-tree", "library-fixed",
      "implementation-defined"};
  return lookupName(names, r);
}

std::string_view toString(ProductPrecision p) {
  return lookupName(kProductPrecisionNames, p);
}

const std::vector<std::string_view> &deviceNames() {
  static const std::vector<std::string_view> names(kDeviceNames.begin(),
                                                   kDeviceNames.end());
  return names;
}

Expected<Device> parseDevice(std::string_view name) {
  return parseName<Device>(kDeviceNames, name, "device");
}

Expected<ProductPrecision> parseProductPrecision(std::string_view name) {
  return parseName<ProductPrecision>(kProductPrecisionNames, name,
                                     "product precision");
}

Expected<Provider> parseProvider(std::string_view name) {
  return parseName<Provider>(kProviderNames, name, "provider");
}

bool providerRunsOn(Provider provider, Device device) {
  switch (provider) {
  case Provider::Reference:
    return device == Device::Cpu;
  case Provider::NativeCuda:
  case Provider::Cublas:
  case Provider::Cublaslt:
  case Provider::Cufft:
    return device == Device::Cuda;
  case Provider::Libtorch:
    return device == Device::Cpu || device == Device::Cuda;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Formatting
//===----------------------------------------------------------------------===//

std::string formatNumericalPolicy(const NumericalPolicy &n) {
  return "numeric=[round=" + std::string(toString(n.round)) +
         ",subnormal=" + std::string(toString(n.subnormal)) +
         ",contract=" + std::string(toString(n.contract)) +
         ",reduce=" + std::string(toString(n.reduce)) + "]";
}

std::string formatCapsuleHeadline(const KernelCapsule &c) {
  return c.op + ": " + c.name + " provider=" + std::string(toString(c.provider)) +
         " trust=" + std::string(toString(c.trust)) +
         " vjp=" + std::string(toString(c.vjpMode)) + " " +
         formatNumericalPolicy(c.numeric);
}

std::string formatContract(const ContractDescriptor &d) {
  std::string evidence(toString(d.evidence.kind));
  if (!d.evidence.reference.empty())
    evidence += " " + d.evidence.reference;
  std::string out = d.claim + " (";
  if (!d.summary.empty())
    out += d.summary + "; ";
  return out + "evidence: " + evidence + ")";
}

} // namespace vouch::capsules
