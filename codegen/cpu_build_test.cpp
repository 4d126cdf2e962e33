//===- cpu_build_test.cpp - emit, compile and run a cpu executable -------===//
//
// End to end without the frontend: a quickstart-shaped model in the dialect
// is differentiated, emitted as runtime tables and kernels, compiled against the embedded runtime
// and run. The executable's first-step loss must equal the reference
// interpreter's loss on the same initial params and batch; training must
// lower the loss; bad flags must be refused.
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "codegen/ModelDescription.h"
#include "codegen/ModelSource.h"
#include "codegen/NativeBuild.h"
#include "codegen/ProgramEmitter.h"
#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "capsules/Profile.h"
#include "passes/Gate.h"
#include "passes/Passes.h"

using namespace mlir;

namespace {

const char *kModel = R"mlir(
vouch.model "mlp" attributes {batch = 1 : i64,
    data = #vouch.data<kind = regression_grid, lo = -1.000000e+00, hi = 1.000000e+00, n = 5>,
    train = #vouch.train<optimizer = adam, lr = 3.000000e-02, beta1 = 9.000000e-01,
                         beta2 = 0.99899999999999999, eps = 1.000000e-08,
                         weight_decay = 0.000000e+00, steps = 200, log_every = 25>} {
  %x = vouch.input "x" : tensor<1x2xf32>
  %y = vouch.target "y" : tensor<1x1xf32>
  %w1 = vouch.param "w1" = "xavier_uniform" : tensor<8x2xf32>
  %b1 = vouch.param "b1" = "zeros" : tensor<8xf32>
  %w2 = vouch.param "w2" = "xavier_uniform" : tensor<1x8xf32>
  %b2 = vouch.param "b2" = "zeros" : tensor<1xf32>
  %h = vouch.linear %x, %w1, %b1 : (tensor<1x2xf32>, tensor<8x2xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %r = vouch.relu %h : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %p = vouch.linear %r, %w2, %b2 : (tensor<1x8xf32>, tensor<1x8xf32>, tensor<1xf32>) -> tensor<1x1xf32>
  %l = vouch.mse_loss %p, %y : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<f32>
  vouch.output "pred" %p : tensor<1x1xf32>
  vouch.loss %l : tensor<f32>
}
)mlir";

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

double valueAfter(const std::string &text, const std::string &key) {
  size_t at = text.find(key);
  EXPECT_NE(at, std::string::npos) << "no '" << key << "' in:\n" << text;
  return at == std::string::npos ? 0 : std::atof(text.c_str() + at + key.size());
}

class CpuBuild : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string tmp = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR")
                                                 : "/tmp";
    setenv("VOUCH_CACHE_DIR", (tmp + "/cache").c_str(), 1);
    exe = tmp + "/mlp";
    MLIRContext context;
    vouch::registerVouchDialect(context);
    auto module = parseSourceString<ModuleOp>(kModel, &context);
    ASSERT_TRUE(module);
    PassManager pm(&context);
    vouch::addAutodiffPasses(pm);
    ASSERT_TRUE(succeeded(pm.run(*module)));
    auto model = *module->getOps<vouch::ModelOp>().begin();
    auto plan = vouch::planAndGate(
        model, *vouch::capsules::parseProfileSpec("checked_cpu"));
    ASSERT_TRUE(succeeded(plan));
    auto program = vouch::codegen::buildProgram(model, *plan,
                                                vouch::codegen::Target::Cpu);
    ASSERT_TRUE(succeeded(program));
    auto description = vouch::codegen::describeModel(model);
    ASSERT_TRUE(succeeded(description));
    vouch::codegen::ModelSourceInput input;
    input.sourceName = "cpu_build_test";
    input.description = *description;
    input.cpu = {program->get(), &*plan, nullptr};
    source = vouch::codegen::emitModelSource(input);
    vouch::codegen::NativeBuildOptions build;
    build.output = exe;
    build.emitDir = tmp + "/emit";
    std::string error;
    ASSERT_TRUE(vouch::codegen::buildExecutable(source, build, error))
        << error;
  }
  static std::string exe, source;
};
std::string CpuBuild::exe, CpuBuild::source;

/// Entries of `dir` whose names start with `prefix`.
int entriesStartingWith(const std::string &dir, const std::string &prefix) {
  int n = 0;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}

