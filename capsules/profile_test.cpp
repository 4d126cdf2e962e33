//===- profile_test.cpp - devices, profiles, assurance policies ----------===//
//
// Every device name parses; only cpu and cuda have maintained profiles and
// the others fail with the design's message word for word; unknown names
// list the known ones; profile options and provider preferences.
//
//===----------------------------------------------------------------------===//
#include "capsules/Profile.h"
#include "gtest/gtest.h"

namespace vouch::capsules {
namespace {

TEST(Devices, EveryNameParsesAndPrintsBack) {
  ASSERT_EQ(deviceNames().size(), 9u);
  for (std::string_view name : deviceNames()) {
    Expected<Device> d = parseDevice(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_EQ(toString(*d), name);
  }
}

TEST(Devices, UnknownNameListsTheKnownOnes) {
  Expected<Device> d = parseDevice("gpu");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error(), "unknown device `gpu` (known devices: cpu, cuda, rocm, "
                       "metal, wasm, tpu, trainium, custom, external)");
  EXPECT_EQ(profileForDeviceName("gpu").error(), d.error());
}

TEST(Devices, OnlyCpuAndCudaHaveMaintainedProfiles) {
  EXPECT_EQ(profileForDevice(Device::Cpu)->name, "checked_cpu");
  EXPECT_EQ(profileForDevice(Device::Cuda)->name, "checked_cuda");
  for (const char *name :
       {"rocm", "metal", "wasm", "tpu", "trainium", "custom", "external"}) {
    Expected<BackendProfile> p = profileForDeviceName(name);
    ASSERT_FALSE(p.ok()) << name;
    EXPECT_EQ(p.error(), "device `" + std::string(name) +
                             "` has no maintained runtime profile");
  }
}

TEST(Profiles, UnknownNameListsTheKnownOnes) {
  Expected<BackendProfile> p = lookupProfile("fast_cuda");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error(), "unknown profile `fast_cuda` (known profiles: "
                       "checked_cpu, checked_cuda, libtorch_forward_cuda)");
  for (std::string_view name : profileNames())
    EXPECT_TRUE(lookupProfile(name).ok()) << name;
}

TEST(Profiles, CheckedCudaPrefersCublasForProducts) {
  BackendProfile p = *lookupProfile("checked_cuda");
  EXPECT_EQ(p.device, Device::Cuda);
  EXPECT_EQ(p.preferenceFor("linear").front(), Provider::Cublaslt);
  EXPECT_EQ(p.preferenceFor("matmul").front(), Provider::Cublas);
  EXPECT_EQ(p.preferenceFor("relu").front(), Provider::NativeCuda);
  EXPECT_FALSE(p.allowsProvider(Provider::Reference));
  EXPECT_FALSE(p.allowsProvider(Provider::Libtorch));
  EXPECT_EQ(p.products, ProductPrecision::Fp32);
  EXPECT_TRUE(p.requiredProviders.empty());
}

// The small-product rule reorders a product's preferences by its extents:
// native-cuda ahead of the BLAS libraries, anything ahead of those kept.
TEST(Profiles, SmallProductsPreferVouchsKernel) {
  BackendProfile p = *lookupProfile("checked_cuda");
  using V = std::vector<Provider>;
  ProductExtents small{1, 16, 16, 256}, wideK{1, 1, 1, 257}, many{1, 17, 16, 256};
  EXPECT_EQ(p.preferenceFor("linear", small),
            (V{Provider::NativeCuda, Provider::Cublaslt}));
  EXPECT_EQ(p.preferenceFor("matmul", small),
            (V{Provider::NativeCuda, Provider::Cublas}));
  for (const ProductExtents &large : {wideK, many})
    EXPECT_EQ(p.preferenceFor("matmul", large),
              (V{Provider::Cublas, Provider::NativeCuda}));
  EXPECT_EQ(p.preferenceFor("relu", small).front(), Provider::NativeCuda);
  // LibTorch stays first where the profile puts it.
  EXPECT_EQ(lookupProfile("libtorch_forward_cuda")->preferenceFor("matmul", small),
            (V{Provider::Libtorch, Provider::NativeCuda, Provider::Cublas}));
  // cpu has no rule and no native-cuda: unchanged.
  EXPECT_EQ(lookupProfile("checked_cpu")->preferenceFor("matmul", small),
            V{Provider::Reference});
}

TEST(Profiles, Tf32AndBf16AreOptionsOfCudaProfiles) {
  Expected<BackendProfile> p = parseProfileSpec("checked_cuda+tf32");
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->products, ProductPrecision::Tf32);
  EXPECT_EQ(p->spec(), "checked_cuda+tf32");
  Expected<BackendProfile> b = parseProfileSpec("checked_cuda+bf16");
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(b->products, ProductPrecision::Bf16);
  EXPECT_EQ(b->spec(), "checked_cuda+bf16");
  EXPECT_EQ(parseProfileSpec("checked_cuda")->spec(), "checked_cuda");
  EXPECT_EQ(parseProfileSpec("checked_cpu+tf32").error(),
            "profile option `tf32` applies to cuda profiles, not `checked_cpu`");
  EXPECT_EQ(parseProfileSpec("checked_cpu+bf16").error(),
            "profile option `bf16` applies to cuda profiles, not `checked_cpu`");
  EXPECT_EQ(parseProfileSpec("checked_cuda+fast").error(),
            "unknown profile option `fast` in `checked_cuda+fast` (known "
            "options: tf32, bf16)");
  EXPECT_EQ(parseProfileSpec("checked_cuda+tf32+bf16").error(),
            "profile options `tf32` and `bf16` exclude each other (in "
            "`checked_cuda+tf32+bf16`)");
}

