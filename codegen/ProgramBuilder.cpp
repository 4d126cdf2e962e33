//===- ProgramBuilder.cpp - a model as runtime tables -----------*- C++ -*-===//
#include "codegen/ProgramBuilder.h"

#include <cassert>

#include <sstream>

#include "codegen/EmitSupport.h"
#include "codegen/StoragePlan.h"
#include "llvm/Support/ErrorHandling.h"
#include "runtime/model_tables.h"

using namespace mlir;

namespace vouch::codegen {

ProgramBuilder::ProgramBuilder(ModelOp model, Target target)
    : modelName_(model.getSymName().str()), target_(target) {}

namespace {
/// "[8, 2]" ("[]" for rank 0): how the tape shows a saved buffer's shape.
std::string shapeText(Value v) {
  std::string text = "[";
  for (auto [i, extent] :
       llvm::enumerate(cast<ShapedType>(v.getType()).getShape()))
    text += (i ? ", " : "") + std::to_string(extent);
  return text + "]";
}
} // namespace

/// The runtime's storage class of `v`'s elements.
static rt::DType dtypeOf(Value v) {
  if (cast<ShapedType>(v.getType()).getElementType().isBF16())
    return rt::DType::Bf16; // vouch.round_bf16's: a bf16 product's operand
  return storedAsInt32(v) ? rt::DType::I32 : rt::DType::Real;
}

void ProgramBuilder::addNamed(Value v, StringRef name) {
  bufferOf_[v] = static_cast<int32_t>(buffers_.size());
  buffers_.push_back({numel(v), -1, nullptr, nullptr, dtypeOf(v)});
  bufferNames_.push_back(name.str());
  bufferShapes_.push_back(shapeText(v));
}

void ProgramBuilder::addParam(Value v, StringRef name) {
  params_.push_back(static_cast<int32_t>(buffers_.size()));
  addNamed(v, name);
}

void ProgramBuilder::addState(Value v, StringRef name) {
  states_.push_back(static_cast<int32_t>(buffers_.size()));
  addNamed(v, name);
}

void ProgramBuilder::addField(Value v, StringRef name) {
  fields_.push_back(static_cast<int32_t>(buffers_.size()));
  addNamed(v, name);
}

void ProgramBuilder::addValue(Value v, Value aliasOf) {
  int32_t alias = -1;
  if (aliasOf) {
    alias = buffer(aliasOf);
    while (buffers_[alias].alias_of >= 0)
      alias = buffers_[alias].alias_of;
  }
  bufferOf_[v] = static_cast<int32_t>(buffers_.size());
  buffers_.push_back({numel(v), alias, nullptr, nullptr, dtypeOf(v)});
  bufferNames_.push_back("v" + std::to_string(buffers_.size() - 1));
  bufferShapes_.push_back(shapeText(v));
}

int32_t ProgramBuilder::addScratch(StringRef name, int64_t numel,
                                   rt::DType dtype, bool zeroed) {
  buffers_.push_back({numel, -1, nullptr, nullptr, dtype, zeroed});
  bufferNames_.push_back(name.str());
  bufferShapes_.push_back("[" + std::to_string(numel) + "]");
  return static_cast<int32_t>(buffers_.size() - 1);
}

int32_t ProgramBuilder::buffer(Value v) const {
  auto it = bufferOf_.find(v);
  assert(it != bufferOf_.end() && "value without a buffer");
  return it->second;
}

std::string ProgramBuilder::bufferName(Value v) const {
  return bufferNames_[buffer(v)];
}

int32_t ProgramBuilder::kernel(StringRef base, const std::string &source) {
  auto it = kernelBySource_.find(source);
  if (it != kernelBySource_.end()) {
    // A launch is named after its kernel: one source asked for under two
    // names would name one op's launches after the other's.
    assert(kernelBase_[it->second] == base && "one kernel source, two names");
    return it->second;
  }
  int uses = ++nameUses_[base.str()];
  std::string name = "vouch_" + base.str() +
                     (uses > 1 ? "_" + std::to_string(uses) : "");
  std::string text = source;
  for (size_t at; (at = text.find("@NAME@")) != std::string::npos;)
    text.replace(at, 6, name);
  int32_t index = static_cast<int32_t>(kernels_.size());
  kernels_.push_back({name, text});
  kernelBase_.push_back(base.str());
  kernelBySource_[source] = index;
  return index;
}

std::string ProgramBuilder::kernelSources() const {
  std::string out;
  for (const Kernel &k : kernels_)
    out += k.source + "\n";
  return out;
}

rt::StepDesc &ProgramBuilder::appendStep(rt::StepKind kind,
                                         const std::string &what) {
  rt::StepDesc &step = steps_.emplace_back();
  step.kind = kind;
  step.kernel = -1;
  step.a = step.b = step.c = step.bias = -1;
  whats_.push_back(what);
  capsules_.emplace_back();
  return step;
}

void ProgramBuilder::setCapsule(int32_t firstStep, const std::string &capsule) {
  for (int32_t s = firstStep; s < stepCount(); ++s)
    capsules_[s] = capsule;
}

void ProgramBuilder::addKernelStep(int32_t kernel, ArrayRef<KernelArg> args,
                                   uint32_t grid, uint32_t blockX,
                                   uint32_t blockY, uint32_t sharedBytes,
                                   uint32_t blocksPerSM, uint32_t sharedBytesF64) {
  rt::StepDesc &step = appendStep(rt::StepKind::Kernel, kernels_[kernel].name);
  step.kernel = kernel;
  step.first_arg = static_cast<int32_t>(args_.size());
  step.num_args = static_cast<int32_t>(args.size());
  step.grid_x = grid;
  step.block_x = blockX;
  step.block_y = blockY;
  step.shared_bytes = sharedBytes;
  step.blocks_per_sm = blocksPerSM;
  step.shared_bytes_f64 = sharedBytesF64;
  for (const KernelArg &arg : args) {
    rt::ArgDesc desc{arg.kind, 0, 0, 0.0};
    switch (arg.kind) {
    case rt::ArgDesc::Buffer:
      if (arg.value) {
        desc.value = buffer(arg.value);
        desc.count = arg.written ? 1 : 0; // state updated in place
      } else { // scratch: the step writes it
        desc.value = arg.integerValue;
        desc.count = 1;
      }
      break;
    case rt::ArgDesc::Int:
      desc.value = arg.integerValue;
      break;
    case rt::ArgDesc::Real:
      desc.real = arg.realValue;
      break;
    case rt::ArgDesc::Dims:
      desc.value = static_cast<int64_t>(ints_.size());
      desc.count = static_cast<int32_t>(arg.extents.size());
      ints_.insert(ints_.end(), arg.extents.begin(), arg.extents.end());
      ints_.insert(ints_.end(), arg.strides.begin(), arg.strides.end());
      break;
    case rt::ArgDesc::Context:
      break;
    }
    args_.push_back(desc);
  }
}

std::vector<int32_t> ProgramBuilder::markWritten(int32_t firstStep,
                                                 ArrayRef<Value> written) {
  std::vector<int32_t> outputs, unwritten;
  for (Value v : written)
    outputs.push_back(buffer(v));
  for (int32_t s = firstStep; s < stepCount(); ++s) {
    rt::StepDesc &step = steps_[s];
    if (step.kind != rt::StepKind::Kernel)
      continue; // a Gemm / Linear step writes c
    bool any = false;
    for (int32_t a = step.first_arg; a < step.first_arg + step.num_args; ++a) {
      rt::ArgDesc &arg = args_[a];
      // A scratch buffer is written where it is an argument (addKernelStep):
      // a step may write only its group's scratch (flash_attention_grad's
      // delta), which later steps of the group read.
      if (arg.kind == rt::ArgDesc::Buffer && arg.count == 1)
        any = true;
      if (arg.kind == rt::ArgDesc::Buffer &&
          llvm::is_contained(outputs, static_cast<int32_t>(arg.value))) {
        arg.count = 1;
        any = true;
      }
    }
    if (!any)
      unwritten.push_back(s);
  }
  return unwritten;
}

rt::StepDesc &ProgramBuilder::appendProductStep(rt::StepKind kind,
                                                const GemmDims &d, Value a,
                                                Value b, Value c,
                                                const std::string &what) {
  rt::StepDesc &step = appendStep(kind, what);
  step.batch = d.batch;
  step.m = d.m;
  step.n = d.n;
  step.k = d.k;
  step.stride_a = d.strideA;
  step.stride_b = d.strideB;
  step.a = buffer(a);
  step.b = buffer(b);
  step.c = buffer(c);
  return step;
}

void ProgramBuilder::addGemmStep(const GemmDims &d, Value a, Value b, Value c,
                                 const std::string &what) {
  rt::StepDesc &step = appendProductStep(rt::StepKind::Gemm, d, a, b, c, what);
  step.trans_a = d.transA;
  step.trans_b = d.transB;
}

void ProgramBuilder::addLinearStep(const GemmDims &d, Value x, Value w,
                                   Value bias, Value y,
                                   const std::string &what) {
  rt::StepDesc &step = appendProductStep(rt::StepKind::Linear, d, x, w, y, what);
  if (bias)
    step.bias = buffer(bias);
}

void ProgramBuilder::addLinearWeightGradStep(const GemmDims &d, Value dy,
                                             Value x, Value dw, Value db,
                                             const std::string &what) {
  rt::StepDesc &step =
      appendProductStep(rt::StepKind::LinearWeightGrad, d, dy, x, dw, what);
  step.trans_a = d.transA;
  step.bias = buffer(db);
}

void ProgramBuilder::addNode(int64_t id, StringRef op, StringRef capsule,
                             StringRef kernel, int32_t afterStep,
                             int32_t vjpBegin, int32_t vjpEnd,
                             std::vector<std::string> saved,
                             std::vector<std::string> state) {
  nodes_.push_back({id, op.str(), capsule.str(), kernel.str(), afterStep,
                    vjpBegin, vjpEnd, std::move(saved), std::move(state)});
}

void ProgramBuilder::setSignature(ArrayRef<Value> grads, Value loss,
                                  Value output, int64_t outputColumns) {
  for (Value g : grads)
    grads_.push_back(buffer(g));
  loss_ = buffer(loss);
  output_ = buffer(output);
  if (outputColumns > 0) {
    outputPitch_ = cast<ShapedType>(output.getType()).getShape().back();
    outputColumns_ = outputColumns;
  }
}

void ProgramBuilder::allowInPlace(int32_t step, Value operand, Value result) {
  inPlace_.push_back({step, buffer(operand), buffer(result)});
}

void ProgramBuilder::reuseStorage() {
  // The tables as the executors will see them (names and capsules are not
  // needed to read lifetimes off the steps).
  std::vector<rt::NodeDesc> nodes;
  for (const Node &n : nodes_)
    nodes.push_back({static_cast<int32_t>(n.id), nullptr, nullptr, nullptr,
                     n.afterStep, n.vjpBegin, n.vjpEnd, nullptr, 0});
  rt::Program p = programOver(buffers_, steps_, nodes);
  // The cuda executor reads the output only at the forward pass's end (it
  // keeps a host copy); the cpu one's prediction() is the buffer itself.
  StoragePlan plan = planStorage(p, inPlace_, /*outputReadAtForwardEnd=*/target_ == Target::Cuda);

  const int32_t first = static_cast<int32_t>(buffers_.size());
  for (auto [k, numel] : llvm::enumerate(plan.slotNumel)) {
    buffers_.push_back({numel, -1, nullptr, nullptr, rt::DType::Real});
    bufferNames_.push_back("storage" + std::to_string(k));
    bufferShapes_.push_back("[" + std::to_string(numel) + "]");
  }
  for (auto [b, slot] : llvm::enumerate(plan.slotOf))
    if (slot >= 0)
      buffers_[b].alias_of = first + slot;
  storageSummary_ = std::to_string(plan.shared) + " buffers share " +
                    std::to_string(plan.slotNumel.size()) + " slots: " +
                    std::to_string(plan.ownedAfter) +
                    " elements of storage instead of " +
                    std::to_string(plan.ownedBefore) + " (at least " +
                    std::to_string(plan.ownedAtLeast) + ")";
  if (!plan.inPlaceSteps.empty()) {
    storageSummary_ += ", " + std::to_string(plan.inPlaceSteps.size()) + " in place (";
    // By step, looked up once each (a scan per step is quadratic in a model
    // of many in-place steps).
    llvm::DenseMap<int32_t, const InPlaceStep *> byStep;
    for (const InPlaceStep &x : inPlace_)
      byStep.try_emplace(x.step, &x);
    for (auto [i, step] : llvm::enumerate(plan.inPlaceSteps)) {
      const InPlaceStep &ip = *byStep.lookup(step);
      storageSummary_ += (i ? ", " : "") + bufferNames_[ip.result] + " over " +
                         bufferNames_[ip.operand] + " by " + whats_[step];
    }
    storageSummary_ += ")";
  }
}

namespace {

const char *kindName(rt::ArgDesc::Kind kind) {
  switch (kind) {
  case rt::ArgDesc::Buffer:
    return "vouch::rt::ArgDesc::Buffer";
  case rt::ArgDesc::Int:
    return "vouch::rt::ArgDesc::Int";
  case rt::ArgDesc::Real:
    return "vouch::rt::ArgDesc::Real";
  case rt::ArgDesc::Dims:
    return "vouch::rt::ArgDesc::Dims";
  case rt::ArgDesc::Context:
    return "vouch::rt::ArgDesc::Context";
  }
  return "";
}

const char *stepKindName(rt::StepKind kind) {
  switch (kind) {
  case rt::StepKind::Kernel:
    return "vouch::rt::StepKind::Kernel";
  case rt::StepKind::Gemm:
    return "vouch::rt::StepKind::Gemm";
  case rt::StepKind::Linear:
    return "vouch::rt::StepKind::Linear";
  case rt::StepKind::LinearWeightGrad:
    return "vouch::rt::StepKind::LinearWeightGrad";
  }
  return "";
}

/// `{a, b, c}`, or `{x}` for an empty list (C++ has no empty arrays; the
/// Program's counts say how many entries are real).
template <class Range, class Fn>
void writeArray(std::ostream &out, const std::string &decl, const Range &items,
                const std::string &empty, Fn write) {
  out << decl << " = {";
  bool first = true;
  for (const auto &item : items) {
    out << (first ? "\n  " : ",\n  ");
    write(item);
    first = false;
  }
  if (first)
    out << empty;
  out << "};\n";
}

} // namespace

rt::Program ProgramBuilder::programOver(const std::vector<rt::BufferDesc> &buffers,
                                        const std::vector<rt::StepDesc> &steps,
                                        const std::vector<rt::NodeDesc> &nodes) const {
  rt::Program p{};
  p.name = modelName_.c_str();
  p.buffers = buffers.data();
  p.num_buffers = static_cast<int32_t>(buffers.size());
  p.params = params_.data();
  p.grads = grads_.data();
  p.num_params = static_cast<int32_t>(params_.size());
  p.loss = loss_;
  p.output = output_;
  p.steps = steps.data();
  p.num_steps = static_cast<int32_t>(steps.size());
  p.forward_end = forwardEnd_;
  p.prologue_begin = prologueBegin_;
  p.prologue_end = prologueEnd_;
  p.args = args_.data();
  p.num_args = static_cast<int32_t>(args_.size());
  p.ints = ints_.data();
  p.num_ints = static_cast<int32_t>(ints_.size());
  p.nodes = nodes.data();
  p.num_nodes = static_cast<int32_t>(nodes.size());
  p.schedule = schedule_.c_str();
  p.batch_capsule = batchCapsule_.c_str();
  p.optimizer_capsule = optimizerCapsule_.c_str();
  p.fields = fields_.data();
  p.num_fields = static_cast<int32_t>(fields_.size());
  p.clip_capsule = clipCapsule_.empty() ? nullptr : clipCapsule_.c_str();
  p.states = states_.empty() ? nullptr : states_.data();
  p.num_states = static_cast<int32_t>(states_.size());
  p.output_pitch = outputPitch_;
  p.output_columns = outputColumns_;
  return p;
}

rt::Program ProgramBuilder::sizingView() const { return programOver(buffers_, steps_, {}); }

std::string ProgramBuilder::encodeTables() const {
  // The Program with every pointer into this builder's strings and vectors.
  std::vector<rt::BufferDesc> buffers = buffers_;
  for (size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].name = bufferNames_[i].c_str();
    buffers[i].shape = bufferShapes_[i].c_str();
  }
  std::vector<rt::StepDesc> steps = steps_;
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].what = whats_[i].c_str();
    steps[i].capsule = capsules_[i].c_str();
  }
  std::vector<std::vector<const char *>> saved(nodes_.size()), state(nodes_.size());
  std::vector<rt::NodeDesc> nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node &n = nodes_[i];
    for (const std::string &s : n.saved)
      saved[i].push_back(s.c_str());
    for (const std::string &s : n.state)
      state[i].push_back(s.c_str());
    nodes.push_back({static_cast<int32_t>(n.id), n.op.c_str(), n.capsule.c_str(),
                     n.kernel.c_str(), n.afterStep, n.vjpBegin, n.vjpEnd,
                     saved[i].data(), static_cast<int32_t>(n.saved.size()),
                     n.state.empty() ? nullptr : state[i].data(),
                     static_cast<int32_t>(n.state.size())});
  }
  std::vector<const char *> kernelNames;
  for (const Kernel &k : kernels_)
    kernelNames.push_back(k.name.c_str());
  rt::Program p = programOver(buffers, steps, nodes);
  p.kernel_names = kernelNames.data();
  p.num_kernels = static_cast<int32_t>(kernelNames.size());
  return rt::encode_program_tables(p);
}

