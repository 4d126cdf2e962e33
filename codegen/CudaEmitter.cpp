//===- CudaEmitter.cpp - host C++ of the cuda backend -----------*- C++ -*-===//
//
// The emitted CudaModel<T> owns one device buffer per value (allocated once:
// shapes are static, a step allocates nothing), runs the schedule's steps on
// one stream, records the tape as the CPU model does, and keeps the
// optimizer's state and step counter on the device so a captured step can be
// replayed as a CUDA graph unchanged.
//
//===----------------------------------------------------------------------===//
#include "codegen/CudaEmitter.h"

#include <set>
#include <sstream>

#include "codegen/EmitSupport.h"
#include "codegen/ModelDescription.h"

#include "capsules/Report.h"
#include "codegen/CpuEmitter.h"
#include "llvm/ADT/DenseMap.h"
#include "passes/Passes.h"

using namespace mlir;

namespace vouch::codegen {
namespace {


std::string bytesArray(const std::string &name, const std::string &bytes,
                       bool terminate) {
  std::ostringstream out;
  out << "alignas(64) const unsigned char " << name << "[] = {";
  for (size_t i = 0; i < bytes.size(); ++i)
    out << (i % 24 ? "" : "\n  ") << static_cast<unsigned>(
                                         static_cast<unsigned char>(bytes[i]))
        << ",";
  if (terminate)
    out << "0";
  out << "\n};\n";
  return out.str();
}

class Emitter {
public:
  Emitter(ModelOp model, const AcceptedGraphPlan &plan,
          const CudaSchedule &schedule, const CudaBinary &binary)
      : model(model), plan(plan), schedule(schedule), binary(binary) {}
  FailureOr<std::string> run();

private:
  LogicalResult collectValues();
  /// The device pointer expression of a value (aliases resolved).
  std::string dev(Value v) {
    while (auto reshape = v.getDefiningOp<ReshapeOp>())
      v = reshape.getInput();
    return names.lookup(v);
  }
  LogicalResult emitStep(const Step &step, std::ostream &out);
  std::string kernelVar(const std::string &symbol) { return "k_" + symbol; }
  std::string describeSchedule();

