//===- GateReportTest.cpp - report goldens and the JSON schema -----------===//
//
// Text reports of the quickstart MLP under checked_cpu and checked_cuda
// against golden files. The goldens are vouch's own output, reviewed by hand
// when written (capsule names, providers, numeric policies, evidence, kernel
// symbols and cuBLAS flags checked against the design), not an external
// reference. To regenerate after a deliberate change, run from the
// repository root:
//   VOUCH_UPDATE_GOLDEN=1 bazel-bin/passes/gate_report_test
// and review the diff. The JSON documents must parse and carry every field
// docs/report.md documents, with its type.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "capsules/Report.h"
#include "passes/Gate.h"
#include "passes/GateTestSupport.h"
#include "runtime/json.h"

namespace vouch {
namespace {

using rt::JsonValue;
using testing::GateFixture;
using testing::kQuickstartMlp;

class Report : public GateFixture {
protected:
  AcceptedGraphPlan accept(const char *spec) {
    return accept(*capsules::parseProfileSpec(spec));
  }
  /// `text` planned and gated (differentiated when it has a loss).
  AcceptedGraphPlan accept(const capsules::BackendProfile &profile,
                           const char *text = kQuickstartMlp,
                           bool differentiate = true) {
    ModelOp model = parse(text, differentiate, "quickstart_mlp.mlir");
    auto plan = planAndGate(model, profile);
    EXPECT_TRUE(mlir::succeeded(plan)) << joined();
    return *plan;
  }

  void expectGolden(const std::string &actual, const std::string &path) {
    if (std::getenv("VOUCH_UPDATE_GOLDEN")) {
      std::ofstream(path) << actual;
      return;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in) << "missing golden " << path;
    std::stringstream golden;
    golden << in.rdbuf();
    EXPECT_EQ(actual, golden.str()) << "golden " << path << " differs";
  }

