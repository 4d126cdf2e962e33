// Tests for module.h: the cubin header parsing and architecture rule (no device), the
// errors without a device, and on a device: loading the embedded test kernels from
// memory (sm_90 cubin; PTX only; an sm_80 cubin that must fall back to the PTX),
// looking kernels up, launching them, and launch errors that name the kernel.
#include "runtime/cuda/module.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/cuda/memcpy.h"
#include "runtime/cuda/test_util.h"
#include "runtime/cuda/testdata/executor_test_kernels.h"
#include "runtime/cuda/testdata/test_kernels.h"

namespace vouch::rt::cuda {
namespace {

using testdata::kTestKernelsPtx;
using testdata::kTestKernelsPtxSize;
using testdata::kTestKernelsSm80Cubin;
using testdata::kTestKernelsSm80CubinSize;
using testdata::kTestKernelsSm90Cubin;
using testdata::kTestKernelsSm90CubinSize;

const char* ptx_text() { return reinterpret_cast<const char*>(kTestKernelsPtx); }

// Whether this device runs sm_90 cubins; if not, says which check is skipped.
bool runs_sm90_cubins(const char* what) {
  const RuntimeStatus& rs = probe_runtime();
  if (cubin_runs_on(90, rs.cc_major, rs.cc_minor)) return true;
  std::printf("SKIPPED (not an sm_90 device: sm_%d%d): %s\n", rs.cc_major, rs.cc_minor, what);
  return false;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ModuleTest, ReadsTheCubinArchitecture) {
  EXPECT_EQ(cubin_sm_arch(kTestKernelsSm90Cubin, kTestKernelsSm90CubinSize), 90);
  EXPECT_EQ(cubin_sm_arch(kTestKernelsSm80Cubin, kTestKernelsSm80CubinSize), 80);
  EXPECT_EQ(cubin_sm_arch(kTestKernelsPtx, kTestKernelsPtxSize), -1);  // text, not ELF
  EXPECT_EQ(cubin_sm_arch(nullptr, 0), -1);
  std::vector<unsigned char> truncated(kTestKernelsSm90Cubin, kTestKernelsSm90Cubin + 40);
  EXPECT_EQ(cubin_sm_arch(truncated.data(), truncated.size()), -1);
  // A host ELF is not a CUDA ELF (e_machine differs).
  std::vector<unsigned char> host(kTestKernelsSm90Cubin, kTestKernelsSm90Cubin + 64);
  host[18] = 62;  // EM_X86_64
  host[19] = 0;
  EXPECT_EQ(cubin_sm_arch(host.data(), host.size()), -1);
  EXPECT_FALSE(is_fatbin(kTestKernelsSm90Cubin, kTestKernelsSm90CubinSize));
  const unsigned char fatbin_magic[] = {0x50, 0xed, 0x55, 0xba, 0, 0, 0, 0};
  EXPECT_TRUE(is_fatbin(fatbin_magic, sizeof fatbin_magic));
  EXPECT_TRUE(contains(ptx_text(), ".entry vouch_test_add_one"));
  EXPECT_EQ(std::strlen(ptx_text()), kTestKernelsPtxSize);
}

TEST(ModuleTest, CubinCompatibilityRule) {
  EXPECT_TRUE(cubin_runs_on(90, 9, 0));    // H100 / H200
  EXPECT_FALSE(cubin_runs_on(90, 8, 9));   // older
  EXPECT_FALSE(cubin_runs_on(90, 10, 0));  // newer major: needs the PTX
  EXPECT_TRUE(cubin_runs_on(80, 8, 6));    // same major, newer minor
  EXPECT_FALSE(cubin_runs_on(86, 8, 0));   // same major, older minor
  EXPECT_FALSE(cubin_runs_on(80, 9, 0));
  EXPECT_TRUE(cubin_runs_on(100, 10, 0));
  EXPECT_FALSE(cubin_runs_on(-1, 9, 0));
}

TEST(ModuleTest, ErrorsWithoutADevice) {
  Result<KernelModule> none = load_module(nullptr, 0, nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "load_module: neither a cubin nor PTX was given");
  Result<KernelModule> no_images = load_module(nullptr, 0);
  ASSERT_FALSE(no_images.ok());
  EXPECT_EQ(no_images.status().message(), "load_module: no kernel image was given");
  if (cuda_device_present()) return;  // the rest is about the no-device answer
  Result<KernelModule> m = load_module(kTestKernelsSm90Cubin, kTestKernelsSm90CubinSize, ptx_text());
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(contains(m.status().message(),
                       "load_module: device `cuda` requested, but no usable CUDA device"))
      << m.status().message();
  KernelModule empty;
  Result<cudaKernel_t> k = empty.kernel("vouch_test_add_one");
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(contains(k.status().message(), "the module is not loaded"));
}

// x[i] += 1 for n elements, through `m`'s vouch_test_add_one; returns x.
std::vector<float> run_add_one(const KernelModule& m, std::vector<float> x) {
  Result<cudaKernel_t> k = m.kernel("vouch_test_add_one");
  EXPECT_TRUE(k.ok()) << k.status().message();
  if (!k.ok()) return {};
  float* d = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), x.size() * sizeof(float)), cudaSuccess);
  EXPECT_TRUE(upload(d, x.data(), x.size(), nullptr).ok());
  unsigned n = unsigned(x.size());
  void* args[] = {&d, &n};
  Status s = launch(k.value(), dim3((n + 127) / 128), dim3(128), 0, nullptr, args);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(download(x.data(), d, x.size(), nullptr).ok());
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  cudaFree(d);
  return x;
}

