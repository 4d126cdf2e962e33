//===- GateTest.cpp - every obligation of the assurance gate -------------===//
//
// One case per rejection (no capsule, UInt32 overflow, forward-only op on
// the gradient path, trusted-external under the checked policy, provider /
// device mismatch, device without profile, LibTorch not linked, numerics,
// determinism, evidence, layout, rank, op identity, symbols), each checking
// the diagnostic word for word with its location; then a model with several
// problems whose rejection lists every one of them, and the accepted plans
// of the quickstart MLP. Test registries are the default one with a capsule
// removed or replaced.
//
//===----------------------------------------------------------------------===//
#include <map>
#include <type_traits>

#include "capsules/Registry.h"
#include "passes/Gate.h"
#include "capsules/Evidence.h"
#include "passes/GateTestSupport.h"

namespace vouch {
namespace {

using capsules::BackendProfile;
using capsules::CapsuleRegistry;
using capsules::Direction;
using capsules::KernelCapsule;
using capsules::Obligation;
using testing::GateFixture;
using testing::kQuickstartMlp;
using testing::libraryProductsCuda;

// The plan type can only be made by the gate: no public constructor of any
// kind (copies of an accepted plan are fine).
static_assert(!std::is_default_constructible_v<AcceptedGraphPlan>);
static_assert(!std::is_constructible_v<
              AcceptedGraphPlan, std::string, BackendProfile,
              const GateOptions &, std::vector<capsules::PlannedOp>,
              std::vector<capsules::StepWork>, std::vector<KernelCapsule>>);
static_assert(std::is_copy_constructible_v<AcceptedGraphPlan>);

BackendProfile profile(const char *spec) {
  capsules::Expected<BackendProfile> p = capsules::parseProfileSpec(spec);
  EXPECT_TRUE(p.ok()) << p.error();
  return *p;
}

/// The default registry with `name` replaced by `edit(copy of it)`.
template <class Edit>
CapsuleRegistry replaced(const std::string &name, Edit edit) {
  CapsuleRegistry r = capsules::makeDefaultRegistry();
  KernelCapsule c = *r.find(name);
  EXPECT_TRUE(r.remove(name).ok());
  edit(c);
  capsules::Status added = r.add(c);
  EXPECT_TRUE(added.ok()) << added.error();
  return r;
}

const char *kReluModel = R"mlir(vouch.model "one" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4xf32>
  %r = vouch.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  vouch.output "r" %r : tensor<4xf32>
}
)mlir";

class Gate : public GateFixture {
protected:
  mlir::FailureOr<AcceptedGraphPlan> gate(ModelOp model, const char *spec,
                                          GateOptions options = {}) {
    rejection = {};
    return gate(model, profile(spec), options);
  }
  mlir::FailureOr<AcceptedGraphPlan> gate(ModelOp model,
                                          const capsules::BackendProfile &p,
                                          GateOptions options = {}) {
    rejection = {};
    return planAndGate(model, p, options, &rejection);
  }
  /// The failures of the last rejection, as `[obligation] message`.
  std::vector<std::string> failures() const {
    std::vector<std::string> out;
    for (const capsules::GateFailure &f : rejection.failures)
      out.push_back("[" + std::string(toString(f.obligation)) + "] " +
                    f.message);
    return out;
  }
  GateRejection rejection;
};

//===----------------------------------------------------------------------===//
// Accepted plans
//===----------------------------------------------------------------------===//