  ModelOp model;
  const AcceptedGraphPlan &plan;
  const CudaSchedule &schedule;
  const CudaBinary &binary;
  llvm::DenseMap<Value, std::string> names; ///< device buffer members
  SmallVector<Value> buffers;               ///< values with their own buffer
  TrainingSignature sig;
  std::vector<std::string> kernels; ///< native kernel symbols to load
};

LogicalResult Emitter::collectValues() {
  FailureOr<TrainingSignature> signature = trainingSignature(model);
  if (failed(signature))
    return failure();
  sig = *signature;
  for (auto [i, p] : llvm::enumerate(sig.params))
    names[p.getResult()] = "d_p" + std::to_string(i);
  names[sig.input.getResult()] = "d_x";
  names[sig.target.getResult()] = "d_y";
  // Reshapes alias their input's buffer (dev() resolves them).
  for (Operation &op : model.getBlock())
    if (!isStructuralOp(&op) && !isa<ReshapeOp>(op))
      for (Value r : op.getResults()) {
        names[r] = "d_v" + std::to_string(buffers.size());
        buffers.push_back(r);
      }
  return success();
}

/// Host code of one step: a kernel launch, a cuBLAS call, or nothing.
LogicalResult Emitter::emitStep(const Step &step, std::ostream &out) {
  Operation *op = step.ops[0];
  auto launch = [&](const std::vector<std::string> &args, const std::string &grid,
                    const std::string &block) {
    out << "    {\n";
    std::string list;
    for (size_t i = 0; i < args.size(); ++i) {
      out << "      auto a" << i << " = " << args[i] << ";\n";
      list += (i ? ", &a" : "&a") + std::to_string(i);
    }
    out << "      void* args[] = {" << list << "};\n"
        << "      VOUCH_RETURN_IF_ERROR(rc::launch(" << kernelVar(step.symbol)
        << ", dim3(" << grid << "), dim3(" << block
        << "), 0, stream(), args));\n    }\n";
    kernels.push_back(step.symbol);
  };
  auto gridFor = [](int64_t n) {
    return std::to_string(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, 1056)));
  };
  auto mut = [&](Value v) { return dev(v); };
  auto in = [&](Value v) { return "static_cast<const T*>(" + dev(v) + ")"; };
  switch (step.kind) {
  case Step::Alias:
    return success();
  case Step::Pointwise: {
    std::vector<std::string> args;
    for (Value v : step.stores)
      args.push_back(mut(v));
    for (Value v : step.loads)
      args.push_back(in(v));
    launch(args, gridFor(step.vectorized() ? step.elements / 4 : step.elements),
           "256");
    return success();
  }
  case Step::Reduce:
    if (step.columnReduce) {
      launch({in(op->getOperand(0)), mut(op->getResult(0))},
             std::to_string((numel(op->getResult(0)) + 31) / 32), "32, 32");
      return success();
    }
    launch({in(op->getOperand(0)), mut(op->getResult(0))},
           std::to_string(std::max<int64_t>(
               1, std::min<int64_t>(numel(op->getResult(0)), 4096))),
           "256");
    return success();
  case Step::MseLoss:
    launch({in(op->getOperand(0)), in(op->getOperand(1)), mut(op->getResult(0))},
           "1", "256");
    return success();
  case Step::Broadcast:
  case Step::Permute:
    launch({in(op->getOperand(0)), mut(op->getResult(0))},
           gridFor(numel(op->getResult(0))), "256");
    return success();
  case Step::Matmul: {
    auto mm = cast<MatmulOp>(op);
    auto lt = shapeOf(mm.getLhs()), rt = shapeOf(mm.getRhs());
    size_t r = lt.size();
    bool ta = mm.getTransposeLhs(), tb = mm.getTransposeRhs();
    int64_t batch = r == 3 ? lt[0] : 1;
    int64_t m = ta ? lt[r - 1] : lt[r - 2], k = ta ? lt[r - 2] : lt[r - 1];
    int64_t n = tb ? rt[r - 2] : rt[r - 1];
    out << "    VOUCH_RETURN_IF_ERROR(rc::gemm_row_major("
        << (ta ? "true" : "false") << ", " << (tb ? "true" : "false") << ", "
        << batch << ", " << m << ", " << n << ", " << k << ", "
        << in(mm.getLhs()) << ", " << m * k << ", " << in(mm.getRhs()) << ", "
        << k * n << ", " << mut(mm.getResult()) << ", false, tf32_));\n";
    return success();
  }
  case Step::Linear: {
    auto lin = cast<LinearOp>(op);
    auto wt = shapeOf(lin.getWeight());
    int64_t rows = numel(lin.getInput()) / wt[1];
    std::string bias = lin.getBias() ? in(lin.getBias()) : "nullptr";
    // f32: one cublasLtMatmul with the bias epilogue; f64: a GEMM, then the
    // bias as a rank-1 update (the runtime's documented fallback).
    out << "    VOUCH_RETURN_IF_ERROR(linear(" << rows << ", " << wt[1] << ", "
        << wt[0] << ", " << in(lin.getInput()) << ", " << in(lin.getWeight())
        << ", " << bias << ", " << mut(lin.getResult()) << "));\n";
    return success();
  }
  }
  return success();
}

/// Every kernel and library call of one training step, in launch order,
/// with the ops each fused kernel computes: the audit of what runs.
std::string Emitter::describeSchedule() {
  std::ostringstream out;
  out << "one training step (captured as one CUDA graph per batch):\n";
  auto describe = [&](const std::string &phase, const std::vector<Step> &steps) {
    for (const Step &step : steps) {
      if (step.kind == Step::Alias)
        continue;
      const capsules::PlannedOp *entry = plannedOpOf(plan, step.ops[0]);
      std::string what = !step.symbol.empty() ? step.symbol
                         : entry && !entry->call.empty() ? entry->call
                                                         : "?";
      out << "  " << phase << " " << what;
      if (step.ops.size() > 1) {
        out << " = fused";
        for (Operation *op : step.ops)
          out << " " << op->getName().stripDialect().str();
      } else {
        out << " (" << step.ops[0]->getName().stripDialect().str() << ")";
      }
      std::set<std::string> names;
      for (Operation *op : step.ops)
        if (const capsules::PlannedOp *e = plannedOpOf(plan, op))
          names.insert(e->capsule);
      out << " [";
      bool first = true;
      for (const std::string &c : names) {
        out << (first ? "" : ", ") << c;
        first = false;
      }
      out << "]\n";
    }
  };
  describe("forward", schedule.forward);
  for (auto it = schedule.backward.rbegin(); it != schedule.backward.rend(); ++it)
    describe("vjp n" + std::to_string(it->first), it->second);
  out << "  update " << model.getSymName().str()
      << "_optimizer (one launch for every param), then "
      << model.getSymName().str() << "_step_count";
  return out.str();
}