  JsonValue parseJson(const std::string &text) {
    rt::Result<JsonValue> doc = rt::parse_json(text);
    EXPECT_TRUE(doc.ok()) << doc.status().message() << "\n" << text;
    return doc.ok() ? doc.value() : JsonValue();
  }
};

TEST_F(Report, QuickstartCheckedCpuGolden) {
  expectGolden(capsules::renderText(accept("checked_cpu")),
               "capsules/testdata/quickstart_checked_cpu.txt");
}

TEST_F(Report, QuickstartCheckedCudaGolden) {
  expectGolden(capsules::renderText(accept("checked_cuda")),
               "capsules/testdata/quickstart_checked_cuda.txt");
}

TEST_F(Report, QuickstartLibraryProductsGolden) {
  // checked_cuda without the small-product rule: the cuBLAS(Lt) capsules and
  // calls with their transpose flags.
  expectGolden(capsules::renderText(accept(testing::libraryProductsCuda())),
               "capsules/testdata/quickstart_checked_cuda_library.txt");
}

TEST_F(Report, ProductPrecisionIsReported) {
  std::string text = capsules::renderText(
      accept(*capsules::parseProfileSpec("checked_cuda+tf32"), testing::kWideLinear,
             /*differentiate=*/false));
  EXPECT_NE(text.find("profile checked_cuda+tf32 (device cuda)"),
            std::string::npos);
  EXPECT_NE(text.find(") products=tf32 deterministic=off"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  products=tf32: cuBLAS GEMMs, and the fused attention's "
                      "f32 kernels (tensor cores), round their products' "
                      "operands to TF32 (10-bit mantissa), sums in f32; a GEMM "
                      "extent that is a row pitch and not a multiple of 4 is "
                      "padded with zeros (vouch_repitch_f32 copies, named in "
                      "the step's call); each capsule says what it computes in "
                      "(products=)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("reduce=library-fixed] products=tf32\n"),
            std::string::npos);

  std::string bf16 = capsules::renderText(
      accept(*capsules::parseProfileSpec("checked_cuda+bf16"), testing::kWideLinear,
             /*differentiate=*/false));
  EXPECT_NE(bf16.find("profile checked_cuda+bf16 (device cuda)"),
            std::string::npos);
  EXPECT_NE(bf16.find("  products=bf16: cuBLAS GEMMs (their operands rounded "
                      "to bf16 once each by vouch.round_bf16 steps and read in "
                      "place, or, where a row-pitch extent is padded to a "
                      "multiple of 8, by vouch_round_bf16 launches; read as "
                      "CUDA_R_16BF; a padded output copied out by "
                      "vouch_repitch_f32) and "
                      "the fused attention's f32 kernels "
                      "(tensor cores) round their products' operands to bf16 "
                      "(8-bit mantissa), sums in f32 (a qkv_attention's qkv, "
                      "where attention64.cuh takes its heads, rounded once by "
                      "a vouch.round_bf16 step and loaded as bf16); storage "
                      "stays f32 "
                      "(activations, gradients, params, optimizer state) but "
                      "for those bf16 operands; each "
                      "capsule says what it computes in (products=)\n"),
            std::string::npos)
      << bf16;
  EXPECT_NE(bf16.find("reduce=library-fixed] products=bf16\n"),
            std::string::npos);
  // The call names the rounding launches that run before it (this plan
  // did not run vouch-round-bf16-operands: its operands are f32).
  EXPECT_NE(bf16.find("cublasLtMatmul(transa=T, transb=N, A=weight, B=input, "
                      "epilogue=BIAS, A/B rounded to bf16 by vouch_round_bf16)"),
            std::string::npos)
      << bf16;
}

//===----------------------------------------------------------------------===//
// JSON: every documented field, with its type (docs/report.md)
//===----------------------------------------------------------------------===//

using Kind = JsonValue::Kind;

/// The members of `object` are exactly `fields`, in order, of those kinds
/// (Null accepted where `nullable`).
void expectFields(const JsonValue &object,
                  const std::vector<std::pair<std::string, Kind>> &fields,
                  const std::string &where,
                  const std::set<std::string> &nullable = {}) {
  ASSERT_EQ(object.kind, Kind::Object) << where;
  std::vector<std::string> names;
  for (const auto &[name, kind] : fields)
    names.push_back(name);
  EXPECT_EQ(object.keys, names) << where;
  for (const auto &[name, kind] : fields) {
    const JsonValue *v = object.find(name);
    ASSERT_NE(v, nullptr) << where << "." << name;
    if (v->kind == Kind::Null && nullable.count(name))
      continue;
    EXPECT_EQ(v->kind, kind) << where << "." << name;
  }
}

void expectHead(const JsonValue &doc) {
  EXPECT_EQ(doc.find("schema")->text, "vouch.report/1");
}

TEST_F(Report, JsonOfAnAcceptedPlanHasEveryDocumentedField) {
  for (const char *spec : {"checked_cpu", "checked_cuda"}) {
    JsonValue doc = parseJson(capsules::renderJson(accept(spec)));
    expectFields(doc,
                 {{"schema", Kind::String},
                  {"model", Kind::String},
                  {"profile", Kind::String},
                  {"device", Kind::String},
                  {"accepted", Kind::Bool},
                  {"assurance", Kind::String},
                  {"accepted_trust", Kind::Array},
                  {"products", Kind::String},
                  {"deterministic", Kind::Bool},
                  {"require_evidence", Kind::Bool},
                  {"abi", Kind::String},
                  {"capsules", Kind::Array},
                  {"ops", Kind::Array},
                  {"step", Kind::Array},
                  {"lowering", Kind::Array},
                  {"rejections", Kind::Array}},
                 "report");
    expectHead(doc);
    EXPECT_EQ(doc.find("model")->text, "quickstart_mlp");
    EXPECT_EQ(doc.find("profile")->text, spec);
    EXPECT_TRUE(doc.find("accepted")->boolean);
    EXPECT_TRUE(doc.find("rejections")->items.empty());
    ASSERT_FALSE(doc.find("capsules")->items.empty());
    for (const JsonValue &c : doc.find("capsules")->items) {
      expectFields(c,
                   {{"name", Kind::String},
                    {"op", Kind::String},
                    {"provider", Kind::String},
                    {"device", Kind::String},
                    {"trust", Kind::String},
                    {"supports_forward", Kind::Bool},
                    {"vjp", Kind::String},
                    {"numeric", Kind::Object},
                    {"max_rank", Kind::Number},
                    {"accepts_transpose_flags", Kind::Bool},
                    {"contracts", Kind::Object}},
                   "capsule");
      expectFields(*c.find("numeric"),
                   {{"round", Kind::String},
                    {"subnormal", Kind::String},
                    {"contract", Kind::String},
                    {"reduce", Kind::String},
                    {"fastest_products", Kind::String},
                    {"products", Kind::String},
                    {"text", Kind::String}},
                   "numeric");
      const JsonValue &contracts = *c.find("contracts");
      expectFields(contracts,
                   {{"shape", Kind::Object},
                    {"layout", Kind::Object},
                    {"value", Kind::Object},
                    {"vjp", Kind::Object}},
                   "contracts");
      for (const JsonValue &d : contracts.items) {
        expectFields(d,
                     {{"claim", Kind::String},
                      {"summary", Kind::String},
                      {"evidence", Kind::Object},
                      {"provenance", Kind::Object}},
                     "contract");
        expectFields(*d.find("evidence"),
                     {{"kind", Kind::String}, {"reference", Kind::String}},
                     "evidence", {"reference"});
        expectFields(*d.find("provenance"),
                     {{"source", Kind::String},
                      {"symbol", Kind::String},
                      {"note", Kind::String}},
                     "provenance");
      }
    }
    ASSERT_FALSE(doc.find("ops")->items.empty());
    for (const JsonValue &op : doc.find("ops")->items)
      expectFields(op,
                   {{"index", Kind::Number},
                    {"node", Kind::Number},
                    {"direction", Kind::String},
                    {"step", Kind::Number},
                    {"op", Kind::String},
                    {"capsule", Kind::String},
                    {"kernel", Kind::String},
                    {"fusion", Kind::String},
                    {"location", Kind::String},
                    {"composed_from", Kind::String},
                    {"form", Kind::String},
                    {"element_type", Kind::String},
                    {"operand_shapes", Kind::Array},
                    {"result_shapes", Kind::Array},
                    {"transpose_lhs", Kind::Bool},
                    {"transpose_rhs", Kind::Bool},
                    {"call", Kind::String},
                    {"state", Kind::Array},
                    {"classes", Kind::Number}},
                   "op", {"call", "fusion", "composed_from", "form", "classes"});
    // The step's own work: batch selection, then the quickstart's Adam.
    const std::vector<JsonValue> &step = doc.find("step")->items;
    ASSERT_EQ(step.size(), 2u);
    for (const JsonValue &work : step)
      expectFields(work,
                   {{"role", Kind::String},
                    {"capsule", Kind::String},
                    {"kernel", Kind::String}},
                   "step");
    bool cuda = std::string(spec) == "checked_cuda";
    EXPECT_EQ(step[0].find("capsule")->text,
              cuda ? "native_cuda.select_batch" : "reference.select_batch");
    EXPECT_EQ(step[1].find("role")->text, "optimizer adam");
    EXPECT_EQ(step[1].find("capsule")->text,
              cuda ? "native_cuda.adam_step" : "reference.adam_step");
    EXPECT_EQ(step[1].find("kernel")->text,
              cuda ? "vouch_optimizer_<t>" : "vouch::rt::Optimizer<T>::step");
    for (const JsonValue &g : doc.find("lowering")->items)
      expectFields(g,
                   {{"capsule", Kind::String},
                    {"first", Kind::Number},
                    {"count", Kind::Number}},
                   "lowering");
  }
}

TEST_F(Report, JsonOfTheCudaPlanNamesKernelsAndCalls) {
  JsonValue doc =
      parseJson(capsules::renderJson(accept(testing::libraryProductsCuda())));
  const JsonValue &first = doc.find("ops")->items.front();
  EXPECT_EQ(first.find("kernel")->text, "quickstart_mlp_n0_linear");
  EXPECT_EQ(first.find("capsule")->text, "cublaslt.linear");
  EXPECT_EQ(first.find("call")->text,
            "cublasLtMatmul(transa=T, transb=N, A=weight, B=input, "
            "epilogue=BIAS)");
  EXPECT_EQ(first.find("location")->text, "quickstart_mlp.mlir:8:8");
  EXPECT_EQ(doc.find("abi")->text, "uint32");
  EXPECT_EQ(doc.find("capsules")->items.front().find("numeric")->find("text")
                ->text,
            "numeric=[round=nearest-even,subnormal=implementation-defined,"
            "contract=implementation-defined,reduce=library-fixed]");
}

TEST_F(Report, JsonOfARejectionListsEveryFailure) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  GateRejection rejection;
  ASSERT_TRUE(mlir::failed(
      planAndGate(model, *capsules::lookupProfile("libtorch_forward_cuda"), {},
                  &rejection)));
  JsonValue doc = parseJson(capsules::renderRejectionJson(rejection));
  expectFields(doc,
               {{"schema", Kind::String},
                {"model", Kind::String},
                {"profile", Kind::String},
                {"device", Kind::String},
                {"accepted", Kind::Bool},
                {"capsules", Kind::Array},
                {"ops", Kind::Array},
                {"step", Kind::Array},
                {"lowering", Kind::Array},
                {"rejections", Kind::Array}},
               "rejection report");
  expectHead(doc);
  EXPECT_FALSE(doc.find("accepted")->boolean);
  const std::vector<JsonValue> &failures = doc.find("rejections")->items;
  ASSERT_EQ(failures.size(), 1u);
  expectFields(failures[0],
               {{"obligation", Kind::String},
                {"op", Kind::String},
                {"location", Kind::String},
                {"message", Kind::String}},
               "rejection", {"op"});
  EXPECT_EQ(failures[0].find("obligation")->text, "profile");
  EXPECT_EQ(failures[0].find("op")->kind, Kind::Null);
  EXPECT_EQ(capsules::renderRejectionText(rejection),
            "gate.mlir:1:1: error: [profile] profile `libtorch_forward_cuda` "
            "needs provider `libtorch`, but no LibTorch provider is linked "
            "into this build\n"
            "assurance gate rejected model `quickstart_mlp` under profile "
            "`libtorch_forward_cuda`: 1 failed obligation\n");
}

} // namespace
} // namespace vouch