TEST_F(Gate, AcceptsTheQuickstartOnCpu) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  auto plan = gate(model, "checked_cpu");
  ASSERT_TRUE(mlir::succeeded(plan)) << joined();
  EXPECT_TRUE(diagnostics.empty()) << joined();
  EXPECT_EQ(plan->model(), "quickstart_mlp");
  EXPECT_EQ(plan->profile().name, "checked_cpu");
  const std::vector<capsules::PlannedOp> &ops = plan->ops();
  ASSERT_GT(ops.size(), 4u);
  EXPECT_EQ(ops[0].op, "linear");
  EXPECT_EQ(ops[0].direction, Direction::Forward);
  EXPECT_EQ(ops[0].capsule, "reference.linear");
  EXPECT_EQ(ops[0].kernel, "quickstart_mlp_n0_linear");
  EXPECT_EQ(ops[0].location, "gate.mlir:8:8");
  EXPECT_EQ(ops[0].operandShapes,
            (std::vector<std::vector<int64_t>>{{1, 2}, {8, 2}, {8}}));
  EXPECT_EQ(ops[0].resultShapes,
            (std::vector<std::vector<int64_t>>{{1, 8}}));
  EXPECT_EQ(ops[0].elementType, "f32");
  EXPECT_EQ(ops[0].call, "");
  EXPECT_EQ(ops[4].direction, Direction::Backward);
  EXPECT_EQ(ops[4].node, 3);
  for (const capsules::PlannedOp &op : ops)
    EXPECT_EQ(plan->capsule(op).name, op.capsule);
  // Codegen finds each op's entry through its kernel symbol.
  const capsules::PlannedOp *relu = plannedOpOf(*plan, nth(model, "relu"));
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->kernel, "quickstart_mlp_n1_relu");
  EXPECT_EQ(plan->capsule(*relu).name, "reference.relu");
  EXPECT_EQ(plannedOpOf(*plan, nth(model, "param")), nullptr);
  // Each capsule once, in order of first use.
  EXPECT_EQ(plan->capsules()[0].name, "reference.linear");
  EXPECT_EQ(plan->capsules()[1].name, "reference.relu");
}

TEST_F(Gate, AcceptsTheQuickstartOnCudaWithNoLibraryCall) {
  // Every product of the quickstart is small: vouch's own kernel.
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  auto plan = gate(model, "checked_cuda");
  ASSERT_TRUE(mlir::succeeded(plan)) << joined();
  for (const capsules::PlannedOp &op : plan->ops())
    EXPECT_TRUE(op.call.empty()) << op.kernel << " " << op.call;
}

TEST_F(Gate, AcceptsTheQuickstartOnCudaWithLibraryCalls) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  auto plan = gate(model, libraryProductsCuda());
  ASSERT_TRUE(mlir::succeeded(plan)) << joined();
  std::vector<std::string> calls;
  for (const capsules::PlannedOp &op : plan->ops())
    if (!op.call.empty())
      calls.push_back(op.kernel + " " + op.call);
  EXPECT_EQ(calls,
            (std::vector<std::string>{
                "quickstart_mlp_n0_linear cublasLtMatmul(transa=T, transb=N, "
                "A=weight, B=input, epilogue=BIAS)",
                "quickstart_mlp_n2_linear cublasLtMatmul(transa=T, transb=N, "
                "A=weight, B=input, epilogue=BIAS)",
                // dX = dY·W: no flag; dW = dYᵀ·X: transpose_lhs.
                "quickstart_mlp_b2_0_matmul cublasGemmEx(transa=N, transb=N, "
                "A=rhs, B=lhs)",
                "quickstart_mlp_b2_1_matmul cublasGemmEx(transa=N, transb=T, "
                "A=rhs, B=lhs)",
                "quickstart_mlp_b0_0_matmul cublasGemmEx(transa=N, transb=T, "
                "A=rhs, B=lhs)",
            }));
}