TEST(ModuleDeviceTest, LoadsTheCubinFromMemoryAndLaunches) {
  VOUCH_REQUIRE_CUDA_DEVICE("kernel module load (sm_90 cubin) and launch");
  if (!runs_sm90_cubins("the sm_90 cubin path")) GTEST_SKIP();
  Result<KernelModule> m = load_module(kTestKernelsSm90Cubin, kTestKernelsSm90CubinSize, ptx_text());
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m.value().loaded_from_ptx());
  EXPECT_EQ(m.value().cubin_arch(), 90);
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); i++) x[i] = float(i);
  std::vector<float> y = run_add_one(m.value(), x);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); i++) EXPECT_EQ(y[i], x[i] + 1.0f);

  Result<cudaKernel_t> missing = m.value().kernel("no_such_kernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "kernel \"no_such_kernel\" is in none of the 1 loaded kernel image(s)");

  // A launch error names the kernel and its configuration (1025 threads > 1024).
  Result<cudaKernel_t> k = m.value().kernel("vouch_test_add_one");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(kernel_name(k.value()), "vouch_test_add_one");
  float* d = nullptr;
  unsigned n = 0;
  void* args[] = {&d, &n};
  Status bad = launch(k.value(), dim3(1), dim3(1025), 0, nullptr, args);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.message(), "cudaLaunchKernel(vouch_test_add_one, grid=(1,1,1), "
                                      "block=(1025,1,1), smem=0) failed"))
      << bad.message();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // consumed, not left for the next check
  EXPECT_TRUE(m.value().unload().ok());
  EXPECT_FALSE(m.value().loaded());
}

TEST(ModuleDeviceTest, PtxOnlyAndMismatchedCubinFallBackToPtx) {
  VOUCH_REQUIRE_CUDA_DEVICE("kernel module PTX load and the cubin-mismatch fallback");
  Result<KernelModule> p = load_module(nullptr, 0, ptx_text());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(p.value().loaded_from_ptx());
  std::vector<float> x(300, 2.0f);
  std::vector<float> y = run_add_one(p.value(), x);
  ASSERT_EQ(y.size(), x.size());
  for (float v : y) EXPECT_EQ(v, 3.0f);

  const RuntimeStatus& rs = probe_runtime();
  if (cubin_runs_on(80, rs.cc_major, rs.cc_minor)) {
    std::printf("SKIPPED (this sm_%d%d device runs sm_80 cubins): the cubin-mismatch fallback\n",
                rs.cc_major, rs.cc_minor);
    GTEST_SKIP();
  }
  testing::internal::CaptureStderr();
  Result<KernelModule> f = load_module(kTestKernelsSm80Cubin, kTestKernelsSm80CubinSize, ptx_text());
  Result<KernelModule> f2 = load_module(kTestKernelsSm80Cubin, kTestKernelsSm80CubinSize, ptx_text());
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_TRUE(f2.ok()) << f2.status().message();
  EXPECT_TRUE(f.value().loaded_from_ptx());
  EXPECT_EQ(f.value().cubin_arch(), 80);
  EXPECT_TRUE(contains(err, "note: the kernel cubin is sm_80 but device ")) << err;
  EXPECT_TRUE(contains(err, "loading the PTX instead")) << err;
  EXPECT_EQ(err.find("note:"), err.rfind("note:")) << "said more than once: " << err;
  y = run_add_one(f.value(), x);
  ASSERT_EQ(y.size(), x.size());
  for (float v : y) EXPECT_EQ(v, 3.0f);

  Result<KernelModule> no_ptx = load_module(kTestKernelsSm80Cubin, kTestKernelsSm80CubinSize, nullptr);
  ASSERT_FALSE(no_ptx.ok());
  EXPECT_TRUE(contains(no_ptx.status().message(), "and no PTX was given to JIT-compile"))
      << no_ptx.status().message();
}

