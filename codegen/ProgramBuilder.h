//===- ProgramBuilder.h - a model as runtime tables -------------*- C++ -*-===//
//
// Builds one rt::Program (runtime/program.h) for one backend: the buffers,
// the steps (kernel calls, GEMMs), the tape nodes and the kernel table, and
// writes it as C++ constant tables. Kernel recipes (codegen/recipes/) add the
// steps of the ops they handle; a kernel whose source text another step
// already uses is not emitted twice (extents are arguments, so ops of many
// shapes share one kernel).
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_PROGRAMBUILDER_H
#define VOUCH_CODEGEN_PROGRAMBUILDER_H

#include <map>
#include <string>
#include <vector>

#include "capsules/Capsule.h"
#include "codegen/StoragePlan.h"
#include "ir/GemmDims.h"
#include "ir/VouchOps.h"
#include "llvm/ADT/DenseMap.h"
#include "runtime/program.h"

namespace vouch::codegen {

enum class Target { Cpu, Cuda };

/// One argument of a kernel step, before it is written out.
struct KernelArg {
  static KernelArg buffer(mlir::Value v) { return {rt::ArgDesc::Buffer, v, 0, {}, {}}; }
  /// Scratch buffer `index` (ProgramBuilder::addScratch): read and written.
  static KernelArg scratch(int32_t index) {
    return {rt::ArgDesc::Buffer, {}, index, {}, {}};
  }
  static KernelArg integer(int64_t i) { return {rt::ArgDesc::Int, {}, i, {}, {}}; }
  /// A double (a kernel parameter `double`; layer_norm's eps).
  static KernelArg real(double r) { return {rt::ArgDesc::Real, {}, 0, {}, {}, r}; }
  static KernelArg dims(llvm::ArrayRef<int64_t> extents,
                        llvm::ArrayRef<int64_t> strides) {
    return {rt::ArgDesc::Dims, {}, 0, {extents.begin(), extents.end()},
            {strides.begin(), strides.end()}};
  }
  /// The step context of the random ops (rt::ArgDesc::Context).
  static KernelArg context() { return {rt::ArgDesc::Context, {}, 0, {}, {}}; }
  /// An operand's buffer the step also writes: state it updates in place
  /// (batch_norm's running statistics), which the cuda executor then orders
  /// as a write.
  static KernelArg updated(mlir::Value v) {
    KernelArg arg = buffer(v);
    arg.written = true;
    return arg;
  }
  rt::ArgDesc::Kind kind;
  mlir::Value value;
  int64_t integerValue;
  std::vector<int64_t> extents, strides;
  double realValue = 0;
  bool written = false;
};

class ProgramBuilder {
public:
  ProgramBuilder(ModelOp model, Target target);

  Target target() const { return target_; }
  /// What the plan's profile lets f32 products round their operands to
  /// (checked_cuda+tf32 / +bf16): recipes with tensor-core kernels
  /// instantiate the matching one (flash attention).
  capsules::ProductPrecision products() const { return products_; }
  void setProducts(capsules::ProductPrecision p) { products_ = p; }
  const std::string &modelName() const { return modelName_; }

  /// Buffers: params (declaration order), then the data fields (inputs, then
  /// targets), then every compute op's result in op order. A view aliases its
  /// source. A buffer's dtype follows its value's element type (i32: I32).
  void addParam(mlir::Value v, llvm::StringRef name);
  /// A piece of the model's state (vouch.state; Program::states, in call
  /// order): a named buffer that keeps its own storage.
  void addState(mlir::Value v, llvm::StringRef name);
  void addField(mlir::Value v, llvm::StringRef name);
  void addNamed(mlir::Value v, llvm::StringRef name);
  void addValue(mlir::Value v, mlir::Value aliasOf = {});
  /// A buffer of `numel` elements that no value owns, named `name`: a kernel's
  /// scratch (layer_norm_grad's per-block partial sums and arrival counter).
  /// `zeroed`: it starts at zero (BufferDesc::zero_init). Returns its index,
  /// for KernelArg::scratch.
  int32_t addScratch(llvm::StringRef name, int64_t numel, rt::DType dtype,
                     bool zeroed);
  int32_t buffer(mlir::Value v) const;
  std::string bufferName(mlir::Value v) const;