// A model that trains also selects its batch and runs an optimizer each step:
// the gate plans those under the step catalog's capsules, for every optimizer
// the train clause can name, on cpu and cuda.
TEST_F(Gate, PlansTheStepsOwnWorkForEveryOptimizer) {
  const std::map<std::string, std::string> hyperParameters = {
      {"sgd", "lr = 1.000000e-01, weight_decay = 0.000000e+00, momentum = 9.000000e-01"},
      {"adam", "lr = 1.000000e-01, beta1 = 9.000000e-01, beta2 = 9.990000e-01, "
               "eps = 1.000000e-08, weight_decay = 0.000000e+00"},
      {"adamw", "lr = 1.000000e-01, beta1 = 9.000000e-01, beta2 = 9.990000e-01, "
                "eps = 1.000000e-08, weight_decay = 1.000000e-02, "
                "decay_min_rank = 2.000000e+00"},
      {"rmsprop", "lr = 1.000000e-01, eps = 1.000000e-08, weight_decay = 0.000000e+00, "
                  "momentum = 0.000000e+00, alpha = 9.900000e-01"},
      {"adagrad", "lr = 1.000000e-01, eps = 1.000000e-10, weight_decay = 0.000000e+00, "
                  "lr_decay = 0.000000e+00"}};
  for (unsigned k = 0; k <= getMaxEnumValForOptimizerKind(); ++k) {
    std::string optimizer = stringifyOptimizerKind(*symbolizeOptimizerKind(k)).str();
    ASSERT_TRUE(hyperParameters.count(optimizer)) << optimizer;
    std::string text = kQuickstartMlp;
    size_t from = text.find("optimizer = "), to = text.find(", steps = ");
    text.replace(from, to - from,
                 "optimizer = " + optimizer + ", " + hyperParameters.at(optimizer));
    for (auto [spec, provider] : {std::pair{"checked_cpu", "reference"},
                                  std::pair{"checked_cuda", "native_cuda"}}) {
      auto plan = gate(parse(text, /*differentiate=*/true), spec);
      ASSERT_TRUE(mlir::succeeded(plan)) << optimizer << " " << spec << ": " << joined();
      const std::vector<capsules::StepWork> &work = plan->stepWork();
      ASSERT_EQ(work.size(), 2u);
      EXPECT_EQ(work[0].role, "batch selection");
      EXPECT_EQ(work[0].capsule, std::string(provider) + ".select_batch");
      EXPECT_EQ(work[1].role, "optimizer " + optimizer);
      EXPECT_EQ(work[1].capsule, std::string(provider) + "." + optimizer + "_step");
      EXPECT_EQ(plan->capsule(work[1]).name, work[1].capsule);  // in capsules()
    }
  }
  // Clipping: its own capsule, planned between batch selection and the
  // optimizer (the launch order ProgramEmitter and the executor keep).
  {
    std::string text = kQuickstartMlp;
    size_t at = text.find(">", text.find("log_every = "));
    text.insert(at, ", clip_grad_norm = 5.000000e-01");
    for (auto [spec, provider] : {std::pair{"checked_cpu", "reference"},
                                  std::pair{"checked_cuda", "native_cuda"}}) {
      auto plan = gate(parse(text, /*differentiate=*/true), spec);
      ASSERT_TRUE(mlir::succeeded(plan)) << spec << ": " << joined();
      const std::vector<capsules::StepWork> &work = plan->stepWork();
      ASSERT_EQ(work.size(), 3u);
      EXPECT_EQ(work[1].role, "gradient clipping");
      EXPECT_EQ(work[1].capsule, std::string(provider) + ".clip_grad_norm");
      EXPECT_EQ(work[2].capsule, std::string(provider) + ".adam_step");
    }
  }
  // No train clause: no step.
  auto plan = gate(parse(testing::kWideLinear), "checked_cuda");
  ASSERT_TRUE(mlir::succeeded(plan)) << joined();
  EXPECT_TRUE(plan->stepWork().empty());
}

TEST_F(Gate, RejectsATrainingModelWithoutAnOptimizerCapsule) {
  CapsuleRegistry registry = capsules::makeDefaultRegistry();
  ASSERT_TRUE(registry.remove("native_cuda.adam_step").ok());
  // The step's capsules pass the same policy checks as an op's.
  CapsuleRegistry external = replaced("native_cuda.select_batch", [](KernelCapsule &c) {
    c.trust = capsules::TrustLevel::TrustedExternal;
  });
  std::string text = kQuickstartMlp;  // trained with Adam
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(parse(text, /*differentiate=*/true), "checked_cuda", options)));
  EXPECT_EQ(failures(), (std::vector<std::string>{
                            "[capsule] no capsule `native_cuda.adam_step` for the step's "
                            "optimizer adam in the registry"}));
  options.registry = &external;
  EXPECT_TRUE(mlir::failed(gate(parse(text, /*differentiate=*/true), "checked_cuda", options)));
  ASSERT_EQ(failures().size(), 1u);
  EXPECT_EQ(failures()[0].rfind("[trust] capsule `native_cuda.select_batch`", 0), 0u)
      << failures()[0];
}

TEST_F(Gate, CoalescesAdjacentOpsWithOneCapsule) {
  ModelOp model = parse(R"mlir(vouch.model "chain" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4xf32>
  %b = vouch.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = vouch.add %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = vouch.relu %c : (tensor<4xf32>) -> tensor<4xf32>
  %e = vouch.add %d, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  vouch.output "e" %e : tensor<4xf32>
}
)mlir");
  auto plan = gate(model, "checked_cuda");
  ASSERT_TRUE(mlir::succeeded(plan)) << joined();
  std::vector<std::string> groups;
  for (const capsules::CoalescedGroup &g : plan->coalesced())
    groups.push_back(g.capsule + "@" + std::to_string(g.first) + "x" +
                     std::to_string(g.count));
  EXPECT_EQ(groups, (std::vector<std::string>{"native_cuda.add@0x2",
                                              "native_cuda.relu@2x1",
                                              "native_cuda.add@3x1"}));
  EXPECT_EQ(plan->capsules().size(), 2u);
}