// Issue 14: a name of 242-255 bytes failed (the `.partial.<pid>` suffix made
// it too long); an empty -o threw std::filesystem_error and left
// /tmp/vouch-build-PID/ behind. The output is linked under a short name beside
// it; a build that fails on any path leaves no work directory and no
// temporary file.
TEST_F(CpuBuild, LongNamesBuildAndFailuresLeaveNothingBehind) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "outputs";
  const fs::path tmp = fs::path(::testing::TempDir()) / "tmp";
  fs::remove_all(dir);
  fs::remove_all(tmp);
  fs::create_directories(dir);
  fs::create_directories(tmp);
  const char *oldTmp = std::getenv("TMPDIR");
  const std::string savedTmp = oldTmp ? oldTmp : "";
  setenv("TMPDIR", tmp.c_str(), 1);
  vouch::codegen::NativeBuildOptions build;
  std::string error;

  build.output = (dir / std::string(255, 'm')).string();
  ASSERT_TRUE(vouch::codegen::buildExecutable(source, build, error)) << error;
  int status;
  std::string out = run(build.output + " --steps 1", status);
  EXPECT_EQ(status, 0) << out;

  build.output = "";
  EXPECT_FALSE(vouch::codegen::buildExecutable(source, build, error));
  EXPECT_EQ(error, "cannot write a file of no name");
  build.output = (dir / "broken").string();
  EXPECT_FALSE(vouch::codegen::buildExecutable("this is not C++", build, error));
  EXPECT_NE(error.find("compiling the generated code failed"), std::string::npos) << error;
  EXPECT_EQ(entriesStartingWith(tmp.string(), "vouch-build-"), 0);
  EXPECT_EQ(entriesStartingWith(dir.string(), ".vouch-"), 0);
  EXPECT_FALSE(fs::exists(dir / "broken"));
  if (oldTmp)
    setenv("TMPDIR", savedTmp.c_str(), 1);
  else
    unsetenv("TMPDIR");
}

TEST_F(CpuBuild, TrainsAndPrintsTheQuickstartLines) {
  int status;
  std::string out = run(exe + " --device cpu --seed 0 --steps 200", status);
  ASSERT_EQ(status, 0) << out;
  double before = valueAfter(out, "mean_loss(before) = ");
  double after = valueAfter(out, "mean_loss(after) = ");
  EXPECT_LT(after, before * 0.5) << out;
  EXPECT_NE(out.find("step 0: loss="), std::string::npos) << out;
  EXPECT_NE(out.find("step 175: loss="), std::string::npos) << out;
  EXPECT_NE(out.find("  heldout: x=(0.250000,-0.750000)  target=0.200000  pred=["),
            std::string::npos) << out;
  EXPECT_NE(out.find("steps=200 loss0="), std::string::npos) << out;
  EXPECT_NE(out.find("predict(heldout) = ["), std::string::npos) << out;
}

TEST_F(CpuBuild, SameSeedSameNumbersOtherSeedOtherNumbers) {
  int s1, s2, s3;
  std::string a = run(exe + " --seed 7 --steps 20", s1);
  std::string b = run(exe + " --seed 7 --steps 20", s2);
  std::string c = run(exe + " --seed 8 --steps 20", s3);
  ASSERT_EQ(s1, 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST_F(CpuBuild, RefusesUnknownFlagsAndDevicesWithoutRuntime) {
  int status;
  std::string out = run(exe + " --frobnicate", status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--frobnicate"), std::string::npos) << out;
  out = run(exe + " --device metal", status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("device `metal` has no maintained runtime profile"),
            std::string::npos) << out;
  out = run(exe + " --device cuda", status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("CPU-only"), std::string::npos) << out;
}

TEST_F(CpuBuild, ShowBackendNamesTheReferenceCapsulesThatRan) {
  int status;
  std::string out = run(exe + " --steps 1 --show-backend", status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("backend: cpu, profile checked_cpu"), std::string::npos) << out;
  EXPECT_NE(out.find("linear: reference.linear provider=reference trust="),
            std::string::npos) << out;
  EXPECT_NE(out.find("relu: reference.relu"), std::string::npos) << out;
  EXPECT_NE(out.find("mse_loss: reference.mse_loss"), std::string::npos) << out;
  EXPECT_NE(out.find("  ran: vouch::rt::linear<T>"), std::string::npos) << out;
  EXPECT_NE(out.find("  ran: vouch_pointwise_relu"), std::string::npos) << out;
  // One entry per capsule, at first use: linear appears once.
  EXPECT_EQ(out.find("linear: reference.linear"),
            out.rfind("linear: reference.linear")) << out;
}

TEST_F(CpuBuild, TapeHasOneNodePerForwardOp) {
  int status;
  std::string out = run(exe + " --steps 1 --show-tape", status);
  ASSERT_EQ(status, 0) << out;
  for (const char *op : {"linear", "relu", "mse_loss"})
    EXPECT_NE(out.find(op), std::string::npos) << out;
}

} // namespace

namespace {

// writeFileAtomically writes a temporary file beside PATH, then renames it into
// place; a PATH that is a directory is refused with the reason, nothing is
// left beside it, and PATH is untouched.
TEST(WriteFileAtomically, ARefusedRenameNamesItsReasonAndLeavesNothing) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "atomic";
  fs::remove_all(dir);
  fs::create_directories(dir / "taken" / "child");
  std::string error;
  EXPECT_TRUE(vouch::codegen::writeFileAtomically((dir / "ok.cpp").string(), "int x;\n", error))
      << error;
  EXPECT_EQ(fs::file_size(dir / "ok.cpp"), 7u);
  EXPECT_FALSE(vouch::codegen::writeFileAtomically((dir / "taken").string(), "int x;\n", error));
  EXPECT_EQ(error, "cannot write " + (dir / "taken").string() + ": it is a directory");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
  EXPECT_TRUE(fs::is_directory(dir / "taken" / "child"));
}

} // namespace