  /// The kernel table entry for `source`, where `@NAME@` stands for the
  /// kernel's name; an identical source already in the table is reused
  /// (asked for under the same base: a launch is named after its kernel).
  /// New kernels are named `vouch_<base>` (`_2`, `_3`, ... on a clash).
  int32_t kernel(llvm::StringRef base, const std::string &source);
  const std::string &kernelName(int32_t index) const { return kernels_[index].name; }
  /// Kernel `index`'s source with its name filled in.
  const std::string &kernelSource(size_t index) const { return kernels_[index].source; }
  /// Every kernel's source with its name filled in, in table order.
  std::string kernelSources() const;
  size_t kernelCount() const { return kernels_.size(); }

  /// Steps, appended to the current section (see beginForward etc.).
  /// sharedBytes: dynamic shared memory the launch asks for; blocksPerSM:
  /// nonzero for a persistent grid; sharedBytesF64: the f64 runs' dynamic
  /// shared memory where it differs (0: sharedBytes) (rt::StepDesc).
  void addKernelStep(int32_t kernel, llvm::ArrayRef<KernelArg> args,
                     uint32_t grid, uint32_t blockX, uint32_t blockY,
                     uint32_t sharedBytes = 0, uint32_t blocksPerSM = 0,
                     uint32_t sharedBytesF64 = 0);
  /// Marks, in the kernel steps from `firstStep` on, the Buffer arguments of
  /// `written` as written (ArgDesc::count = 1): the cuda executor orders
  /// launches by what they read and write. Returns the steps that write none
  /// of them nor a scratch buffer (an emitter bug, reported by the caller).
  std::vector<int32_t> markWritten(int32_t firstStep,
                                   llvm::ArrayRef<mlir::Value> written);
  /// C = op(A)·op(B) with `d`'s transpose flags, extents and strides.
  void addGemmStep(const GemmDims &d, mlir::Value a, mlir::Value b,
                   mlir::Value c, const std::string &what);
  /// y = x·Wᵀ + bias (bias may be null) with `d`'s m (rows), k (in) and n
  /// (out).
  void addLinearStep(const GemmDims &d, mlir::Value x, mlir::Value w,
                     mlir::Value bias, mlir::Value y, const std::string &what);
  /// dW = dyᵀ·x and db = Σ_rows dy (linear_weight_grad) with `d`'s m (out),
  /// n (in) and k (rows).
  void addLinearWeightGradStep(const GemmDims &d, mlir::Value dy,
                               mlir::Value x, mlir::Value dw, mlir::Value db,
                               const std::string &what);
  int32_t stepCount() const { return static_cast<int32_t>(steps_.size()); }
  /// The capsule the steps from `firstStep` on run under (StepDesc::capsule).
  void setCapsule(int32_t firstStep, const std::string &capsule);
  /// The capsules of the executor's own work (Program::batch_capsule, ...).
  void setStepWorkCapsules(std::string batch, std::string optimizer,
                           std::string clip = "") {
    batchCapsule_ = std::move(batch);
    optimizerCapsule_ = std::move(optimizer);
    clipCapsule_ = std::move(clip);
  }
  /// What step `step` runs: its kernel symbol or library call.
  const std::string &stepWhat(int32_t step) const { return whats_[step]; }

  /// Layout markers, called by the emitter between recipes.
  void endForward() { forwardEnd_ = stepCount(); }
  void beginPrologue() { prologueBegin_ = stepCount(); }
  void endPrologue() { prologueEnd_ = stepCount(); }
  /// `state`: the names of the state the node updates (NodeDesc::state).
  void addNode(int64_t id, llvm::StringRef op, llvm::StringRef capsule,
               llvm::StringRef kernel, int32_t afterStep, int32_t vjpBegin,
               int32_t vjpEnd, std::vector<std::string> saved,
               std::vector<std::string> state = {});
  void setSignature(llvm::ArrayRef<mlir::Value> grads, mlir::Value loss,
                    mlir::Value output, int64_t outputColumns = 0);
  void appendSchedule(const std::string &line) { schedule_ += line; }