TEST_F(Gate, GatingLeavesTheModelAsPlanned) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  planModel(model, profile("checked_cuda"), capsules::defaultRegistry());
  std::string before, after;
  llvm::raw_string_ostream(before) << *module;
  ASSERT_TRUE(mlir::succeeded(gateModel(model, profile("checked_cuda"))));
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(before, after);
}

//===----------------------------------------------------------------------===//
// One rejection per obligation
//===----------------------------------------------------------------------===//

TEST_F(Gate, RejectsAnOpWithoutCapsule) {
  CapsuleRegistry registry = capsules::makeDefaultRegistry();
  ASSERT_TRUE(registry.remove("native_cuda.relu").ok());
  ModelOp model = parse(kReluModel);
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cuda", options)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[capsule] no capsule for vouch.relu on device cuda under "
                "profile `checked_cuda` (providers tried: native-cuda, "
                "cublaslt, cublas, cufft)"}));
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:3:8: assurance gate [capsule]: no capsule for vouch.relu on "
      "device cuda under profile `checked_cuda` (providers tried: "
      "native-cuda, cublaslt, cublas, cufft)"))
      << joined();
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:1:1: assurance gate rejected model `one` under profile "
      "`checked_cuda`: 1 failed obligation (capsule)"))
      << joined();
  // The cpu capsule of the same op is never a fallback.
  EXPECT_EQ(mlir::cast<ModelOp>(model)->getAttr(kCapsuleAttr), nullptr);
  EXPECT_EQ(rejection.failures[0].op, "relu");
  EXPECT_EQ(rejection.failures[0].location, "gate.mlir:3:8");
}

TEST_F(Gate, RejectsElementCountsBeyondUInt32OnCuda) {
  const char *big = R"mlir(vouch.model "big" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<65536x65537xf32>
  %b = vouch.add %a, %a : (tensor<65536x65537xf32>, tensor<65536x65537xf32>) -> tensor<65536x65537xf32>
  vouch.output "b" %b : tensor<65536x65537xf32>
}
)mlir";
  ModelOp model = parse(big);
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cuda")));
  std::string tail = " (tensor<65536x65537xf32>) has 4295032832 elements, "
                     "more than the UInt32 CUDA ABI allows (4294967295): its "
                     "last index does not fit";
  EXPECT_EQ(failures(), (std::vector<std::string>{
                            "[uint32-abi] operand 0" + tail,
                            "[uint32-abi] operand 1" + tail,
                            "[uint32-abi] the result" + tail}));
  EXPECT_TRUE(hasDiagnostic("gate.mlir:3:8: assurance gate [uint32-abi]: "
                            "the result" + tail))
      << joined();
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:1:1: assurance gate rejected model `big` under profile "
      "`checked_cuda`: 3 failed obligations (uint32-abi ×3)"))
      << joined();
  // The host kernels index with int64: the same model is fine on cpu.
  diagnostics.clear();
  EXPECT_TRUE(mlir::succeeded(gate(model, "checked_cpu"))) << joined();
}

TEST_F(Gate, RejectsAnAxisBeyondUInt32) {
  ModelOp model = parse(R"mlir(vouch.model "wide" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<1x4294967296xf32>
  %b = vouch.relu %a : (tensor<1x4294967296xf32>) -> tensor<1x4294967296xf32>
  vouch.output "b" %b : tensor<1x4294967296xf32>
}
)mlir");
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cuda")));
  std::vector<std::string> f = failures();
  ASSERT_EQ(f.size(), 4u) << joined();
  EXPECT_EQ(f[0], "[uint32-abi] axis 1 of operand 0 has extent 4294967296, "
                  "more than the UInt32 CUDA ABI allows (4294967295)");
}

TEST_F(Gate, RejectsAForwardOnlyOpOnTheGradientPath) {
  CapsuleRegistry registry = replaced("reference.relu", [](KernelCapsule &c) {
    c.name = "test.relu";
    c.vjpMode = capsules::VjpMode::None;
  });
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cpu", options)));
  EXPECT_EQ(failures(), (std::vector<std::string>{
                            "[vjp] node 1 lies on the gradient path, but "
                            "capsule `test.relu` is forward-only (vjp=none)"}));
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:9:8: assurance gate [vjp]: node 1 lies on the gradient path, "
      "but capsule `test.relu` is forward-only (vjp=none)"))
      << joined();
  // Off the gradient path (no autodiff), forward-only is fine.
  diagnostics.clear();
  EXPECT_TRUE(mlir::succeeded(gate(parse(kReluModel), "checked_cpu", options)))
      << joined();
}

