//===- Profile.cpp - backend profiles and their assurance policies -*- C++ -*-===//
#include "capsules/Profile.h"

#include <algorithm>

#include "capsules/Catalog.h"

namespace vouch::capsules {

std::string_view toString(AssurancePolicy p) {
  switch (p) {
  case AssurancePolicy::Verified:
    return "verified";
  case AssurancePolicy::Checked:
    return "checked";
  case AssurancePolicy::External:
    return "external";
  }
  return "";
}

bool allowsTrust(AssurancePolicy policy, TrustLevel trust) {
  switch (policy) {
  case AssurancePolicy::Verified:
    return trust == TrustLevel::Verified;
  case AssurancePolicy::Checked:
    return trust == TrustLevel::Verified || trust == TrustLevel::Checked;
  case AssurancePolicy::External:
    return true;
  }
  return false;
}

std::vector<Provider>
BackendProfile::preferenceFor(std::string_view op,
                              std::optional<ProductExtents> product) const {
  std::vector<Provider> order = providers;
  for (const auto &[name, preferred] : opPreferences)
    if (name == op)
      order = preferred;
  if (!product || !smallProducts.covers(*product))
    return order;
  auto native = std::find(order.begin(), order.end(), Provider::NativeCuda);
  auto blas = std::find_if(order.begin(), native, [](Provider p) {
    return p == Provider::Cublas || p == Provider::Cublaslt;
  });
  std::rotate(blas, native, native == order.end() ? native : native + 1);
  return order;
}

bool BackendProfile::allowsProvider(Provider p) const {
  return std::find(providers.begin(), providers.end(), p) != providers.end();
}

std::string BackendProfile::spec() const {
  if (products == ProductPrecision::Fp32)
    return name;
  return name + "+" + std::string(toString(products));
}

const std::vector<std::string_view> &profileNames() {
  static const std::vector<std::string_view> names = {
      "checked_cpu", "checked_cuda", "libtorch_forward_cuda"};
  return names;
}

namespace {

std::string knownProfiles() {
  std::string out;
  for (std::string_view n : profileNames())
    out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

BackendProfile checkedCpu() {
  BackendProfile p;
  p.name = "checked_cpu";
  p.device = Device::Cpu;
  p.assurance = AssurancePolicy::Checked;
  p.providers = {Provider::Reference};
  // The cpu reference is the interpreter's arithmetic: exact rounding, no
  // contraction, sums folded left.
  p.numerics = NumericsAllowance{};
  p.description = "reference kernels on the host, interpreter order";
  return p;
}

BackendProfile checkedCuda() {
  BackendProfile p;
  p.name = "checked_cuda";
  p.device = Device::Cuda;
  p.assurance = AssurancePolicy::Checked;
  p.providers = {Provider::NativeCuda, Provider::Cublaslt, Provider::Cublas,
                 Provider::Cufft};
  // Per-op orders are the op table's cudaProviders (set in each op's ODS
  // record): an op that names a library first (linear: cublaslt, matmul:
  // cublas) gets its own order; an op computed by native kernels only keeps
  // the profile's, which leads with native-cuda.
  for (const OpFacts *op : computeOpFacts()) {
    Expected<std::vector<Provider>> order = cudaProvidersOf(*op);
    if (order && *order != std::vector<Provider>{Provider::NativeCuda})
      p.opPreferences.push_back({std::string(op->mnemonic), *order});
  }
  // One thread per output with a k-term loop beats a library launch up to
  // here on an H200 (docs/performance.md, 2026-12-01).
  p.smallProducts = {65536, 256};
  p.numerics.subnormalFlushOrImplementationDefined = true;
  p.numerics.contraction = true;
  p.numerics.implementationDefinedReduction = true;
  p.description = "NVRTC kernels and cuBLAS(Lt) on one NVIDIA GPU (sm_90)";
  return p;
}

BackendProfile libtorchForwardCuda() {
  BackendProfile p = checkedCuda();
  p.name = "libtorch_forward_cuda";
  p.assurance = AssurancePolicy::External;
  p.providers.insert(p.providers.begin(), Provider::Libtorch);
  for (auto &[op, order] : p.opPreferences)
    order.insert(order.begin(), Provider::Libtorch);
  p.requiredProviders = {Provider::Libtorch};
  p.description = "forward values from LibTorch where it has a capsule, "
                  "vouch's VJPs from the tape";
  return p;
}

} // namespace

Expected<BackendProfile> lookupProfile(std::string_view name,
                                       const ProfileOptions &options) {
  BackendProfile p;
  if (name == "checked_cpu")
    p = checkedCpu();
  else if (name == "checked_cuda")
    p = checkedCuda();
  else if (name == "libtorch_forward_cuda")
    p = libtorchForwardCuda();
  else
    return Error{"unknown profile `" + std::string(name) +
                 "` (known profiles: " + knownProfiles() + ")"};
  if (options.products != ProductPrecision::Fp32 && p.device != Device::Cuda)
    return Error{"profile option `" + std::string(toString(options.products)) +
                 "` applies to cuda profiles, not `" + p.name + "`"};
  p.products = options.products;
  return p;
}

Expected<BackendProfile> parseProfileSpec(std::string_view spec) {
  size_t plus = spec.find('+');
  std::string_view name = spec.substr(0, plus);
  ProfileOptions options;
  while (plus != std::string_view::npos) {
    size_t next = spec.find('+', plus + 1);
    std::string_view option = spec.substr(plus + 1, next - plus - 1);
    // The options are the product precisions that round (fp32 is none).
    Expected<ProductPrecision> products = parseProductPrecision(option);
    if (!products || *products == ProductPrecision::Fp32)
      return Error{"unknown profile option `" + std::string(option) +
                   "` in `" + std::string(spec) +
                   "` (known options: tf32, bf16)"};
    if (options.products != ProductPrecision::Fp32)
      return Error{"profile options `tf32` and `bf16` exclude each other (in `" +
                   std::string(spec) + "`)"};
    options.products = *products;
    plus = next;
  }
  return lookupProfile(name, options);
}

Expected<BackendProfile> profileForDevice(Device device,
                                          const ProfileOptions &options) {
  if (device == Device::Cpu)
    return lookupProfile("checked_cpu", options);
  if (device == Device::Cuda)
    return lookupProfile("checked_cuda", options);
  return Error{"device `" + std::string(toString(device)) +
               "` has no maintained runtime profile"};
}

Expected<BackendProfile> profileForDeviceName(std::string_view name,
                                              const ProfileOptions &options) {
  Expected<Device> device = parseDevice(name);
  if (!device)
    return Error{device.error()};
  return profileForDevice(*device, options);
}

bool providerLinked(Provider p) { return p != Provider::Libtorch; }

std::string providerUnavailableReason(Provider p) {
  if (p == Provider::Libtorch)
    return "no LibTorch provider is linked into this build";
  return "";
}

} // namespace vouch::capsules
