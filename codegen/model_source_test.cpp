//===- model_source_test.cpp - the emitted file, whole and in parts -------===//
//
// `vouch build` compiles the emitted C++ as two translation units side by
// side; `--emit cpp` hands the user the same file to compile as it is. Both
// must make the same program: for the cpu and the cuda target, the
// executable NativeBuild links from the parts and the one g++ makes of the
// whole file train to the same numbers. A cubin and PTX of every byte
// value come back byte for byte, written as string literals (--emit cpp) and
// as files the assembler includes (vouch build's executables).
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "capsules/Profile.h"
#include "codegen/ModelDescription.h"
#include "codegen/ModelSource.h"
#include "codegen/NativeBuild.h"
#include "codegen/ProgramEmitter.h"
#include "gtest/gtest.h"
#include "passes/GateTestSupport.h"

namespace vouch::codegen {
namespace {

namespace fs = std::filesystem;

// The flags NativeBuild compiles generated code with (the floating-point
// ones decide the numbers compared below).
const char *kCxx = "g++ -std=c++20 -O2 -fno-math-errno -ffp-contract=off "
                   "-isystem /usr/local/cuda/include "
                   "-isystem /usr/local/cuda/include/cccl";
const char *kCudaLink =
    " /usr/local/cuda/lib64/libcudart_static.a -L/usr/local/cuda/lib64"
    " -Wl,-rpath,/usr/local/cuda/lib64 -lcublasLt -lcublas -ldl -lrt -lpthread";

std::string run(const std::string &command, int &status) {
  std::string out;
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
    out.append(chunk, n);
  status = pclose(pipe);
  return out;
}

/// Bytes a literal could get wrong: every value, octal-looking digits after
/// a NUL, quotes, backslashes, trigraph-like "??=", line ends.
std::string trickyBytes() {
  std::string bytes;
  for (int c = 0; c < 256; ++c)
    bytes += static_cast<char>(c);
  bytes += '\0';
  bytes += "123\\\"?\?=?\?/\n\r\t\x7f\xff\n";
  return bytes;
}

class ModelSourceTest : public vouch::testing::GateFixture {
protected:
  static void SetUpTestSuite() {
    dir = fs::path(::testing::TempDir()) / "model_source";
    fs::remove_all(dir);
    fs::create_directories(dir);
    setenv("VOUCH_CACHE_DIR", (dir / "cache").c_str(), 1);
  }

  /// The runtime directory NativeBuild cached (headers and archive).
  static fs::path runtimeDir() {
    for (const fs::directory_entry &e : fs::directory_iterator(dir / "cache"))
      if (fs::exists(e.path() / "libvouch_runtime.a"))
        return e.path();
    return {};
  }