TEST_F(Gate, RejectsTrustedExternalUnderTheCheckedPolicy) {
  CapsuleRegistry registry = replaced("reference.relu", [](KernelCapsule &c) {
    c.trust = capsules::TrustLevel::TrustedExternal;
  });
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(parse(kReluModel), "checked_cpu", options)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[trust] capsule `reference.relu` has trust level "
                "trusted-external; profile `checked_cpu` (assurance policy "
                "checked) accepts verified, checked"}));
}

TEST_F(Gate, RejectsAProviderDeviceMismatch) {
  // A capsule registered for cuda that claims the cpu reference provider.
  CapsuleRegistry registry = replaced("native_cuda.relu", [](KernelCapsule &c) {
    c.name = "bogus.relu";
    c.provider = capsules::Provider::Reference;
  });
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(parse(kReluModel), "checked_cuda", options)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[identity] capsule `bogus.relu` claims provider reference on "
                "device cuda, where reference does not run",
                "[identity] profile `checked_cuda` does not use provider "
                "reference (capsule `bogus.relu`); it uses native-cuda, "
                "cublaslt, cublas, cufft"}));
}

TEST_F(Gate, RejectsACapsuleOfAnotherOpOrDevice) {
  ModelOp model = parse(kReluModel);
  mlir::Operation *relu = nth(model, "relu");
  relu->setAttr(kCapsuleAttr, mlir::StringAttr::get(&context, "reference.add"));
  relu->setAttr(kKernelAttr, mlir::StringAttr::get(&context, "one_n0_relu"));
  EXPECT_TRUE(mlir::failed(
      gateModel(model, profile("checked_cuda"), {}, &rejection)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[identity] capsule `reference.add` implements vouch.add, not "
                "vouch.relu",
                "[identity] capsule `reference.add` runs on device cpu, but "
                "profile `checked_cuda` targets cuda",
                "[identity] profile `checked_cuda` does not use provider "
                "reference (capsule `reference.add`); it uses native-cuda, "
                "cublaslt, cublas, cufft"}));
}

TEST_F(Gate, RejectsAModelPlannedForAnotherProfile) {
  ModelOp model = parse(kReluModel);
  planModel(model, profile("checked_cpu"), capsules::defaultRegistry());
  EXPECT_TRUE(mlir::failed(
      gateModel(model, profile("checked_cuda"), {}, &rejection)));
  std::vector<std::string> f = failures();
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0], "[profile] the model was planned for profile "
                  "`checked_cpu`, not `checked_cuda`");
  EXPECT_EQ(rejection.failures[0].op, "");
  EXPECT_EQ(rejection.failures[0].location, "gate.mlir:1:1");
}

TEST_F(Gate, DeviceWithoutProfileNeverReachesTheGate) {
  for (const char *device : {"rocm", "metal"}) {
    capsules::Expected<BackendProfile> p =
        capsules::profileForDeviceName(device);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error(), "device `" + std::string(device) +
                             "` has no maintained runtime profile");
  }
}

TEST_F(Gate, RejectsLibtorchForwardCudaWhileLibtorchIsNotLinked) {
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  EXPECT_TRUE(mlir::failed(gate(model, "libtorch_forward_cuda")));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[profile] profile `libtorch_forward_cuda` needs provider "
                "`libtorch`, but no LibTorch provider is linked into this "
                "build"}));
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:1:1: assurance gate [profile]: profile "
      "`libtorch_forward_cuda` needs provider `libtorch`, but no LibTorch "
      "provider is linked into this build"))
      << joined();
}

TEST_F(Gate, RejectsALibtorchCapsuleAsUnavailable) {
  CapsuleRegistry registry = capsules::makeDefaultRegistry();
  KernelCapsule torch = *registry.find("native_cuda.relu");
  torch.name = "libtorch.relu";
  torch.provider = capsules::Provider::Libtorch;
  torch.trust = capsules::TrustLevel::TrustedExternal;
  ASSERT_TRUE(registry.add(torch).ok());
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(
      gate(parse(kReluModel), "libtorch_forward_cuda", options)));
  std::vector<std::string> f = failures();
  ASSERT_EQ(f.size(), 2u) << joined();
  EXPECT_EQ(f[1], "[availability] capsule `libtorch.relu` needs provider "
                  "libtorch, but no LibTorch provider is linked into this "
                  "build");
}

