// nvrtc_compile_test: the kernel library compiles with NVRTC as generated programs use
// it: kernel_instances.cu (every template instantiated for float and double, as codegen
// emits them) as the program, every header handed to NVRTC from memory by include
// name, codegen's options (codegen/Nvrtc.cpp: -arch=sm_90 -std=c++17 -default-device
// -lineinfo). The PTX must define every entry point. NVRTC needs no GPU.
#include <nvrtc.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

const char* const kDir = "runtime/cuda/kernels/";
const char* const kHeaders[] = {"dims.h",      "param_slot.h", "shuffle.h",   "common.cuh",
                                "pointwise.cuh", "reduce.cuh",  "loss.cuh",
                                "index.cuh",   "optimizer.cuh", "executor.cuh",
                                "matmul.cuh",  "gelu.cuh",     "slice.cuh",
                                "concat.cuh",  "softmax.cuh",   "layernorm.cuh",
                                "classifier.cuh", "gather.cuh",    "embedding.cuh",
                                "counter_rng.h", "random.cuh",
                                "cast.cuh",    "rows.cuh",     "mask.cuh",
                                "token_windows.h", "attention.cuh", "attention64.cuh",
                                "pool_shape.h", "pool.cuh", "conv_geometry.h",
                                "fast_divide.h", "conv.cuh", "cluster.cuh", "batchnorm.cuh",
                                "implicit_tiles.h", "col2im_matmul.cuh", "tensor_cores.cuh"};

std::string read(const std::string& name) {
  std::ifstream in(kDir + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compiles `source` with the headers by name; returns the PTX, or "" with `log` set.
std::string compile(const std::string& source, std::string& log) {
  std::vector<std::string> texts;
  std::vector<const char*> contents, names;
  for (const char* h : kHeaders) texts.push_back(read(h));
  for (size_t i = 0; i < texts.size(); ++i) {
    contents.push_back(texts[i].c_str());
    names.push_back(kHeaders[i]);
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
  for (const char* h : kHeaders) ASSERT_FALSE(read(h).empty()) << kDir << h;
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
  EXPECT_EQ(symbols.size(), 141u);
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
