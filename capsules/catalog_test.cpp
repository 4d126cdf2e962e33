//===- catalog_test.cpp - catalogs, evidence, registry, binding ----------===//
//
// The shipped catalogs cover every compute op on cpu and cuda with the
// names, providers and numerical policies the design promises; evidence
// comes from the citation table only; the registry refuses duplicates; a
// handler binds only to a capsule of its own identity; cuBLAS calls get the
// transpose flags of row-major storage.
//
//===----------------------------------------------------------------------===//
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <tuple>
#include <string>

#include "capsules/Binding.h"
#include "capsules/Catalog.h"
#include "capsules/Evidence.h"
#include "capsules/GemmCall.h"
#include "capsules/JsonWriter.h"
#include "capsules/Profile.h"
#include "capsules/Registry.h"
#include "capsules/Report.h"
#include "gtest/gtest.h"

namespace vouch::capsules {
namespace {

/// The seed's numeric line (cuda-runtime-guide 5.3.1), and the cuBLAS
/// capsules' (whose order is fixed under vouch's configuration).
const char *kSeedNumeric =
    "numeric=[round=nearest-even,subnormal=implementation-defined,"
    "contract=implementation-defined,reduce=implementation-defined]";
const char *kBlasNumeric =
    "numeric=[round=nearest-even,subnormal=implementation-defined,"
    "contract=implementation-defined,reduce=library-fixed]";

std::string cudaName(std::string_view op) {
  if (op == "matmul")
    return "cublas.matmul";
  if (op == "linear")
    return "cublaslt.linear";
  return "native_cuda." + std::string(op);
}

// The guard rail of the op table: an op added to the dialect (a row of
// ir/OpTable.h) without a capsule template for its family and providers,
// or with an evidence key the citation table does not know, fails here.
TEST(Catalog, EveryComputeOpHasACapsulePerListedProvider) {
  const CapsuleRegistry &registry = defaultRegistry();
  std::vector<const OpFacts *> ops = computeOpFacts();
  ASSERT_FALSE(ops.empty());
  for (const OpFacts *spec : ops) {
    std::string op(spec->mnemonic);
    std::vector<const KernelCapsule *> cpu = registry.forOp(op, Device::Cpu);
    ASSERT_EQ(cpu.size(), 1u) << op;
    EXPECT_EQ(cpu[0]->name, "reference." + op);
    EXPECT_EQ(cpu[0]->provider, Provider::Reference);
    std::vector<const KernelCapsule *> cuda = registry.forOp(op, Device::Cuda);
    // One capsule per provider the row lists, in its order. A product has
    // its library's first and, where the plan may pick vouch's own kernel for
    // small products, native_cuda's second (linear_weight_grad has none:
    // vouch-fold-linear-bias-grad builds it only above the small-product
    // rule); every other op has native_cuda's alone.
    Expected<std::vector<Provider>> providers = cudaProvidersOf(*spec);
    ASSERT_TRUE(providers.ok()) << providers.error();
    const size_t want = providers->size();
    ASSERT_EQ(cuda.size(), want) << op << ": no capsule template for one of "
                                 << "its cuda providers (" << spec->cudaProviders
                                 << ")";
    for (size_t i = 0; i < want; ++i) {
      EXPECT_EQ(cuda[i]->provider, (*providers)[i]) << op;
      EXPECT_EQ(cuda[i]->name, capsuleName((*providers)[i], op));
    }
    if (spec->family == OpFamily::Gemm) {
      ASSERT_TRUE(want == 1 || want == 2) << op << ": " << spec->cudaProviders;
      EXPECT_TRUE(cuda[0]->provider == Provider::Cublas ||
                  cuda[0]->provider == Provider::Cublaslt)
          << op << ": a product's first provider is its library";
    } else {
      ASSERT_EQ(want, 1u) << op << ": " << spec->cudaProviders;
      EXPECT_EQ(cuda[0]->provider, Provider::NativeCuda) << op;
    }
    if (want == 2) {
      EXPECT_EQ(cuda[1]->name, "native_cuda." + op);
      EXPECT_EQ(cuda[1]->numeric.reduce, ReductionOrder::LeftFold) << op;
      EXPECT_NE(cuda[1]->value.provenance.sourceFile.find("matmul.cuh"), std::string::npos);
    }
    for (const KernelCapsule *c : {cpu[0], cuda[0]}) {
      EXPECT_TRUE(c->supportsForward) << c->name;
      EXPECT_EQ(c->vjpMode, spec->hasVjp ? VjpMode::BackendVjp : VjpMode::None)
          << c->name;
      EXPECT_TRUE(providerRunsOn(c->provider, c->device)) << c->name;
      EXPECT_FALSE(c->value.claim.empty()) << c->name;
      EXPECT_EQ(c->value.claim.find(spec->formula), 0u) << c->name;
    }
    for (std::string_view key : {spec->cpuEvidence, spec->cudaEvidence})
      EXPECT_TRUE(key.empty() || findCitation(key))
          << op << " cites the unknown evidence key " << key;
  }
  // + the native products, + the step's own work on cpu and cuda (batch
  // selection from rows or from a token stream, clipping, the optimizers).
  EXPECT_EQ(registry.all().size(),
            2 * ops.size() + 2 + 2 * (3 + stepOptimizers().size()));
  // The shipped set, by name: a changed provider or a lost op shows here.
  for (const char *op : {"fill", "matmul", "linear", "add", "sub", "mul",
                         "relu", "step", "scale", "broadcast", "reshape",
                         "permute", "reduce_sum", "reduce_mean", "mse_loss"}) {
    EXPECT_NE(registry.find("reference." + std::string(op)), nullptr) << op;
    EXPECT_NE(registry.find(cudaName(op)), nullptr) << op;
  }
}

TEST(Catalog, TheStepsOwnWorkHasACapsulePerDevice) {
  const CapsuleRegistry &registry = defaultRegistry();
  EXPECT_EQ(stepOptimizers(),
            (std::vector<std::string_view>{"sgd", "adam", "adamw", "rmsprop",
                                           "adagrad"}));
  for (Device device : {Device::Cpu, Device::Cuda}) {
    Provider provider = *stepProvider(device);
    std::vector<std::string> work = {std::string(kSelectBatchWork),
                                     std::string(kSelectWindowsWork)};
    for (std::string_view optimizer : stepOptimizers())
      work.push_back(optimizerWork(optimizer));
    for (const std::string &what : work) {
      const KernelCapsule *c = registry.find(capsuleName(provider, what));
      ASSERT_NE(c, nullptr) << what;
      EXPECT_EQ(c->op, what);
      EXPECT_EQ(c->device, device);
      EXPECT_EQ(c->vjpMode, VjpMode::None) << c->name;
      EXPECT_EQ(c->numeric.reduce, ReductionOrder::None) << c->name;
      // Every contract cites a test, and the value contract names the symbol.
      for (const ContractDescriptor *d : {&c->shape, &c->layout, &c->value})
        EXPECT_EQ(d->evidence.kind, EvidenceKind::TestSuite) << c->name;
      EXPECT_FALSE(c->value.provenance.nativeSymbol.empty()) << c->name;
    }
  }
  EXPECT_EQ(registry.find("native_cuda.adam_step")->value.provenance.nativeSymbol,
            "vouch_optimizer_<t>");
  // Clipping: a fixed-order reduction on the GPU, its own launch.
  const KernelCapsule *clip = registry.find("native_cuda.clip_grad_norm");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->numeric.reduce, ReductionOrder::FixedTree);
  EXPECT_EQ(clip->value.provenance.nativeSymbol, "vouch_grad_norm_<t>");
  ASSERT_NE(registry.find("reference.clip_grad_norm"), nullptr);
  EXPECT_EQ(stepProvider(Device::Metal), std::nullopt);
}

// The contraction claim is per op: a row with contraction "none" (gelu,
// gelu_grad) has a native capsule saying contract=none whatever -fmad does;
// every other native capsule says what -fmad allows.
TEST(Catalog, TheContractionClaimIsTheOpTablesPerOp) {
  int uncontracted = 0;
  for (const KernelCapsule &c : cudaCatalog()) {
    if (c.provider != Provider::NativeCuda)
      continue;
    const OpFacts *facts = findOpFacts(c.op);
    ASSERT_NE(facts, nullptr) << c.name;
    bool none = facts->contraction == "none";
    uncontracted += none;
    Contraction want = none || !kNativeCudaFmad ? Contraction::None
                                                : Contraction::FusedMultiplyAdd;
    EXPECT_EQ(toString(c.numeric.contract), toString(want)) << c.name;
  }
  EXPECT_EQ(findOpFacts("gelu")->contraction, "none");
  EXPECT_EQ(findOpFacts("gelu_grad")->contraction, "none");
  EXPECT_GE(uncontracted, 2);
}

// An op whose record says it sums (embedding_grad, scatter_add: index-family
// ops adding terms) states a reduction order in every capsule, never `none`.
TEST(Catalog, OpsThatSumStateTheirReductionOrder) {
  int summing = 0;
  for (const auto &catalog : {cudaCatalog(), referenceCatalog()})
    for (const KernelCapsule &c : catalog) {
      const OpFacts *facts = findOpFacts(c.op);
      if (!facts || !facts->sums)
        continue;
      ++summing;
      EXPECT_NE(toString(c.numeric.reduce), toString(ReductionOrder::None)) << c.name;
    }
  EXPECT_TRUE(findOpFacts("embedding_grad")->sums);
  EXPECT_TRUE(findOpFacts("scatter_add")->sums);
  EXPECT_GE(summing, 4);
}

TEST(Catalog, CapsuleNamesSpellTheProvider) {
  EXPECT_EQ(capsuleName(Provider::NativeCuda, "relu"), "native_cuda.relu");
  EXPECT_EQ(capsuleName(Provider::Cublaslt, "linear"), "cublaslt.linear");
  EXPECT_EQ(capsuleName(Provider::Reference, "add"), "reference.add");
}

TEST(Catalog, ProvidersSayWhoComputes) {
  const CapsuleRegistry &r = defaultRegistry();
  EXPECT_EQ(r.find("cublas.matmul")->provider, Provider::Cublas);
  EXPECT_EQ(r.find("cublaslt.linear")->provider, Provider::Cublaslt);
  EXPECT_EQ(r.find("native_cuda.relu")->provider, Provider::NativeCuda);
  EXPECT_TRUE(r.find("cublas.matmul")->acceptsTransposeFlags);
  EXPECT_TRUE(r.find("reference.matmul")->acceptsTransposeFlags);
  EXPECT_EQ(r.find("cublas.matmul")->numeric.fastestProducts,
            ProductPrecision::Bf16);
  EXPECT_EQ(r.find("native_cuda.flash_attention")->numeric.fastestProducts,
            ProductPrecision::Bf16);
  EXPECT_EQ(r.find("native_cuda.add")->numeric.fastestProducts,
            ProductPrecision::Fp32);
  EXPECT_EQ(r.find("reference.matmul")->numeric.fastestProducts,
            ProductPrecision::Fp32);
  EXPECT_EQ(r.find("native_cuda.add")->maxRank, 8);
  EXPECT_EQ(r.find("reference.add")->maxRank, 0);
}

TEST(Catalog, ReductionOrders) {
  const CapsuleRegistry &r = defaultRegistry();
  for (const char *op : {"reduce_sum", "reduce_mean", "mse_loss", "matmul",
                         "linear"}) {
    EXPECT_EQ(r.forOp(op, Device::Cpu)[0]->numeric.reduce,
              ReductionOrder::LeftFold) << op;
    // vouch's CUDA reductions are fixed trees; cuBLAS sums in its own
    // order, fixed under the configuration the value contract names.
    bool library = std::string(op) == "matmul" || std::string(op) == "linear";
    EXPECT_EQ(r.forOp(op, Device::Cuda)[0]->numeric.reduce,
              library ? ReductionOrder::LibraryFixed
                      : ReductionOrder::FixedTree) << op;
  }
  for (const char *name : {"cublas.matmul", "cublaslt.linear"}) {
    const std::string &claim = r.find(name)->value.claim;
    for (const char *part :
         {"summed in the library's own order, the same bits run to run on "
          "one GPU model with one toolkit version under vouch's "
          "configuration: ",
          "32 MiB workspace", "one call at a time",
          "; not promised across GPU models or toolkit versions, nor equal "
          "to the cpu left fold"})
      EXPECT_NE(claim.find(part), std::string::npos) << name << ": " << claim;
  }
  EXPECT_NE(r.find("cublas.matmul")->value.claim.find(
                "atomics off (CUBLAS_ATOMICS_NOT_ALLOWED)"),
            std::string::npos);
  EXPECT_NE(r.find("cublaslt.linear")->value.claim.find(
                "split-K reductions none, compute-type or output-type only "
                "(in-place excluded), one algorithm pinned per shape"),
            std::string::npos);
  EXPECT_EQ(formatNumericalPolicy(r.find("native_cuda.mse_loss")->numeric),
            "numeric=[round=nearest-even,subnormal=implementation-defined,"
            "contract=fma,reduce=fixed-order-tree]");
  for (const char *op : {"add", "relu", "reshape", "fill"})
    for (Device d : {Device::Cpu, Device::Cuda})
      EXPECT_EQ(r.forOp(op, d)[0]->numeric.reduce, ReductionOrder::None) << op;
  EXPECT_EQ(formatNumericalPolicy(r.find("reference.reduce_sum")->numeric),
            "numeric=[round=nearest-even,subnormal=preserved,contract=none,"
            "reduce=left-fold]");
  // Every shipped capsule sums in an order that is the same run to run, so
  // `--deterministic` refuses none of them.
  for (const KernelCapsule &c : r.all())
    EXPECT_NE(c.numeric.reduce, ReductionOrder::ImplementationDefined)
        << c.name;
}

TEST(Catalog, SeedFormat) {
  const CapsuleRegistry &r = defaultRegistry();
  NumericalPolicy seed;
  seed.subnormal = Subnormals::ImplementationDefined;
  seed.contract = Contraction::ImplementationDefined;
  seed.reduce = ReductionOrder::ImplementationDefined;
  EXPECT_EQ(formatNumericalPolicy(seed), kSeedNumeric);
  EXPECT_EQ(formatNumericalPolicy(r.find("cublas.matmul")->numeric),
            kBlasNumeric);
  EXPECT_EQ(formatCapsuleHeadline(*r.find("native_cuda.relu")),
            "relu: native_cuda.relu provider=native-cuda trust=checked "
            "vjp=backend-vjp numeric=[round=nearest-even,subnormal="
            "implementation-defined,contract=fma,reduce=none]");
  EXPECT_EQ(formatCapsuleHeadline(*r.find("reference.fill")),
            "fill: reference.fill provider=reference trust=checked vjp=none "
            "numeric=[round=nearest-even,subnormal=preserved,contract=none,"
            "reduce=none]");
}

TEST(Catalog, CapsuleEntryHasFourContractsAndProvenance) {
  const KernelCapsule &c = *defaultRegistry().find("reference.matmul");
  std::string entry = renderCapsuleEntry(c, ProductPrecision::Bf16);
  EXPECT_EQ(entry.find("matmul: reference.matmul provider=reference"), 0u);
  EXPECT_NE(entry.find("\n  shape: static shapes as the vouch.matmul verifier "
                       "requires; any rank; int64 indexing (checked by the op "
                       "verifier before planning; evidence: test-suite "
                       "tests/lit/ir/invalid.mlir)\n"),
            std::string::npos)
      << entry;
  EXPECT_NE(entry.find("evidence: test-suite //runtime:cpu_kernels_test)"),
            std::string::npos);
  EXPECT_NE(entry.find("\n  vjp: vouch's VJP rule for vouch.matmul"),
            std::string::npos);
  EXPECT_NE(entry.find("\n  provenance: shape: ir/VouchOps.cpp; layout, value: "
                       "runtime/cpu_kernels.h vouch::rt::matmul<T>; vjp: "
                       "ir/VouchOps.cpp VJPOpInterface::buildVJP\n"),
            std::string::npos)
      << entry;
  // The reference computes in the element type whatever the profile asks.
  EXPECT_EQ(entry.find("products="), std::string::npos);
  const KernelCapsule &blas = *defaultRegistry().find("cublas.matmul");
  for (auto [asked, shown] :
       {std::pair<ProductPrecision, const char *>{ProductPrecision::Fp32,
                                                  " products=fp32\n"},
        {ProductPrecision::Tf32, " products=tf32\n"},
        {ProductPrecision::Bf16, " products=bf16\n"}})
    EXPECT_NE(renderCapsuleEntry(blas, asked)
                  .find(std::string(kBlasNumeric) + shown),
              std::string::npos)
        << shown;
}

// A capsule computes in the lesser of what the profile asks and what it can.
TEST(Catalog, ProductPrecisionIsTheLesserOfProfileAndCapsule) {
  NumericalPolicy tf32Only;
  tf32Only.fastestProducts = ProductPrecision::Tf32;
  EXPECT_EQ(productPrecisionOf(tf32Only, ProductPrecision::Bf16),
            ProductPrecision::Tf32);
  EXPECT_EQ(productPrecisionOf(tf32Only, ProductPrecision::Fp32),
            ProductPrecision::Fp32);
  NumericalPolicy exact;
  EXPECT_EQ(productPrecisionOf(exact, ProductPrecision::Bf16),
            ProductPrecision::Fp32);
}

//===----------------------------------------------------------------------===//
// Evidence: one table, well-formed references, nothing cited outside it
//===----------------------------------------------------------------------===//

TEST(Evidence, TableIsWellFormed) {
  // tools/check_evidence.sh finds references of exactly these shapes.
  std::regex label(R"(//[a-z_/]+:[A-Za-z0-9_]+)");
  std::regex lit(R"(tests/lit/[A-Za-z0-9_/.-]+\.mlir|tests/gpu/[A-Za-z0-9_.-]+\.sh)");
  std::set<std::string_view> keys;
  // A test may be cited under several keys (the GPU suite's fp32 and bf16
  // builds), each for other models or sources: check_evidence.sh takes a
  // contract citing it as exercised when one of them exercises it.
  std::set<std::tuple<std::string_view, std::string_view, std::string_view,
                      std::string_view, std::string_view>>
      uses;
  for (const Citation &c : citations()) {
    EXPECT_TRUE(keys.insert(c.key).second) << "duplicate key " << c.key;
    EXPECT_TRUE(uses.insert({c.reference, c.exercises.profiles, c.exercises.models,
                             c.exercises.sources, c.exercises.names})
                    .second)
        << c.reference << " cited twice for the same models or sources";
    std::string ref(c.reference);
    EXPECT_TRUE(std::regex_match(ref, label) || std::regex_match(ref, lit))
        << ref;
    EXPECT_FALSE(c.covers.empty()) << c.key;
  }
  EXPECT_EQ(findCitation("no-such-key"), nullptr);
}

// tools/check_evidence.sh tells what a test exercises from its citation:
// the models it plans, or what its sources name; exactly one of the two.
TEST(Evidence, EveryCitationSaysWhatItExercises) {
  for (const Citation &c : citations()) {
    const Exercises &e = c.exercises;
    bool plans = !e.profiles.empty() && !e.models.empty();
    bool names = !e.sources.empty() && !e.names.empty();
    EXPECT_TRUE(plans != names)
        << c.key << ": give either profiles and models or sources and names";
    EXPECT_TRUE(plans || (e.profiles.empty() && e.models.empty())) << c.key;
    EXPECT_TRUE(names || (e.sources.empty() && e.names.empty())) << c.key;
    for (std::string_view profile : splitWords(e.profiles)) {
      Expected<BackendProfile> p = parseProfileSpec(profile);
      EXPECT_TRUE(p.ok()) << c.key << ": " << p.error();
    }
    if (names) {
      std::string_view n = e.names;
      EXPECT_TRUE(n.find("{op}") != n.npos || n.find("{capsule}") != n.npos ||
                  n.find("{symbol}") != n.npos)
          << c.key << ": `" << n << "` names no capsule";
    }
    // The dump separates fields with '|' and records with newlines.
    for (std::string_view field : {c.key, c.reference, e.profiles, e.models,
                                   e.sources, e.names})
      EXPECT_EQ(field.find_first_of("|\n"), std::string_view::npos)
          << c.key << ": " << field;
  }
  for (const KernelCapsule &c : defaultRegistry().all())
    for (const ContractDescriptor *d : {&c.shape, &c.layout, &c.value, &c.vjp})
      for (std::string_view field : {std::string_view(c.name),
                                     std::string_view(c.op),
                                     std::string_view(d->evidence.reference),
                                     std::string_view(d->provenance.nativeSymbol)})
        EXPECT_EQ(field.find_first_of("|\n"), std::string_view::npos)
            << c.name << ": " << field;
}

TEST(Evidence, CitedModelsExpandStarsInName) {
  namespace fs = std::filesystem;
  const char *tmp = std::getenv("TEST_TMPDIR");
  fs::path root = fs::path(tmp ? tmp : fs::temp_directory_path().string()) /
                  "cited-models";
  fs::create_directories(root / "m");
  for (const char *f : {"m/b.vouch", "m/a.vouch", "m/a.txt"})
    std::ofstream(root / f) << "\n";
  Citation c{"k", "//x:y", "z",
             plans("checked_cuda", "top.vouch  m/*.vouch m/none*.vouch")};
  EXPECT_EQ(citedModels(c, root.string() + "/"),
            (std::vector<std::string>{"top.vouch", "m/a.vouch", "m/b.vouch",
                                      "m/none*.vouch"}));
  EXPECT_EQ(splitWords(" a  b "), (std::vector<std::string_view>{"a", "b"}));
}

TEST(Evidence, ContractsCiteOnlyTheTableAndEveryEntryIsCited) {
  std::set<std::string> cited;
  for (const KernelCapsule &c : defaultRegistry().all())
    for (const ContractDescriptor *d : {&c.shape, &c.layout, &c.value, &c.vjp}) {
      const Evidence &e = d->evidence;
      bool cites = e.kind == EvidenceKind::TestSuite ||
                   e.kind == EvidenceKind::FuzzOracle ||
                   e.kind == EvidenceKind::RuntimeGuard;
      if (!cites) {
        EXPECT_TRUE(e.reference.empty()) << c.name;
        continue;
      }
      bool inTable = false;
      for (const Citation &t : citations())
        inTable |= t.reference == e.reference;
      EXPECT_TRUE(inTable) << c.name << " cites " << e.reference;
      cited.insert(e.reference);
    }
  for (const Citation &t : citations())
    EXPECT_TRUE(cited.count(std::string(t.reference)))
        << t.reference << " is in the table but no capsule cites it";
}

TEST(Evidence, CudaValuesCiteTheGpuSuite) {
  const CapsuleRegistry &r = defaultRegistry();
  // CUDA kernels and cuBLAS calls are compared with the cpu f64 reference
  // by the GPU suite (it runs on an H200, not in CI): that is their evidence.
  EXPECT_EQ(r.find("native_cuda.relu")->value.evidence.kind,
            EvidenceKind::TestSuite);
  EXPECT_EQ(r.find("native_cuda.relu")->value.evidence.reference,
            "tests/gpu/run.sh");
  EXPECT_EQ(r.find("cublas.matmul")->value.evidence.reference,
            "tests/gpu/run.sh");
  EXPECT_EQ(r.find("native_cuda.relu")->layout.evidence.reference,
            "//tests:nvrtc_kernels_test");
  EXPECT_EQ(r.find("reference.matmul")->value.evidence.reference,
            "//runtime:cpu_kernels_test");
  EXPECT_EQ(r.find("reference.fill")->vjp.evidence.kind,
            EvidenceKind::NotApplicable);
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

KernelCapsule testCapsule(std::string name, std::string op, Provider p,
                          Device d) {
  KernelCapsule c;
  c.name = std::move(name);
  c.op = std::move(op);
  c.provider = p;
  c.device = d;
  return c;
}

TEST(Registry, RejectsDuplicateNamesAndIdentities) {
  CapsuleRegistry r;
  ASSERT_TRUE(r.add(testCapsule("a.add", "add", Provider::Reference,
                                Device::Cpu)).ok());
  Status same = r.add(testCapsule("a.add", "sub", Provider::Reference,
                                  Device::Cpu));
  EXPECT_EQ(same.error(), "capsule `a.add` is already registered");
  Status identity = r.add(testCapsule("b.add", "add", Provider::Reference,
                                      Device::Cpu));
  EXPECT_EQ(identity.error(),
            "capsule `b.add` has the identity (op=add, provider=reference, "
            "device=cpu) of registered capsule `a.add`");
  EXPECT_TRUE(r.add(testCapsule("c.add", "add", Provider::NativeCuda,
                                Device::Cuda)).ok());
  EXPECT_EQ(r.all().size(), 2u);
}

TEST(Registry, LooksUpByIdentityAndRemoves) {
  CapsuleRegistry r = makeDefaultRegistry();
  EXPECT_EQ(r.lookup("matmul", Device::Cuda, Provider::Cublas)->name,
            "cublas.matmul");
  EXPECT_EQ(r.lookup("matmul", Device::Cuda, Provider::NativeCuda)->name,
            "native_cuda.matmul");
  EXPECT_EQ(r.lookup("matmul", Device::Cuda, Provider::Cufft), nullptr);
  EXPECT_EQ(r.lookup("relu", Device::Cpu, Provider::Reference)->name,
            "reference.relu");
  EXPECT_TRUE(r.remove("reference.relu").ok());
  EXPECT_TRUE(r.forOp("relu", Device::Cpu).empty());
  EXPECT_EQ(r.remove("reference.relu").error(),
            "capsule `reference.relu` is not registered");
}

//===----------------------------------------------------------------------===//
// ExecutableKernel
//===----------------------------------------------------------------------===//

TEST(Binding, MatchingIdentityBinds) {
  const KernelCapsule &c = *defaultRegistry().find("native_cuda.add");
  Expected<ExecutableKernel> k = ExecutableKernel::bind(
      c, {"launch_add", "add", Provider::NativeCuda, Device::Cuda});
  ASSERT_TRUE(k.ok()) << k.error();
  EXPECT_EQ(k->capsule().name, "native_cuda.add");
  EXPECT_EQ(k->handler().name, "launch_add");
}

TEST(Binding, MismatchNamesBothIdentities) {
  const KernelCapsule &c = *defaultRegistry().find("reference.add");
  Expected<ExecutableKernel> k = ExecutableKernel::bind(
      c, {"launch_add", "add", Provider::NativeCuda, Device::Cuda});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error(),
            "handler `launch_add` (op=add, provider=native-cuda, device=cuda) "
            "cannot run capsule `reference.add` (op=add, provider=reference, "
            "device=cpu): provider, device differ");
  k = ExecutableKernel::bind(
      c, {"cpu_sub", "sub", Provider::Reference, Device::Cpu});
  EXPECT_EQ(k.error(),
            "handler `cpu_sub` (op=sub, provider=reference, device=cpu) cannot "
            "run capsule `reference.add` (op=add, provider=reference, "
            "device=cpu): op differs");
}

//===----------------------------------------------------------------------===//
// cuBLAS calls from row-major transpose flags
//===----------------------------------------------------------------------===//

// Each SCOPED_TRACE names the op whose capsule cites this test for its layout
// (capsules/Evidence.cpp, key gemm-flags; tools/check_evidence.sh finds it).
TEST(GemmCall, RowMajorFlagsSwapOperands) {
  SCOPED_TRACE("the call of vouch.matmul");
  // C = A·B row-major is Cᵀ = Bᵀ·Aᵀ column-major: no transposes at all.
  EXPECT_EQ(formatGemmCall(matmulCall(false, false, false)),
            "cublasGemmEx(transa=N, transb=N, A=rhs, B=lhs)");
  // dW = dYᵀ·X (transpose_lhs): cuBLAS's B is lhs, transposed.
  EXPECT_EQ(formatGemmCall(matmulCall(true, false, false)),
            "cublasGemmEx(transa=N, transb=T, A=rhs, B=lhs)");
  EXPECT_EQ(formatGemmCall(matmulCall(false, true, false)),
            "cublasGemmEx(transa=T, transb=N, A=rhs, B=lhs)");
  EXPECT_EQ(formatGemmCall(matmulCall(true, true, true)),
            "cublasGemmStridedBatchedEx(transa=T, transb=T, A=rhs, B=lhs)");
  SCOPED_TRACE("the call of vouch.linear");
  EXPECT_EQ(formatGemmCall(linearCall(true)),
            "cublasLtMatmul(transa=T, transb=N, A=weight, B=input, "
            "epilogue=BIAS)");
  EXPECT_EQ(linearCall(false).epilogue, "DEFAULT");
}

/// linear_weight_grad's call, checked numerically as cuBLAS(Lt) defines it:
/// D (column-major, m = in, n = out, k = rows) = op(A)·op(B) with A = the
/// input read column-major [in, rows], B = the grad read [out, rows] and
/// transposed, is the row-major dW = gradᵀ·input; BGRADB's sums of op(B)
/// over k are db = Σ_rows grad.
TEST(GemmCall, LinearWeightGradMapsToBgradb) {
  SCOPED_TRACE("the call of vouch.linear_weight_grad");
  GemmCall call = linearWeightGradCall();
  EXPECT_EQ(formatGemmCall(call), "cublasLtMatmul(transa=N, transb=T, A=input, "
                                  "B=grad, epilogue=BGRADB)");
  const int rows = 4, in = 3, out = 2;
  std::vector<double> x(rows * in), dy(rows * out);
  for (int i = 0; i < rows * in; ++i) x[i] = i + 1;
  for (int i = 0; i < rows * out; ++i) dy[i] = 10 * (i + 1);
  const int lda = in, ldb = out;  // the stored row lengths
  auto A = [&](int i, int k) {  // op(A)[i, k]
    return call.transa == 'N' ? x[k * lda + i] : x[i * lda + k];
  };
  auto B = [&](int k, int j) {  // op(B)[k, j]
    return call.transb == 'N' ? dy[j * ldb + k] : dy[k * ldb + j];
  };
  for (int o = 0; o < out; ++o) {
    double sum = 0, bias = 0;
    for (int r = 0; r < rows; ++r) {
      sum += dy[r * out + o];
      bias += B(r, o);  // BGRADB: the sum over k of B's column
    }
    EXPECT_EQ(bias, sum) << "db[" << o << "]";
    for (int i = 0; i < in; ++i) {
      double want = 0, got = 0;
      for (int r = 0; r < rows; ++r) {
        want += dy[r * out + o] * x[r * in + i];
        got += A(i, r) * B(r, o);  // D[i, o] column-major is row-major dW[o, i]
      }
      EXPECT_EQ(got, want) << "dW[" << o << ", " << i << "]";
    }
  }
}

/// The mapping, checked numerically: a column-major GEMM written out as
/// cuBLAS defines it, fed row-major buffers as the call says, equals the
/// row-major product.
TEST(GemmCall, MappingComputesTheRowMajorProduct) {
  const int M = 2, N = 3, K = 4;
  for (bool tl : {false, true})
    for (bool tr : {false, true}) {
      // lhs stored [M,K] or [K,M]; rhs stored [K,N] or [N,K]; row-major.
      std::vector<double> lhs(M * K), rhs(K * N);
      for (int i = 0; i < M * K; ++i) lhs[i] = i + 1;
      for (int i = 0; i < K * N; ++i) rhs[i] = 10 * (i + 1);
      auto L = [&](int m, int k) { return tl ? lhs[k * M + m] : lhs[m * K + k]; };
      auto R = [&](int k, int n) { return tr ? rhs[n * K + k] : rhs[k * N + n]; };
      GemmCall call = matmulCall(tl, tr, false);
      // Column-major gemm: C'[m',n'] (ld m') = sum op(A)[m',k] op(B)[k,n'],
      // m' = N, n' = M, A = rhs (column-major view: ld = row length).
      int lda = tr ? K : N, ldb = tl ? M : K;
      auto A = [&](int i, int k) {
        return call.transa == 'N' ? rhs[k * lda + i] : rhs[i * lda + k];
      };
      auto B = [&](int k, int j) {
        return call.transb == 'N' ? lhs[j * ldb + k] : lhs[k * ldb + j];
      };
      for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
          double expect = 0, got = 0;
          for (int k = 0; k < K; ++k) {
            expect += L(m, k) * R(k, n);
            got += A(n, k) * B(k, m); // C'[n, m] is row-major C[m, n]
          }
          EXPECT_EQ(got, expect) << "tl=" << tl << " tr=" << tr;
        }
    }
}

TEST(JsonWriter, QuotesAndPrints) {
  EXPECT_EQ(jsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  JsonValue o = JsonValue::object();
  o.set("xs", JsonValue::array().push(1).push(2));
  o.set("empty", JsonValue::object());
  o.set("n", JsonValue());
  EXPECT_EQ(o.print(), "{\n  \"xs\": [1, 2],\n  \"empty\": {},\n  \"n\": null\n}");
}

} // namespace
} // namespace vouch::capsules