TEST_F(Gate, RejectsNumericsTheProfileDoesNotAllow) {
  CapsuleRegistry registry =
      replaced("reference.reduce_sum", [](KernelCapsule &c) {
        c.numeric.reduce = capsules::ReductionOrder::ImplementationDefined;
        c.numeric.contract = capsules::Contraction::ImplementationDefined;
      });
  GateOptions options;
  options.registry = &registry;
  ModelOp model = parse(R"mlir(vouch.model "sum" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4x3xf32>
  %s = vouch.reduce_sum %a axes [0] : (tensor<4x3xf32>) -> tensor<3xf32>
  vouch.output "s" %s : tensor<3xf32>
}
)mlir");
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cpu", options)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[numerics] capsule `reference.reduce_sum` declares "
                "contract=implementation-defined; profile `checked_cpu` "
                "requires contract=none",
                "[numerics] capsule `reference.reduce_sum` declares "
                "reduce=implementation-defined; profile `checked_cpu` requires "
                "reduce=left-fold or none"}));
  // A library's fixed order is not the left fold either.
  CapsuleRegistry library =
      replaced("reference.reduce_sum", [](KernelCapsule &c) {
        c.numeric.reduce = capsules::ReductionOrder::LibraryFixed;
      });
  options.registry = &library;
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cpu", options)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[numerics] capsule `reference.reduce_sum` declares "
                "reduce=library-fixed; profile `checked_cpu` requires "
                "reduce=left-fold or none"}));
}

TEST_F(Gate, DeterminismWhenRequested) {
  GateOptions deterministic;
  deterministic.deterministic = true;
  ModelOp model = parse(kQuickstartMlp, /*differentiate=*/true);
  EXPECT_TRUE(mlir::succeeded(gate(model, "checked_cpu", deterministic)))
      << joined();
  // On cuda the quickstart's products are vouch's left folds: accepted.
  EXPECT_TRUE(mlir::succeeded(gate(model, "checked_cuda", deterministic)))
      << joined();
  // cuBLAS(Lt) products sum in the library's order, fixed under vouch's
  // configuration (reduce=library-fixed): accepted too, forward (cublaslt)
  // and backward (cublas).
  auto library = gate(model, libraryProductsCuda(), deterministic);
  ASSERT_TRUE(mlir::succeeded(library)) << joined();
  bool lt = false, gemm = false;
  for (const KernelCapsule &c : library->capsules()) {
    lt |= c.name == "cublaslt.linear";
    gemm |= c.name == "cublas.matmul";
  }
  EXPECT_TRUE(lt && gemm);
  EXPECT_TRUE(library->deterministic());
  // A linear too large for the small-product rule, under the plain profile.
  auto wide = gate(parse(testing::kWideLinear), "checked_cuda", deterministic);
  ASSERT_TRUE(mlir::succeeded(wide)) << joined();
  ASSERT_EQ(wide->ops().size(), 1u);
  EXPECT_EQ(wide->ops()[0].capsule, "cublaslt.linear");
  EXPECT_EQ(wide->capsules()[0].numeric.reduce,
            capsules::ReductionOrder::LibraryFixed);
}

TEST_F(Gate, DeterminismRejectsAnImplementationDefinedOrder) {
  CapsuleRegistry registry =
      replaced("cublaslt.linear", [](KernelCapsule &c) {
        c.numeric.reduce = capsules::ReductionOrder::ImplementationDefined;
      });
  GateOptions deterministic;
  deterministic.deterministic = true;
  deterministic.registry = &registry;
  ModelOp model = parse(testing::kWideLinear);
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cuda", deterministic)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[determinism] determinism was requested, but capsule "
                "`cublaslt.linear` declares reduce=implementation-defined: "
                "its summation order may change from run to run "
                "(determinism accepts none, left-fold, fixed-order-tree, "
                "library-fixed)"}));
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:5:8: assurance gate [determinism]: determinism was "
      "requested, but capsule `cublaslt.linear` declares "
      "reduce=implementation-defined: its summation order may change from "
      "run to run (determinism accepts none, left-fold, fixed-order-tree, "
      "library-fixed)"))
      << joined();
  // Without the request the profile allows it.
  GateOptions plain;
  plain.registry = &registry;
  EXPECT_TRUE(mlir::succeeded(gate(model, "checked_cuda", plain))) << joined();
}