TEST(Profiles, AssurancePolicies) {
  EXPECT_EQ(lookupProfile("checked_cpu")->assurance, AssurancePolicy::Checked);
  EXPECT_TRUE(allowsTrust(AssurancePolicy::Checked, TrustLevel::Verified));
  EXPECT_TRUE(allowsTrust(AssurancePolicy::Checked, TrustLevel::Checked));
  EXPECT_FALSE(allowsTrust(AssurancePolicy::Checked, TrustLevel::Fuzzed));
  EXPECT_FALSE(
      allowsTrust(AssurancePolicy::Checked, TrustLevel::TrustedExternal));
  EXPECT_FALSE(allowsTrust(AssurancePolicy::Verified, TrustLevel::Checked));
  EXPECT_TRUE(
      allowsTrust(AssurancePolicy::External, TrustLevel::TrustedExternal));
}

TEST(Profiles, LibtorchForwardCudaNeedsAnUnlinkedProvider) {
  BackendProfile p = *lookupProfile("libtorch_forward_cuda");
  EXPECT_EQ(p.device, Device::Cuda);
  EXPECT_EQ(p.assurance, AssurancePolicy::External);
  ASSERT_EQ(p.requiredProviders.size(), 1u);
  EXPECT_EQ(p.requiredProviders[0], Provider::Libtorch);
  EXPECT_EQ(p.preferenceFor("relu").front(), Provider::Libtorch);
  EXPECT_FALSE(providerLinked(Provider::Libtorch));
  EXPECT_EQ(providerUnavailableReason(Provider::Libtorch),
            "no LibTorch provider is linked into this build");
  for (Provider linked : {Provider::Reference, Provider::NativeCuda,
                          Provider::Cublas, Provider::Cublaslt}) {
    EXPECT_TRUE(providerLinked(linked));
    EXPECT_EQ(providerUnavailableReason(linked), "");
  }
}

TEST(Providers, RunOnTheirDevicesOnly) {
  EXPECT_TRUE(providerRunsOn(Provider::Reference, Device::Cpu));
  EXPECT_FALSE(providerRunsOn(Provider::Reference, Device::Cuda));
  EXPECT_TRUE(providerRunsOn(Provider::Cublas, Device::Cuda));
  EXPECT_FALSE(providerRunsOn(Provider::NativeCuda, Device::Cpu));
  EXPECT_FALSE(providerRunsOn(Provider::NativeCuda, Device::Rocm));
  EXPECT_EQ(parseProvider("cublaslt").ok(), true);
  EXPECT_EQ(parseProvider("cudnn").error(),
            "unknown provider `cudnn` (known providers: reference, "
            "native-cuda, cublas, cublaslt, cufft, libtorch)");
}

} // namespace
} // namespace vouch::capsules