  /// Step `step` may write `result` over `operand`'s storage (its op's
  /// inPlaceOperand, ir/OpTable.h): reuseStorage takes it where the plan's
  /// conditions hold (codegen/StoragePlan.h).
  void allowInPlace(int32_t step, mlir::Value operand, mlir::Value result);
  /// Lets buffers whose lifetimes within a training step are disjoint share
  /// storage (codegen/StoragePlan.h): each slot becomes a buffer `storage<k>`
  /// that its occupants alias, and a step allowed in place may write its
  /// result over its operand. Call once, after every step and node.
  void reuseStorage();
  /// What reuseStorage did, for `vouch build -v`: "N buffers share M slots:
  /// X elements of storage instead of Y (at least Z)", then ", K in place
  /// (what over what, ...)" when a result took its operand's storage; empty
  /// before it ran.
  const std::string &storageSummary() const { return storageSummary_; }

  /// The buffers and params as an rt::Program with nothing else filled in,
  /// for what reads only those: the executors' memory estimate
  /// (runtime/executor.h's cpu_storage_layout and param_elements), which
  /// `vouch build` checks against this machine's memory. Valid while this
  /// builder lives.
  rt::Program sizingView() const;

  /// The Program as the blob a generated executable carries
  /// (runtime/model_tables.h): every table, none of it code.
  std::string encodeTables() const;

  /// The tables as text (programTablesText) of the Program the blob of
  /// encodeTables decodes to: what the executable will run, readable.
  std::string emitTables(const std::string &name) const;

private:
  /// A Program over these buffer, step and node tables, every other field from
  /// this builder (its strings and vectors): what reuseStorage, sizingView and
  /// encodeTables each hand on. Valid while the tables and the builder live.
  rt::Program programOver(const std::vector<rt::BufferDesc> &buffers,
                          const std::vector<rt::StepDesc> &steps,
                          const std::vector<rt::NodeDesc> &nodes) const;

  struct Kernel {
    std::string name, source;
  };
  /// A new step of `kind` that runs `what`: no kernel, no buffers yet.
  rt::StepDesc &appendStep(rt::StepKind kind, const std::string &what);
  /// A library step's batch, extents, strides and operands from `d`; each
  /// kind sets what else it stores (transpose flags, a bias).
  rt::StepDesc &appendProductStep(rt::StepKind kind, const GemmDims &d,
                                  mlir::Value a, mlir::Value b, mlir::Value c,
                                  const std::string &what);
  std::string modelName_;
  Target target_;
  std::vector<rt::BufferDesc> buffers_;
  capsules::ProductPrecision products_ = capsules::ProductPrecision::Fp32;
  std::vector<std::string> bufferNames_, bufferShapes_;
  llvm::DenseMap<mlir::Value, int32_t> bufferOf_;
  std::vector<int32_t> params_, grads_;
  std::vector<int32_t> states_;  // Program::states (addState order)
  std::vector<int32_t> fields_;  // the data fields' buffers (addField order)
  int32_t loss_ = -1, output_ = -1;
  int64_t outputPitch_ = 0, outputColumns_ = 0; // Program::output_pitch, _columns
  std::vector<Kernel> kernels_;
  std::map<std::string, int32_t> kernelBySource_;
  std::vector<std::string> kernelBase_; ///< by kernel: the base it was asked for under
  std::map<std::string, int> nameUses_;
  std::vector<rt::StepDesc> steps_;
  std::vector<std::string> whats_, capsules_;
  std::string batchCapsule_, optimizerCapsule_;
  std::string clipCapsule_; ///< empty: the model does not clip
  std::vector<rt::ArgDesc> args_;
  std::vector<int64_t> ints_;
  struct Node {
    int64_t id;
    std::string op, capsule, kernel;
    int32_t afterStep, vjpBegin, vjpEnd;
    std::vector<std::string> saved, state;
  };
  std::vector<Node> nodes_;
  std::vector<InPlaceStep> inPlace_;
  int32_t forwardEnd_ = 0, prologueBegin_ = 0, prologueEnd_ = 0;
  std::string schedule_;
  std::string storageSummary_;
};

/// `program`'s tables as C++ definitions of `const vouch::rt::Program <name>`
/// and its arrays (all with the prefix `<name>_`): `vouch build --emit
/// tables` and tests read them; executables carry the blob instead.
std::string programTablesText(const rt::Program &program, const std::string &name);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_PROGRAMBUILDER_H