TEST_F(Gate, EvidenceWhenRequested) {
  // A capsule whose layout and value contracts cite nothing is refused when
  // evidence is required (the default catalog's CUDA capsules cite the GPU
  // suite, so one is stripped of its evidence here).
  CapsuleRegistry registry = replaced("native_cuda.relu", [](KernelCapsule &c) {
    c.layout.evidence = capsules::uncitedEvidence(capsules::EvidenceKind::NotProvided);
    c.value.evidence = capsules::uncitedEvidence(capsules::EvidenceKind::NotProvided);
  });
  GateOptions strict;
  strict.requireEvidence = true;
  strict.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(parse(kReluModel), "checked_cuda", strict)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[evidence] capsule `native_cuda.relu` provides no evidence "
                "for its layout contract",
                "[evidence] capsule `native_cuda.relu` provides no evidence "
                "for its value contract"}));
  // The cpu reference relu cites tests for every contract.
  EXPECT_TRUE(mlir::succeeded(gate(parse(kReluModel), "checked_cpu", strict)))
      << joined();
}

TEST_F(Gate, RejectsTransposeFlagsTheCapsuleCannotRead) {
  CapsuleRegistry registry = replaced("cublas.matmul", [](KernelCapsule &c) {
    c.acceptsTransposeFlags = false;
  });
  GateOptions options;
  options.registry = &registry;
  ModelOp model = parse(R"mlir(vouch.model "mm" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4x3xf32>
  %b = vouch.input "b" : tensor<4x5xf32>
  %c = vouch.matmul %a, %b {transpose_lhs} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  vouch.output "c" %c : tensor<3x5xf32>
}
)mlir");
  EXPECT_TRUE(mlir::failed(gate(model, libraryProductsCuda(), options)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[layout] the op reads an operand through a transpose flag, "
                "which capsule `cublas.matmul` does not accept"}));
}

TEST_F(Gate, RejectsRanksBeyondTheCapsule) {
  ModelOp model = parse(R"mlir(vouch.model "deep" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<1x1x1x1x1x1x1x1x2xf32>
  %b = vouch.relu %a : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  vouch.output "b" %b : tensor<1x1x1x1x1x1x1x1x2xf32>
}
)mlir");
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cuda")));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[shape] operand 0 has rank 9; capsule `native_cuda.relu` "
                "handles rank ≤ 8",
                "[shape] the result has rank 9; capsule `native_cuda.relu` "
                "handles rank ≤ 8"}));
  EXPECT_TRUE(mlir::succeeded(gate(model, "checked_cpu"))) << joined();
}

TEST_F(Gate, RejectsDuplicateAndMissingKernelSymbols) {
  ModelOp model = parse(R"mlir(vouch.model "two" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4xf32>
  %b = vouch.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = vouch.relu %b : (tensor<4xf32>) -> tensor<4xf32>
  %d = vouch.relu %c : (tensor<4xf32>) -> tensor<4xf32>
  vouch.output "d" %d : tensor<4xf32>
}
)mlir");
  planModel(model, profile("checked_cpu"), capsules::defaultRegistry());
  nth(model, "relu", 1)->setAttr(kKernelAttr,
                                 mlir::StringAttr::get(&context, "two_n0_relu"));
  nth(model, "relu", 2)->removeAttr(kKernelAttr);
  EXPECT_TRUE(mlir::failed(
      gateModel(model, profile("checked_cpu"), {}, &rejection)));
  EXPECT_EQ(failures(),
            (std::vector<std::string>{
                "[symbol] kernel symbol `two_n0_relu` is also planned for the "
                "op at gate.mlir:3:8",
                "[symbol] the op has no kernel symbol (vouch.kernel)"}));
}

//===----------------------------------------------------------------------===//
// Everything at once
//===----------------------------------------------------------------------===//

