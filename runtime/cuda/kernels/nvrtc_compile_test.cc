// nvrtc_compile_test: the kernel library compiles with NVRTC as generated programs use
// it: kernel_instances.cu (every template instantiated for float and double, as codegen
// emits them) as the program, every header handed to NVRTC from memory by include
// name, codegen's options (codegen/Nvrtc.cpp: -arch=sm_90 -std=c++17 -default-device
// -lineinfo). The PTX must define every entry point. NVRTC needs no GPU.
#include <nvrtc.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

const char* const kDir = "runtime/cuda/kernels/";
// Every header of :sources (the test's data, the same filegroup codegen embeds), by
// file name: the one list is runtime/cuda/kernels/BUILD.bazel's.
std::vector<std::string> headers() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if (ext == ".h" || ext == ".cuh") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string read(const std::string& name) {
  std::ifstream in(kDir + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compiles `source` with the headers by name; returns the PTX, or "" with `log` set.
std::string compile(const std::string& source, std::string& log) {
  const std::vector<std::string> header_names = headers();
  std::vector<std::string> texts;
  std::vector<const char*> contents, names;
  for (const std::string& h : header_names) texts.push_back(read(h));
  for (size_t i = 0; i < texts.size(); ++i) {
    contents.push_back(texts[i].c_str());
    names.push_back(header_names[i].c_str());
  }
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), "kernel_instances.cu", int(names.size()),
                         contents.data(), names.data()) != NVRTC_SUCCESS) {
    log = "nvrtcCreateProgram failed";
    return "";
  }
  const char* options[] = {"-arch=sm_90", "-std=c++17", "-default-device", "-lineinfo"};
  const nvrtcResult r = nvrtcCompileProgram(program, 4, options);
  size_t size = 0;
  nvrtcGetProgramLogSize(program, &size);
  log.assign(size, '\0');
  if (size > 1) nvrtcGetProgramLog(program, log.data());
  std::string ptx;
  if (r == NVRTC_SUCCESS) {
    nvrtcGetPTXSize(program, &size);
    ptx.assign(size, '\0');
    nvrtcGetPTX(program, ptx.data());
  }
  nvrtcDestroyProgram(&program);
  return ptx;
}

TEST(NvrtcCompile, EveryInstantiationCompilesForSm90) {
  const std::vector<std::string> names = headers();
  // The library's core headers at least (a runfiles layout that hid them would
  // otherwise compile nothing but kernel_instances.cu's own text).
  for (const char* h : {"common.cuh", "executor.cuh", "attention.cuh", "dims.h"})
    ASSERT_NE(std::find(names.begin(), names.end(), h), names.end()) << kDir << h;
  for (const std::string& h : names) ASSERT_FALSE(read(h).empty()) << kDir << h;
  const std::string source = read("kernel_instances.cu");
  ASSERT_FALSE(source.empty());
  std::string log;
  const std::string ptx = compile(source, log);
  ASSERT_FALSE(ptx.empty()) << log;

  // Every entry point of the program and of executor.cuh is in the PTX (an entry's
  // attributes, __launch_bounds__(...) or __cluster_dims__(...), may stand between
  // `void` and its name).
  const std::regex entry(
      R"re(extern "C" __global__ void\s+(?:__\w+__\([^)]*\)\s*)*(\w+)\()re");
  std::vector<std::string> symbols;
  for (const std::string& text : {source, read("executor.cuh")})
    for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it)
      symbols.push_back((*it)[1]);
  EXPECT_EQ(symbols.size(), 147u);
  for (const std::string& s : symbols)
    EXPECT_NE(ptx.find(".visible .entry " + s + "("), std::string::npos) << s;
}

TEST(NvrtcCompile, ExecutorHeaderIncludedTwiceIsHarmless) {
  std::string log;
  EXPECT_FALSE(compile("#include \"executor.cuh\"\n#include \"executor.cuh\"\n", log).empty())
      << log;
}

TEST(NvrtcCompile, AnErrorInAFunctorIsReported) {
  // The check above is not vacuous: a broken generated functor fails to compile.
  std::string log;
  EXPECT_TRUE(compile("#include \"pointwise.cuh\"\n"
                      "struct bad_op { template <class T> __device__ void operator()("
                      "const T* a, T* r) const { r[0] = undefined_name(a[0]); } };\n"
                      "extern \"C\" __global__ void bad_f32(float* o0, const float* i0, "
                      "long long n, unsigned long long m) { float* out[] = {o0}; "
                      "const float* in[] = {i0}; vouch::pointwise_kernel<1, 1>(bad_op{}, out, "
                      "in, n, m); }\n",
                      log)
                  .empty());
  EXPECT_NE(log.find("undefined_name"), std::string::npos) << log;
}

}  // namespace