  /// Builds the quickstart for `target` through NativeBuild (keeping
  /// model.cpp in `name`/), then compiles that file whole into
  /// `name`/whole; both executables train 20 steps on the cpu and must
  /// print the same. `blobFiles`: the binaries as files beside model.cpp.
  void expectWholeEqualsParts(Target target, const std::string &name,
                              bool blobFiles = false) {
    // The quickstart with the data it trains on.
    std::string text = vouch::testing::kQuickstartMlp;
    const std::string batch = "{batch = 1 : i64, ";
    text.insert(text.find(batch) + batch.size(),
                "data = #vouch.data<kind = regression_grid, "
                "lo = -1.000000e+00, hi = 1.000000e+00, n = 5>, ");
    ModelOp model = parse(text, /*differentiate=*/true);
    ASSERT_TRUE(model);
    bool cuda = target == Target::Cuda;
    auto cpuPlan =
        planAndGate(model, *capsules::parseProfileSpec("checked_cpu"));
    ASSERT_TRUE(mlir::succeeded(cpuPlan)) << joined();
    auto cpuProgram = buildProgram(model, *cpuPlan, Target::Cpu);
    ASSERT_TRUE(mlir::succeeded(cpuProgram)) << joined();
    auto description = describeModel(model);
    ASSERT_TRUE(mlir::succeeded(description)) << joined();
    ModelSourceInput input;
    input.sourceName = name;
    input.description = *description;
    input.cpu = {cpuProgram->get(), &*cpuPlan, nullptr};

    mlir::FailureOr<AcceptedGraphPlan> cudaPlan = mlir::failure();
    mlir::FailureOr<std::unique_ptr<ProgramBuilder>> cudaProgram =
        mlir::failure();
    // Two images, as a model's units give (their bytes differ, so a swap or
    // a lost image shows).
    const std::vector<CudaBinary> binaries = {
        {trickyBytes(), trickyBytes() + '\0', "sm_90"},
        {"second cubin " + trickyBytes(), "second ptx\n", "sm_90"}};
    if (cuda) {
      mlir::PassManager pm(&context);
      pm.addNestedPass<ModelOp>(createFusePointwise());
      ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
      cudaPlan =
          planAndGate(model, *capsules::parseProfileSpec("checked_cuda"));
      ASSERT_TRUE(mlir::succeeded(cudaPlan)) << joined();
      cudaProgram = buildProgram(model, *cudaPlan, Target::Cuda);
      ASSERT_TRUE(mlir::succeeded(cudaProgram)) << joined();
      input.cuda = {cudaProgram->get(), &*cudaPlan, &binaries};
    }

    NativeBuildOptions options;
    options.output = (dir / name / "parts").string();
    options.emitDir = (dir / name).string();
    options.cuda = cuda;
    std::string error;
    std::vector<SourceBlob> blobs;
    std::string emitted = emitModelSource(input, blobFiles ? &blobs : nullptr);
    // Every binary a file (the tables, each image's cubin and PTX), or none.
    EXPECT_EQ(blobs.size(), blobFiles ? (cuda ? 6u : 1u) : 0u);
    for (const char *array : {"vouch_model_kCpuTables[] =", "vouch_model_kCubin0[] =",
                              "vouch_model_kCubin1[] ="})
      if (cuda || std::string(array).find("Cubin") == std::string::npos) {
        EXPECT_EQ(emitted.find(array) == std::string::npos, blobFiles) << array;
      }
    ASSERT_TRUE(buildExecutable(emitted, options, error, blobs)) << error;
    const std::string assembler =
        blobFiles ? " -Xassembler -I" + (dir / name).string() : "";

    std::string runtime = runtimeDir().string();
    ASSERT_FALSE(runtime.empty());
    std::string source = (dir / name / "model.cpp").string();
    int status;
    std::string log =
        run(std::string(kCxx) + assembler + " -I" + runtime + " " + source + " " +
                runtime + "/libvouch_runtime.a -o " +
                (dir / name / "whole").string() + (cuda ? kCudaLink : ""),
            status);
    ASSERT_EQ(status, 0) << log;

    const std::string flags = " --device cpu --seed 7 --steps 20";
    std::string parts = run((dir / name / "parts").string() + flags, status);
    ASSERT_EQ(status, 0) << parts;
    std::string whole = run((dir / name / "whole").string() + flags, status);
    ASSERT_EQ(status, 0) << whole;
    EXPECT_NE(parts.find("mean_loss(after) = "), std::string::npos) << parts;
    EXPECT_EQ(parts, whole);
    if (!cuda)
      return;

    // Part 1 holds the binaries: read back through a program of its own.
    std::ofstream dumpSource(dir / name / "dump.cpp");
    dumpSource << "#include <cstdio>\n"
                  "extern \"C\" const char vouch_model_kCubin0[], vouch_model_kPtx0[], "
                  "vouch_model_kCubin1[], vouch_model_kPtx1[];\n"
                  "int main() {\n";
    std::string expected;
    for (int i : {0, 1}) {
      dumpSource << "  std::fwrite(vouch_model_kCubin" << i << ", 1, "
                 << binaries[i].cubin.size() << ", stdout);\n"
                 << "  std::fwrite(vouch_model_kPtx" << i << ", 1, "
                 << binaries[i].ptx.size() << ", stdout);\n";
      expected += binaries[i].cubin + binaries[i].ptx;
    }
    dumpSource << "}\n";
    dumpSource.close();
    // Part 2 hands both images to the backend, in order, with the cubins' sizes.
    EXPECT_NE(emitted.find("{vouch_model_kCubin0, " + std::to_string(binaries[0].cubin.size()) +
                           ", vouch_model_kPtx0},\n    {vouch_model_kCubin1, " +
                           std::to_string(binaries[1].cubin.size()) + ", vouch_model_kPtx1},"),
              std::string::npos)
        << emitted.substr(std::min(emitted.find("kKernelImages"), emitted.size()), 400);
    std::string dump = (dir / name / "dump").string();
    log = run(std::string(kCxx) + assembler + " -I" + runtime + " -DVOUCH_PART=1 -c " +
                  source + " -o " + dump + ".part1.o && " + kCxx + " " + dump +
                  ".cpp " + dump + ".part1.o " + runtime +
                  "/libvouch_runtime.a -o " + dump,
              status);
    ASSERT_EQ(status, 0) << log;
    std::string bytes = run(dump, status);
    ASSERT_EQ(status, 0);
    EXPECT_TRUE(bytes == expected)
        << "the cubin and PTX read back differ from the bytes emitted";
  }

  static fs::path dir;
};
fs::path ModelSourceTest::dir;

TEST_F(ModelSourceTest, CpuFileCompiledWholeIsTheProgramOfItsParts) {
  expectWholeEqualsParts(Target::Cpu, "cpu");
}

TEST_F(ModelSourceTest, CudaFileCompiledWholeIsTheProgramOfItsParts) {
  expectWholeEqualsParts(Target::Cuda, "cuda");
}

TEST_F(ModelSourceTest, WithItsBinariesAsFilesTheSameHolds) {
  expectWholeEqualsParts(Target::Cpu, "cpu_files", /*blobFiles=*/true);
  expectWholeEqualsParts(Target::Cuda, "cuda_files", /*blobFiles=*/true);
}

} // namespace
} // namespace vouch::codegen