std::string ProgramBuilder::emitTables(const std::string &name) const {
  std::string blob = encodeTables();
  rt::Result<std::unique_ptr<rt::ProgramTables>> decoded =
      rt::decode_program_tables(blob.data(), blob.size());
  if (!decoded.ok())
    llvm::report_fatal_error(llvm::Twine("codegen: the program's tables do not read back: ") +
                             decoded.status().message());
  return programTablesText(decoded.value()->program(), name);
}

std::string programTablesText(const rt::Program &p, const std::string &name) {
  std::ostringstream out;
  out << "// ---- program `" << name << "`: " << p.num_buffers << " buffers, "
      << p.num_steps << " steps, " << p.num_kernels << " kernels ----\n";
  auto range = [](int32_t n) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = i;
    return v;
  };
  auto text = [](const char *s) {
    return s ? cppStringLiteral(s) : std::string("nullptr");
  };
  writeArray(out, "const vouch::rt::BufferDesc " + name + "_buffers[]",
             range(p.num_buffers), "{0, -1, \"\", nullptr}", [&](int32_t i) {
               const rt::BufferDesc &b = p.buffers[i];
               out << "{" << b.numel << ", " << b.alias_of << ", " << text(b.name)
                   << ", " << text(b.shape) << ", vouch::rt::DType::"
                   << (b.dtype == rt::DType::I32    ? "I32"
                       : b.dtype == rt::DType::Bf16 ? "Bf16"
                                                    : "Real")
                   << (b.zero_init ? ", true" : "") << "}";
             });
  auto ints = [&](const std::string &decl, const int32_t *v, int32_t n) {
    writeArray(out, decl, llvm::ArrayRef<int32_t>(v, static_cast<size_t>(n)), "-1",
               [&](int32_t i) { out << i; });
  };
  ints("const int32_t " + name + "_params[]", p.params, p.num_params);
  ints("const int32_t " + name + "_grads[]", p.grads, p.num_params);
  ints("const int32_t " + name + "_fields[]", p.fields, p.num_fields);
  if (p.num_states > 0)
    ints("const int32_t " + name + "_states[]", p.states, p.num_states);
  writeArray(out, "const vouch::rt::StepDesc " + name + "_steps[]",
             range(p.num_steps), "{}", [&](int32_t i) {
               const rt::StepDesc &s = p.steps[i];
               out << "{" << stepKindName(s.kind) << ", " << s.kernel << ", "
                   << s.first_arg << ", " << s.num_args << ", " << s.grid_x
                   << ", " << s.block_x << ", " << s.block_y << ", "
                   << (s.trans_a ? "true" : "false") << ", "
                   << (s.trans_b ? "true" : "false") << ", " << s.batch
                   << ", " << s.m << ", " << s.n << ", " << s.k << ", "
                   << s.stride_a << ", " << s.stride_b << ", " << s.a << ", "
                   << s.b << ", " << s.c << ", " << s.bias << ", "
                   << text(s.what) << ", " << text(s.capsule) << ", "
                   << s.shared_bytes << ", " << s.blocks_per_sm;
               // The last field only where set (value-initialised otherwise).
               if (s.shared_bytes_f64)
                 out << ", " << s.shared_bytes_f64;
               out << "}";
             });
  writeArray(out, "const vouch::rt::ArgDesc " + name + "_args[]",
             llvm::ArrayRef<rt::ArgDesc>(p.args, static_cast<size_t>(p.num_args)), "{}",
             [&](const rt::ArgDesc &a) {
               out << "{" << kindName(a.kind) << ", " << a.value << ", "
                   << a.count << ", " << exact(a.real) << "}";
             });
  writeArray(out, "const int64_t " + name + "_ints[]",
             llvm::ArrayRef<int64_t>(p.ints, static_cast<size_t>(p.num_ints)), "0",
             [&](int64_t v) { out << v << "LL"; });
  auto names = [&](const std::string &decl, const char *const *v, int32_t n) {
    writeArray(out, decl, llvm::ArrayRef<const char *>(v, static_cast<size_t>(n)),
               "nullptr", [&](const char *s) { out << text(s); });
  };
  for (int32_t i = 0; i < p.num_nodes; ++i)
    names("const char* const " + name + "_saved" + std::to_string(i) + "[]",
          p.nodes[i].saved, p.nodes[i].num_saved);
  // The state a node updates (batch_norm's), only for such nodes.
  for (int32_t i = 0; i < p.num_nodes; ++i)
    if (p.nodes[i].num_state > 0)
      names("const char* const " + name + "_state" + std::to_string(i) + "[]",
            p.nodes[i].state, p.nodes[i].num_state);
  writeArray(out, "const vouch::rt::NodeDesc " + name + "_nodes[]",
             range(p.num_nodes), "{}", [&](int32_t i) {
               const rt::NodeDesc &n = p.nodes[i];
               out << "{" << n.id << ", " << text(n.op) << ", " << text(n.capsule)
                   << ", " << text(n.kernel) << ", " << n.after_step << ", "
                   << n.vjp_begin << ", " << n.vjp_end << ", " << name
                   << "_saved" << i << ", " << n.num_saved;
               if (n.num_state > 0)
                 out << ", " << name << "_state" << i << ", " << n.num_state;
               out << "}";
             });
  names("const char* const " + name + "_kernels[]", p.kernel_names, p.num_kernels);
  out << "const vouch::rt::Program " << name << " = {\n  " << text(p.name) << ", "
      << name << "_buffers, " << p.num_buffers << ", " << name << "_params, "
      << name << "_grads, " << p.num_params << ",\n  " << p.loss << ", " << p.output
      << ", " << name << "_steps, " << p.num_steps << ", " << p.forward_end << ", "
      << p.prologue_begin << ", " << p.prologue_end << ",\n  " << name << "_args, "
      << name << "_ints, " << name << "_nodes, " << p.num_nodes << ", " << name
      << "_kernels, " << p.num_kernels << ",\n  " << text(p.schedule) << ",\n  "
      << p.num_args << ", " << p.num_ints << ", " << text(p.batch_capsule) << ", "
      << text(p.optimizer_capsule) << ",\n  " << name << "_fields, " << p.num_fields;
  // Only a clipping model names the field, only a model with state its
  // table, and only a padded output its rows (the fields are otherwise null
  // and 0).
  const bool rows = p.output_pitch > 0;
  if (p.clip_capsule)
    out << ", " << text(p.clip_capsule);
  else if (p.num_states > 0 || rows)
    out << ", nullptr";
  if (p.num_states > 0)
    out << ", " << name << "_states, " << p.num_states;
  else if (rows)
    out << ", nullptr, 0";
  if (rows)
    out << ", " << p.output_pitch << ", " << p.output_columns;
  out << "};\n\n";
  return out.str();
}

} // namespace vouch::codegen