FailureOr<std::string> Emitter::run() {
  if (failed(collectValues()))
    return failure();
  std::string m = model.getSymName().str();
  std::ostringstream body; // the class body; kernel handles are added after

  // Forward steps with the tape nodes they complete.
  body << "  // The forward pass: one launch (or cuBLAS call) per step, then the\n"
          "  // tape nodes of the ops the step computed.\n"
          "  Status run_forward(Tape* tape) {\n";
  for (const Step &step : schedule.forward) {
    if (failed(emitStep(step, body)))
      return failure();
    for (Operation *op : step.ops) {
      int64_t id = op->getAttrOfType<IntegerAttr>(kNodeAttr).getInt();
      const capsules::PlannedOp *entry = plannedOpOf(plan, op);
      if (!entry)
        return op->emitOpError("has no entry in the accepted plan"), failure();
      std::string kernel = !step.symbol.empty() ? step.symbol
                           : entry->call.empty() ? entry->kernel
                                                 : entry->call;
      bool hasVjp = schedule.backward.count(id) != 0;
      body << "    if (tape) tape->record({"
           << cppStringLiteral(op->getName().stripDialect()) << ", "
           << cppStringLiteral(entry->capsule) << ", " << id << ", {}, "
           << (hasVjp ? "&vjp" + std::to_string(id) : "nullptr") << ", "
           << cppStringLiteral(kernel) << "});\n";
    }
  }
  body << "    return Status::Ok();\n  }\n\n";

  // One VJP launcher per tape node.
  for (const auto &[id, steps] : schedule.backward) {
    body << "  static void vjp" << id << "(void* self) {\n"
         << "    auto* model = static_cast<CudaModel*>(self);\n"
         << "    if (model->status_.ok()) model->status_ = model->run_vjp" << id
         << "();\n  }\n  Status run_vjp" << id << "() {\n";
    for (const Step &step : steps)
      if (failed(emitStep(step, body)))
        return failure();
    body << "    return Status::Ok();\n  }\n";
  }
  body << "  Status run_prologue() {\n";
  for (const Step &step : schedule.prologue)
    if (failed(emitStep(step, body)))
      return failure();
  body << "    return Status::Ok();\n  }\n\n";

  std::ostringstream out;
  out << "\n// ---- cuda backend (profile " << plan.profile().spec()
      << "; kernels compiled by NVRTC " << nvrtcVersionString() << " for "
      << binary.arch << ", PTX embedded for newer GPUs) ----\n"
      << "#include <cmath>\n#include <cuda_runtime_api.h>\n"
      << "#include \"runtime/cuda/allocator.h\"\n"
      << "#include \"runtime/cuda/blas.h\"\n"
      << "#include \"runtime/cuda/buffer.h\"\n"
      << "#include \"runtime/cuda/check.h\"\n"
      << "#include \"runtime/cuda/deterministic.h\"\n"
      << "#include \"runtime/cuda/memcpy.h\"\n"
      << "#include \"runtime/cuda/module.h\"\n"
      << "#include \"runtime/cuda/status.h\"\n"
      << "#include \"runtime/cuda/stream_graph.h\"\n\n"
      << "namespace {\nnamespace rc = vouch::rt::cuda;\n\n"
      << bytesArray("kCubin", binary.cubin, false)
      << bytesArray("kPtx", binary.ptx, true) << "\n"
      << "// Matches ParamSlot<T> in the kernels: one optimizer launch updates "
         "every param.\n"
      << "template <class T> struct ParamSlot { T* p; const T* g; T* m; T* v; "
         "long long n; };\n\n";

  int64_t maxLinearRows = 1;
  model.walk([&](LinearOp op) {
    int64_t in = shapeOf(op.getWeight())[1];
    maxLinearRows = std::max(maxLinearRows, numel(op.getInput()) / in);
  });
  int64_t batch = model.getBatch();
  int64_t inFeatures = numel(sig.input.getResult()) / batch;
  int64_t outFeatures = numel(sig.target.getResult()) / batch;
  out << "template <class T>\nstruct CudaModel final : CompiledModel<T> {\n"
      << "  static constexpr const char* kSuffix = sizeof(T) == 4 ? \"_f32\" : \"_f64\";\n"
      << "  static constexpr int kParams = " << sig.params.size() << ";\n"
      << "  static constexpr int64_t kBatch = " << batch << ", kIn = "
      << inFeatures << ", kOut = " << outFeatures << ";\n"
      << "  static constexpr int64_t kParamNumel[] = {";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << (i ? ", " : "") << numel(sig.params[i].getResult());
  out << "};\n\n"
      << "  Status status_ = Status::Ok();\n  RunConfig run_;\n  bool tf32_ = "
      << (plan.profile().tf32 ? "true" : "false") << ";\n"
      << "  rc::Stream stream_;\n  rc::KernelModule module_;\n"
      << "  std::vector<rc::DeviceBuffer> owned_;\n"
      << "  std::vector<std::unique_ptr<rc::StepGraph>> graphs_;  // one per batch\n"
      << "  // Device buffers: params, optimizer state, inputs, every value.\n";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << "  T* d_p" << i << " = nullptr;  // " << sig.params[i].getName().str()
        << "\n  T* d_m" << i << " = nullptr;\n  T* d_s" << i << " = nullptr;\n";
  out << "  T* d_x = nullptr;\n  T* d_y = nullptr;\n";
  for (Value v : buffers)
    out << "  T* " << names.lookup(v) << " = nullptr;\n";
  out << "  T* d_data_x = nullptr;\n  T* d_data_y = nullptr;\n"
      << "  ParamSlot<T>* d_slots = nullptr;\n  long long* d_step = nullptr;\n"
      << "  T* h_loss = nullptr;  // pinned, written by every step\n"
      << "  std::vector<std::vector<T>> h_params, h_grads;\n"
      << "  std::vector<T> h_pred = std::vector<T>(" << numel(sig.output)
      << ");\n";

  // Kernel handle members, then the constructor that loads them.
  std::ostringstream handles, loads;
  std::vector<std::string> allKernels = kernelSymbols(schedule);
  for (const std::string &k : allKernels) {
    handles << "  cudaKernel_t " << kernelVar(k) << " = nullptr;\n";
    loads << "    VOUCH_RETURN_IF_ERROR(load_kernel(" << kernelVar(k) << ", \""
          << k << "\"));\n";
  }
  handles << "  cudaKernel_t k_optimizer = nullptr;\n  cudaKernel_t k_step_count = nullptr;\n";
  out << handles.str() << "\n";

  out << "  cudaStream_t stream() const { return stream_.get(); }\n"
      << "  Status load_kernel(cudaKernel_t& k, const std::string& name) {\n"
      << "    Result<cudaKernel_t> r = module_.kernel((name + kSuffix).c_str());\n"
      << "    if (!r.ok()) return r.status();\n    k = r.value();\n"
      << "    return Status::Ok();\n  }\n"
      << "  template <class U> Status alloc(U*& p, int64_t count) {\n"
      << "    Result<rc::DeviceBuffer> b = rc::DeviceBuffer::allocate(\n"
      << "        sizeof(U) * size_t(count > 0 ? count : 1), stream());\n"
      << "    if (!b.ok()) return b.status();\n"
      << "    p = b.value().template as<U>();\n"
      << "    // Poisoned (all bits set: NaN) so an element no kernel wrote shows.\n"
      << "    VOUCH_CUDA_CHECK(cudaMemsetAsync(p, 0xff, sizeof(U) * size_t(count > 0 ? count : 1), stream()));\n"
      << "    owned_.push_back(std::move(b.value()));\n    return Status::Ok();\n  }\n\n"
      << "  CudaModel() { status_ = init(); }\n"
      << "  ~CudaModel() override {\n"
      << "    graphs_.clear();\n    if (h_loss) cudaFreeHost(h_loss);\n"
      << "    if (stream_.get()) cudaStreamSynchronize(stream_.get());\n"
      << "    owned_.clear();\n  }\n\n"
      << "  Status init() {\n"
      << "    Result<rc::Stream> s = rc::Stream::create();\n"
      << "    if (!s.ok()) return s.status();\n    stream_ = std::move(s.value());\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::set_blas_stream(stream()));\n"
      << "    Result<rc::KernelModule> m = rc::load_module(kCubin, sizeof(kCubin),\n"
      << "        reinterpret_cast<const char*>(kPtx));\n"
      << "    if (!m.ok()) return m.status();\n    module_ = std::move(m.value());\n"
      << loads.str()
      << "    VOUCH_RETURN_IF_ERROR(load_kernel(k_optimizer, \"" << m
      << "_optimizer\"));\n"
      << "    Result<cudaKernel_t> counter = module_.kernel(\"" << m
      << "_step_count\");\n"
      << "    if (!counter.ok()) return counter.status();\n"
      << "    k_step_count = counter.value();\n";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << "    VOUCH_RETURN_IF_ERROR(alloc(d_p" << i << ", " << numel(sig.params[i].getResult())
        << "));\n    VOUCH_RETURN_IF_ERROR(alloc(d_m" << i << ", "
        << numel(sig.params[i].getResult()) << "));\n    VOUCH_RETURN_IF_ERROR(alloc(d_s"
        << i << ", " << numel(sig.params[i].getResult()) << "));\n";
  out << "    VOUCH_RETURN_IF_ERROR(alloc(d_x, kBatch * kIn));\n"
      << "    VOUCH_RETURN_IF_ERROR(alloc(d_y, kBatch * kOut));\n";
  for (Value v : buffers)
    out << "    VOUCH_RETURN_IF_ERROR(alloc(" << names.lookup(v) << ", "
        << numel(v) << "));\n";
  out << "    VOUCH_RETURN_IF_ERROR(alloc(d_slots, kParams));\n"
      << "    VOUCH_RETURN_IF_ERROR(alloc(d_step, 1));\n"
      << "    if constexpr (sizeof(T) == 8) {\n"
      << "      std::vector<T> ones(" << maxLinearRows << ", T(1));\n"
      << "      VOUCH_RETURN_IF_ERROR(alloc(d_ones, int64_t(ones.size())));\n"
      << "      VOUCH_RETURN_IF_ERROR(rc::upload(d_ones, ones.data(), ones.size(), stream()));\n"
      << "    }\n"
      << "    VOUCH_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&h_loss), sizeof(T)));\n"
      << "    std::vector<ParamSlot<T>> slots = {\n";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << "        {d_p" << i << ", " << dev(sig.grads[i]) << ", d_m" << i
        << ", d_s" << i << ", " << numel(sig.params[i].getResult()) << "},\n";
  out << "    };\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::upload(d_slots, slots.data(), slots.size(), stream()));\n"
      << "    for (int i = 0; i < kParams; ++i) {\n"
      << "      h_params.emplace_back(kParamNumel[i]);\n"
      << "      h_grads.emplace_back(kParamNumel[i]);\n    }\n"
      << "    return stream_.synchronize();\n  }\n\n";

  out << "  T* device_param(int i) const {\n    switch (i) {\n";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << "      case " << i << ": return d_p" << i << ";\n";
  out << "    }\n    return nullptr;\n  }\n  const T* device_grad(int i) const {\n"
      << "    switch (i) {\n";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << "      case " << i << ": return " << dev(sig.grads[i]) << ";\n";
  out << "    }\n    return nullptr;\n  }\n\n";

  out << "  Status linear(int64_t rows, int64_t in, int64_t out, const T* x,\n"
      << "                const T* w, const T* b, T* y) {\n"
      << "    if constexpr (sizeof(T) == 4) {\n"
      << "      return rc::linear_bias_row_major(rows, in, out, x, w, b, y, tf32_);\n"
      << "    } else {\n"
      << "      VOUCH_RETURN_IF_ERROR(rc::gemm_row_major(false, true, 1, rows, out, in,\n"
      << "          x, 0, w, 0, y, false, false));\n"
      << "      if (b == nullptr) return Status::Ok();\n"
      << "      // y += ones[rows,1] · b[1,out]: the bias as a rank-1 GEMM update.\n"
      << "      return rc::gemm_row_major(false, false, 1, rows, out, 1, d_ones, 0, b, 0, y,\n"
      << "                                true, false);\n    }\n  }\n"
      << "  T* d_ones = nullptr;  // f64 bias update; allocated in init(), never while capturing\n\n";

  out << body.str();

  // The CompiledModel interface.
  out << "  T* param(int i) override { return h_params[i].data(); }\n"
      << "  T* grad(int i) override {\n"
      << "    Status s = rc::download(h_grads[i].data(), device_grad(i), h_grads[i].size(), stream());\n"
      << "    if (s.ok()) s = stream_.synchronize();\n"
      << "    if (!s.ok() && status_.ok()) status_ = s;\n"
      << "    return h_grads[i].data();\n  }\n"
      << "  const T* prediction() const override { return h_pred.data(); }\n"
      << "  bool device_resident() const override { return true; }\n"
      << "  Status status() const override { return status_; }\n"
      << "  Status configure(const RunConfig& run) override {\n"
      << "    run_ = run;\n    if (run.deterministic) rc::set_deterministic_reductions(true);\n"
      << "    return status_;\n  }\n"
      << "  std::string memory_report() const override { return rc::format(rc::stats()); }\n\n"
      << "  Status upload_params() override {\n"
      << "    for (int i = 0; i < kParams; ++i) {\n"
      << "      VOUCH_RETURN_IF_ERROR(rc::upload(device_param(i), h_params[i].data(), h_params[i].size(), stream()));\n"
      << "    }\n";
  for (size_t i = 0; i < sig.params.size(); ++i)
    out << "    VOUCH_CUDA_CHECK(cudaMemsetAsync(d_m" << i << ", 0, sizeof(T) * "
        << numel(sig.params[i].getResult()) << ", stream()));\n"
        << "    VOUCH_CUDA_CHECK(cudaMemsetAsync(d_s" << i << ", 0, sizeof(T) * "
        << numel(sig.params[i].getResult()) << ", stream()));\n";
  out << "    VOUCH_CUDA_CHECK(cudaMemsetAsync(d_step, 0, sizeof(long long), stream()));\n"
      << "    graphs_.clear();\n    return stream_.synchronize();\n  }\n"
      << "  Status download_params() override {\n"
      << "    for (int i = 0; i < kParams; ++i) {\n"
      << "      VOUCH_RETURN_IF_ERROR(rc::download(h_params[i].data(), device_param(i), h_params[i].size(), stream()));\n"
      << "    }\n    return stream_.synchronize();\n  }\n"
      << "  Status upload_data(const T* x, const T* y, int64_t rows) override {\n"
      << "    VOUCH_RETURN_IF_ERROR(alloc(d_data_x, rows * kIn));\n"
      << "    VOUCH_RETURN_IF_ERROR(alloc(d_data_y, rows * kOut));\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::upload(d_data_x, x, size_t(rows * kIn), stream()));\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::upload(d_data_y, y, size_t(rows * kOut), stream()));\n"
      << "    graphs_.clear();\n"
      << "    graphs_.resize(size_t(rows / kBatch));\n"
      << "    return stream_.synchronize();\n  }\n\n";

  out << "  // Evaluation (mean losses, probes): host batch in, loss and\n"
      << "  // prediction out; no tape, no graph.\n"
      << "  T forward(const T* x, const T* y, Tape* tape) override {\n"
      << "    Status s = status_;\n"
      << "    if (s.ok()) s = rc::upload(d_x, x, size_t(kBatch * kIn), stream());\n"
      << "    if (s.ok()) s = rc::upload(d_y, y, size_t(kBatch * kOut), stream());\n"
      << "    if (s.ok()) s = run_forward(tape);\n"
      << "    if (s.ok()) s = rc::download(h_pred.data(), static_cast<const T*>("
      << dev(sig.output) << "), h_pred.size(), stream());\n"
      << "    if (s.ok()) s = rc::download(h_loss, static_cast<const T*>("
      << dev(sig.loss) << "), 1, stream());\n"
      << "    if (s.ok()) s = stream_.synchronize();\n"
      << "    if (!s.ok()) {\n      if (status_.ok()) status_ = s;\n"
      << "      return T(NAN);\n    }\n    return *h_loss;\n  }\n"
      << "  void backward(Tape& tape) override { tape.backward(this); }\n\n";

  out << "  // One training step on device: batch copy, forward with the tape, the\n"
      << "  // tape's VJPs, the optimizer, the step counter, the loss to pinned\n"
      << "  // memory. Captured once per batch as a CUDA graph and replayed.\n"
      << "  Status step_body(int64_t b, const OptimizerConfig& o, Tape* shown) {\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::copy_device(d_x, d_data_x + b * kBatch * kIn, size_t(kBatch * kIn), stream()));\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::copy_device(d_y, d_data_y + b * kBatch * kOut, size_t(kBatch * kOut), stream()));\n"
      << "    VOUCH_RETURN_IF_ERROR(run_prologue());\n"
      << "    Tape local;\n    Tape& tape = shown ? *shown : local;\n"
      << "    VOUCH_RETURN_IF_ERROR(run_forward(&tape));\n"
      << "    tape.backward(this);\n    VOUCH_RETURN_IF_ERROR(status_);\n"
      << "    int kind = o.kind == OptimizerConfig::Sgd ? 0 : o.kind == OptimizerConfig::Adam ? 1 : 2;\n"
      << "    double lr = o.lr, b1 = o.beta1, b2 = o.beta2, eps = o.eps, wd = o.weight_decay,\n"
      << "           mom = o.momentum;\n"
      << "    ParamSlot<T>* slots = d_slots;\n    long long* step = d_step;\n"
      << "    void* args[] = {&slots, &step, &kind, &lr, &b1, &b2, &eps, &wd, &mom};\n"
      << "    int64_t largest = 1;\n"
      << "    for (int64_t n : kParamNumel) largest = n > largest ? n : largest;\n"
      << "    unsigned blocks = unsigned(std::min<int64_t>((largest + 255) / 256, 1024));\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::launch(k_optimizer, dim3(blocks, kParams), dim3(256), 0, stream(), args));\n"
      << "    void* count_args[] = {&step};\n"
      << "    VOUCH_RETURN_IF_ERROR(rc::launch(k_step_count, dim3(1), dim3(1), 0, stream(), count_args));\n"
      << "    return rc::download(h_loss, static_cast<const T*>(" << dev(sig.loss)
      << "), 1, stream());\n  }\n\n"
      << "  Result<double> train_step(int64_t b, const OptimizerConfig& o, Tape* tape) override {\n"
      << "    VOUCH_RETURN_IF_ERROR(status_);\n"
      << "    if (size_t(b) >= graphs_.size()) return Status::Error(\"train_step: no data uploaded for batch \" + std::to_string(b));\n"
      << "    if (!graphs_[b])\n"
      << "      graphs_[b] = std::make_unique<rc::StepGraph>(stream(), run_.cuda_graph ? rc::StepGraph::Mode::Graph : rc::StepGraph::Mode::Disabled);\n"
      << "    VOUCH_RETURN_IF_ERROR(graphs_[b]->run([&] { return step_body(b, o, tape); }));\n"
      << "    VOUCH_RETURN_IF_ERROR(stream_.synchronize());\n"
      << "    return double(*h_loss);\n  }\n};\n\n";

  // The backend and main().
  out << "Status cuda_ready() { return rc::require_native_cuda(); }\n\n"
      << "template <class T>\nstd::unique_ptr<CompiledModel<T>> make_cuda() {\n"
      << "  return std::make_unique<CudaModel<T>>();\n}\n\n"
      << "Backend cuda_backend() {\n  Backend b;\n  b.device = Device::Cuda;\n"
      << "  b.make_f32 = &make_cuda<float>;\n  b.make_f64 = &make_cuda<double>;\n"
      << "  b.ready = &cuda_ready;\n"
      << "  b.header = std::string(\"backend: cuda, profile " << plan.profile().spec()
      << " (NVRTC " << nvrtcVersionString() << ", " << binary.arch
      << " cubin + PTX; cuBLAS/cuBLASLt; reductions: vouch kernels "
         "fixed-order-tree, cuBLAS implementation-defined; --deterministic \") + "
         "(rc::deterministic_reductions() ? \"on\" : \"off\") + \")\\n\" + "
      << cppStringLiteral(describeSchedule()) << ";\n";
  for (const capsules::KernelCapsule &c : plan.capsules())
    out << "  b.capsule_reports[" << cppStringLiteral(c.name) << "] = "
        << cppStringLiteral(capsules::renderCapsuleEntry(c, plan.profile().tf32))
        << ";\n";
  out << "  return b;\n}\n\n}  // namespace\n\n"
      << "int main(int argc, char** argv) {\n"
      << "  static const ModelDescription model = describe();\n"
      << "  return train_main(argc, argv, model, {cpu_backend(), cuda_backend()});\n"
      << "}\n";
  return out.str();
}

} // namespace

FailureOr<std::string> emitCudaBackend(ModelOp model,
                                       const AcceptedGraphPlan &plan,
                                       const CudaSchedule &schedule,
                                       const CudaBinary &binary) {
  return Emitter(model, plan, schedule, binary).run();
}

} // namespace vouch::codegen