TEST_F(Gate, ARejectionListsEveryFailureNotOnlyTheFirst) {
  // No relu capsule on cuda, an untrusted add, an overflowing reshape and a
  // forward-only mse_loss on the gradient path, all in one model.
  CapsuleRegistry registry = capsules::makeDefaultRegistry();
  ASSERT_TRUE(registry.remove("native_cuda.relu").ok());
  KernelCapsule add = *registry.find("native_cuda.add");
  ASSERT_TRUE(registry.remove("native_cuda.add").ok());
  add.trust = capsules::TrustLevel::Fuzzed;
  ASSERT_TRUE(registry.add(add).ok());
  KernelCapsule mse = *registry.find("native_cuda.mse_loss");
  ASSERT_TRUE(registry.remove("native_cuda.mse_loss").ok());
  mse.vjpMode = capsules::VjpMode::None;
  ASSERT_TRUE(registry.add(mse).ok());
  ModelOp model = parse(R"mlir(vouch.model "many" attributes {batch = 1 : i64} {
  %x = vouch.input "x" : tensor<1x4xf32>
  %y = vouch.target "y" : tensor<1x4xf32>
  %w = vouch.param "w" = "ones" : tensor<1x4xf32>
  %big = vouch.input "big" : tensor<4294967296xf32>
  %h = vouch.add %x, %w : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r = vouch.relu %h : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %v = vouch.reshape %big : (tensor<4294967296xf32>) -> tensor<65536x65536xf32>
  %l = vouch.mse_loss %r, %y : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<f32>
  vouch.output "v" %v : tensor<65536x65536xf32>
  vouch.loss %l : tensor<f32>
}
)mlir",
                        /*differentiate=*/true);
  GateOptions options;
  options.registry = &registry;
  EXPECT_TRUE(mlir::failed(gate(model, "checked_cuda", options)));
  // Every failure, in op order, one error each at its op; then the summary.
  EXPECT_EQ(
      diagnostics,
      (std::vector<std::string>{
          "gate.mlir:6:8: assurance gate [trust]: capsule `native_cuda.add` "
          "has trust level fuzzed; profile `checked_cuda` (assurance policy "
          "checked) accepts verified, checked",
          "gate.mlir:7:8: assurance gate [capsule]: no capsule for vouch.relu "
          "on device cuda under profile `checked_cuda` (providers tried: "
          "native-cuda, cublaslt, cublas, cufft)",
          "gate.mlir:8:8: assurance gate [uint32-abi]: axis 0 of operand 0 has "
          "extent 4294967296, more than the UInt32 CUDA ABI allows "
          "(4294967295)",
          "gate.mlir:8:8: assurance gate [uint32-abi]: operand 0 "
          "(tensor<4294967296xf32>) has 4294967296 elements, more than the "
          "UInt32 CUDA ABI allows (4294967295): its last index does not fit",
          "gate.mlir:8:8: assurance gate [uint32-abi]: the result "
          "(tensor<65536x65536xf32>) has 4294967296 elements, more than the "
          "UInt32 CUDA ABI allows (4294967295): its last index does not fit",
          "gate.mlir:9:8: assurance gate [vjp]: node 3 lies on the gradient "
          "path, but capsule `native_cuda.mse_loss` is forward-only "
          "(vjp=none)",
          "gate.mlir:1:1: assurance gate rejected model `many` under profile "
          "`checked_cuda`: 6 failed obligations (capsule, trust, uint32-abi "
          "×3, vjp)",
      }));
  ASSERT_EQ(rejection.failures.size(), 6u);
  EXPECT_EQ(rejection.failures[1].op, "relu");
  EXPECT_EQ(rejection.failures[1].location, "gate.mlir:7:8");
  EXPECT_EQ(rejection.model, "many");
  EXPECT_EQ(rejection.profile, "checked_cuda");
}

TEST_F(Gate, PassFailsWithTheSameDiagnostics) {
  parse(R"mlir(vouch.model "big" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4294967296xf32>
  %b = vouch.relu %a : (tensor<4294967296xf32>) -> tensor<4294967296xf32>
  vouch.output "b" %b : tensor<4294967296xf32>
}
)mlir");
  EXPECT_TRUE(mlir::failed(runPipeline(
      "builtin.module(vouch.model(vouch-plan{profile=checked_cuda}, "
      "vouch-gate))")));
  EXPECT_TRUE(hasDiagnostic(
      "gate.mlir:1:1: assurance gate rejected model `big` under profile "
      "`checked_cuda`: 4 failed obligations (uint32-abi ×4)"))
      << joined();
  diagnostics.clear();
  EXPECT_TRUE(mlir::succeeded(runPipeline(
      "builtin.module(vouch.model(vouch-plan{profile=checked_cpu}, "
      "vouch-gate))")))
      << joined();
}

} // namespace
} // namespace vouch