TEST(ModuleDeviceTest, CorruptCubinFailsAtLoad) {
  VOUCH_REQUIRE_CUDA_DEVICE("kernel module corrupt cubin error at load time");
  if (!runs_sm90_cubins("the corrupt-cubin check")) GTEST_SKIP();
  // The ELF header intact (so it is taken for an sm_90 cubin), the rest zeroed.
  std::vector<unsigned char> corrupt(kTestKernelsSm90Cubin,
                                     kTestKernelsSm90Cubin + kTestKernelsSm90CubinSize);
  for (size_t i = 64; i < corrupt.size(); i++) corrupt[i] = 0;
  Result<KernelModule> m = load_module(corrupt.data(), corrupt.size(), nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(contains(m.status().message(), "cudaLibraryLoadData(cubin sm_90, "))
      << m.status().message();
  std::printf("corrupt cubin: %s\n", m.status().message().c_str());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(ModuleDeviceTest, BrokenPtxFailsAtLoadNotAtLaunch) {
  VOUCH_REQUIRE_CUDA_DEVICE("kernel module PTX JIT errors at load time");
  const char* broken[] = {
      // Not even parseable.
      ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry broken( {\n",
      // Parses as a kernel, but has an unknown instruction: fails in the JIT.
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry vouch_broken()\n{\n  bogus.instruction.u32 %r1;\n  ret;\n}\n",
  };
  for (const char* ptx : broken) {
    Result<KernelModule> m = load_module(nullptr, 0, ptx);
    ASSERT_FALSE(m.ok()) << ptx;
    EXPECT_TRUE(contains(m.status().message(), "after cudaLibraryLoadData(PTX, "))
        << m.status().message();
    EXPECT_TRUE(contains(m.status().message(), "(cudaErrorInvalidPtx)")) << m.status().message();
    EXPECT_TRUE(contains(m.status().message(), "JIT error log:\nptxas")) << m.status().message();
    std::printf("broken PTX: %s\n", m.status().message().c_str());
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// A model's kernels come as several images (one NVRTC program each, compiled in
// parallel): a kernel is found in whichever image holds it, a name no image holds is an
// error naming the count, and a bad image is reported by its position with nothing left
// loaded.
TEST(ModuleDeviceTest, LooksKernelsUpAcrossImages) {
  VOUCH_REQUIRE_CUDA_DEVICE("kernel lookup across several images");
  if (!runs_sm90_cubins("several sm_90 images")) GTEST_SKIP();
  const KernelImage images[] = {
      {kTestKernelsSm90Cubin, kTestKernelsSm90CubinSize, ptx_text()},
      {testdata::kExecutorKernelsSm90Cubin, testdata::kExecutorKernelsSm90CubinSize,
       reinterpret_cast<const char*>(testdata::kExecutorKernelsPtx)}};
  Result<KernelModule> m = load_module(images, 2);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m.value().library_count(), 2u);
  std::vector<float> y = run_add_one(m.value(), {1.0f, 2.0f});  // image 1's kernel
  EXPECT_EQ(y, (std::vector<float>{2.0f, 3.0f}));
  Result<cudaKernel_t> relu = m.value().kernel("mlp_relu_f32");  // image 2's
  ASSERT_TRUE(relu.ok()) << relu.status().message();
  EXPECT_EQ(kernel_name(relu.value()), "mlp_relu_f32");
  Result<cudaKernel_t> missing = m.value().kernel("no_such_kernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "kernel \"no_such_kernel\" is in none of the 2 loaded kernel image(s)");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // the failed lookups left no error behind
  EXPECT_TRUE(m.value().unload().ok());
  EXPECT_FALSE(m.value().loaded());

  std::vector<unsigned char> corrupt(kTestKernelsSm90Cubin,
                                     kTestKernelsSm90Cubin + kTestKernelsSm90CubinSize);
  for (size_t i = 64; i < corrupt.size(); i++) corrupt[i] = 0;  // as CorruptCubinFailsAtLoad
  const KernelImage bad[] = {images[0], {corrupt.data(), corrupt.size(), nullptr}};
  Result<KernelModule> b = load_module(bad, 2);
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(contains(b.status().message(), "kernel image 2 of 2: ")) << b.status().message();
}

}  // namespace
}  // namespace vouch::rt::cuda
