// executor.cc: the program check shared by the executors, and the cpu executor
// (executor.h).
#include "runtime/executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "runtime/cpu_kernels.h"

namespace vouch::rt {

namespace {

std::string at_step(int32_t s) { return "program step " + std::to_string(s); }

// Ok when buffer `b` holds at least `needed` elements.
Status check_operand(const Program& p, int32_t s, const char* role, int32_t b, int64_t needed) {
  if (b < 0 || b >= p.num_buffers)
    return Status::Error(at_step(s) + ": " + role + " buffer " + std::to_string(b) +
                         " is out of range [0, " + std::to_string(p.num_buffers) + ")");
  if (p.buffers[b].numel < needed)
    return Status::Error(at_step(s) + ": " + role + " buffer " + std::to_string(b) + " (" +
                         p.buffers[b].name + ") holds " + std::to_string(p.buffers[b].numel) +
                         " elements, the step reads or writes " + std::to_string(needed));
  return Status::Ok();
}

// A library step's operand: its role (for the message), buffer and the elements the
// step reads or writes; `optional`: buffer -1 means the step has none; `bf16`: one of
// the two factors (lhs / rhs, x / W, dy / x), which may be a Bf16 buffer (read as bf16 by
// a cuda run with bf16 products), or a linear's y and bias (stored and read as bf16 by
// such a run's cuBLASLt, both or neither); every other operand (an output) is real.
struct StepOperand {
  const char* role;
  int32_t buffer;
  int64_t needed;
  bool optional = false;
  bool bf16 = false;
};

// Ok when every operand's buffer holds what the step needs; else the first that
// does not.
Status check_operands(const Program& p, int32_t s, std::initializer_list<StepOperand> operands) {
  for (const StepOperand& o : operands) {
    if (o.optional && o.buffer == -1) continue;
    Status st = check_operand(p, s, o.role, o.buffer, o.needed);
    if (!st.ok()) return st;
    if (!o.bf16 && p.buffers[o.buffer].dtype == DType::Bf16)
      return Status::Error(at_step(s) + ": " + o.role + " buffer " + std::to_string(o.buffer) +
                           " (" + p.buffers[o.buffer].name +
                           ") is bf16; a product's output is real (only its two factors, "
                           "and a linear's y and bias, may be bf16)");
  }
  return Status::Ok();
}

Status check_step(const Program& p, int32_t s) {
  const StepDesc& st = p.steps[s];
  switch (st.kind) {
    case StepKind::Kernel: {
      if (st.kernel < 0 || st.kernel >= p.num_kernels)
        return Status::Error(at_step(s) + ": kernel " + std::to_string(st.kernel) +
                             " is out of range [0, " + std::to_string(p.num_kernels) + ")");
      if (st.first_arg < 0 || st.num_args < 0 ||
          int64_t(st.first_arg) + st.num_args > int64_t(p.num_args))
        return Status::Error(at_step(s) + ": arguments [" + std::to_string(st.first_arg) + ", +" +
                             std::to_string(st.num_args) + ") exceed Program::num_args = " +
                             std::to_string(p.num_args));
      for (int32_t a = st.first_arg; a < st.first_arg + st.num_args; a++)
        if (p.args[a].kind == ArgDesc::Buffer && p.args[a].count == 1) return Status::Ok();
      // The cuda executor orders launches by what they write: every kernel writes.
      return Status::Error(at_step(s) + ": no Buffer argument is marked written (count 1)");
    }
    case StepKind::Gemm: {
      if (st.batch < 0 || st.m < 0 || st.n < 0 || st.k < 0 || st.stride_a < 0 || st.stride_b < 0)
        return Status::Error(at_step(s) + ": negative GEMM extent or stride");
      int64_t last = st.batch > 0 ? st.batch - 1 : 0;
      int64_t need_a = st.batch > 0 ? last * st.stride_a + st.m * st.k : 0;
      int64_t need_b = st.batch > 0 ? last * st.stride_b + st.k * st.n : 0;
      return check_operands(p, s,
                            {{"lhs", st.a, need_a, false, true},
                             {"rhs", st.b, need_b, false, true},
                             {"C", st.c, st.batch * st.m * st.n}});
    }
    case StepKind::Linear: {
      if (st.m < 0 || st.n < 0 || st.k < 0)
        return Status::Error(at_step(s) + ": negative linear extent");
      Status operands = check_operands(p, s,
                                       {{"x", st.a, st.m * st.k, false, true},
                                        {"W", st.b, st.n * st.k, false, true},
                                        {"bias", st.bias, st.n, /*optional=*/true, true},
                                        {"y", st.c, st.m * st.n, false, true}});
      if (!operands.ok()) return operands;
      // cuBLASLt adds a bias of D's type: a bf16 y has a bf16 bias, a real y a real one.
      const bool bf16_y = p.buffers[st.c].dtype == DType::Bf16;
      if (st.bias != -1 && (p.buffers[st.bias].dtype == DType::Bf16) != bf16_y)
        return Status::Error(at_step(s) + ": bias buffer " + std::to_string(st.bias) + " (" +
                             p.buffers[st.bias].name + ") is " +
                             (bf16_y ? "real" : "bf16") + " but y buffer " +
                             std::to_string(st.c) + " (" + p.buffers[st.c].name + ") is " +
                             (bf16_y ? "bf16" : "real") +
                             ": a linear's bias is bf16 exactly when its y is");
      return Status::Ok();
    }
    case StepKind::LinearWeightGrad: {
      if (st.m < 0 || st.n < 0 || st.k < 0)
        return Status::Error(at_step(s) + ": negative linear_weight_grad extent");
      return check_operands(p, s,
                            {{"dy", st.a, st.k * st.m, false, true},
                             {"x", st.b, st.k * st.n, false, true},
                             {"dW", st.c, st.m * st.n},
                             {"db", st.bias, st.m}});
    }
  }
  return Status::Error(at_step(s) + ": unknown step kind " + std::to_string(int(st.kind)));
}

}  // namespace

Status two_real_fields(const Program& p) {
  if (p.num_fields == 2 && p.buffers[p.fields[0]].dtype == DType::Real &&
      p.buffers[p.fields[1]].dtype == DType::Real)
    return Status::Ok();
  return Status::Error(std::string("program `") + p.name + "` feeds " +
                       std::to_string(p.num_fields) +
                       " data fields, not one real input and one real target: pass every "
                       "field (forward_fields / upload_fields)");
}

Status check_program(const Program& p) {
  const std::string name = p.name ? p.name : "?";
  auto error = [&](const std::string& what) {
    return Status::Error("program `" + name + "`: " + what);
  };
  if (p.num_buffers < 0 || (p.num_buffers > 0 && !p.buffers)) return error("no buffer table");
  for (int32_t b = 0; b < p.num_buffers; b++) {
    const BufferDesc& d = p.buffers[b];
    std::string which = "buffer " + std::to_string(b);
    if (!d.name) return error(which + " has no name");
    which += " (" + std::string(d.name) + ")";
    if (d.numel < 0) return error(which + " has a negative element count");
    if (d.alias_of < -1 || d.alias_of >= p.num_buffers)
      return error(which + " aliases buffer " + std::to_string(d.alias_of) + ", out of range");
    int32_t owner = b;
    for (int32_t hops = 0; p.buffers[owner].alias_of != -1; hops++) {
      if (hops >= p.num_buffers) return error(which + " is on an alias cycle");
      owner = p.buffers[owner].alias_of;
    }
    const BufferDesc& o = p.buffers[owner];
    // Compared in bytes, in the smallest run (f32), where a Real or I32 element takes 4
    // and a Bf16 one 2 (an f64 run's storage is larger, its bf16 the same); without a
    // Bf16 side that is the element counts, and the message says so.
    auto f32_bytes = [](const BufferDesc& x) {
      return x.numel * (x.dtype == DType::Bf16 ? 2 : 4);
    };
    if (f32_bytes(o) >= f32_bytes(d)) continue;
    if (d.dtype != DType::Bf16 && o.dtype != DType::Bf16)
      return error(which + " has " + std::to_string(d.numel) + " elements, more than the " +
                   std::to_string(o.numel) + " of the storage it aliases (" + o.name + ")");
    return error(which + " needs " + std::to_string(f32_bytes(d)) + " bytes (" +
                 std::to_string(d.numel) + " " + dtype_name(d.dtype, 4) + "), more than the " +
                 std::to_string(f32_bytes(o)) + " of the storage it aliases (" + o.name + ", " +
                 std::to_string(o.numel) + " " + dtype_name(o.dtype, 4) + ")");
  }
  auto in_range = [&](int32_t b) { return b >= 0 && b < p.num_buffers; };
  if (p.num_params < 0 || (p.num_params > 0 && (!p.params || !p.grads)))
    return error("no parameter / gradient tables");
  for (int32_t i = 0; i < p.num_params; i++) {
    if (!in_range(p.params[i]) || !in_range(p.grads[i]))
      return error("param " + std::to_string(i) + ": buffer index out of range");
    if (p.buffers[p.params[i]].numel != p.buffers[p.grads[i]].numel)
      return error("param " + std::to_string(i) + " (" + p.buffers[p.params[i]].name +
                   ") and its gradient differ in size");
    // The optimizer, the host mirrors and checkpoints read them as T.
    for (int32_t b : {p.params[i], p.grads[i]})
      if (p.buffers[b].dtype == DType::Bf16)
        return error("param " + std::to_string(i) + " (" + p.buffers[p.params[i]].name + "): " +
                     (b == p.params[i] ? "the param" : "its gradient") + " (buffer " +
                     std::to_string(b) + ", " + p.buffers[b].name +
                     ") is bf16; params and gradients are real");
  }
  if (p.num_states < 0 || (p.num_states > 0 && !p.states)) return error("no state table");
  for (int32_t i = 0; i < p.num_states; i++) {
    if (!in_range(p.states[i]))
      return error("state " + std::to_string(i) + ": buffer index out of range");
    const BufferDesc& d = p.buffers[p.states[i]];
    // Persistent: its own storage, never a view or a shared slot.
    if (d.alias_of != -1 || d.dtype != DType::Real)
      return error("state " + std::to_string(i) + " (" + d.name +
                   ") must own real storage");
  }
  const std::pair<const char*, int32_t> roles[] = {{"loss", p.loss}, {"output", p.output}};
  for (const auto& [role, b] : roles)
    if (!in_range(b)) return error(std::string(role) + " buffer " + std::to_string(b) +
                                   " is out of range");
  if (p.num_fields < 1 || !p.fields) return error("no data fields");
  for (int32_t f = 0; f < p.num_fields; f++) {
    if (!in_range(p.fields[f]))
      return error("data field " + std::to_string(f) + ": buffer " +
                   std::to_string(p.fields[f]) + " is out of range");
    if (p.buffers[p.fields[f]].alias_of != -1)
      return error("data field " + std::to_string(f) + " (" + p.buffers[p.fields[f]].name +
                   ") is a view; a field owns its storage");
    // The loaders fill a field with T or int32 rows.
    if (p.buffers[p.fields[f]].dtype == DType::Bf16)
      return error("data field " + std::to_string(f) + " (" + p.buffers[p.fields[f]].name +
                   ") is bf16; a field is real or int32");
  }
  for (const auto& [role, b] : roles)
    if (p.buffers[b].dtype == DType::Bf16)
      return error(std::string("the ") + role + " (buffer " + std::to_string(b) + ", " +
                   p.buffers[b].name + ") is bf16; the loss and the output must be real");
  if (p.buffers[p.loss].dtype != DType::Real || p.buffers[p.output].dtype != DType::Real)
    return error("the loss and the output must be real");
  if (p.buffers[p.loss].numel < 1) return error("the loss buffer is empty");
  if (p.num_kernels < 0 || (p.num_kernels > 0 && !p.kernel_names))
    return error("no kernel name table");
  for (int32_t k = 0; k < p.num_kernels; k++)
    if (!p.kernel_names[k]) return error("kernel " + std::to_string(k) + " has no name");
  if (p.num_args < 0 || (p.num_args > 0 && !p.args)) return error("no argument table");
  if (p.num_ints < 0 || (p.num_ints > 0 && !p.ints)) return error("no ints table");
  for (int32_t a = 0; a < p.num_args; a++) {
    const ArgDesc& d = p.args[a];
    std::string which = "argument " + std::to_string(a);
    switch (d.kind) {
      case ArgDesc::Buffer:
        if (d.value < 0 || d.value >= p.num_buffers)
          return error(which + " names buffer " + std::to_string(d.value) + ", out of range");
        break;
      case ArgDesc::Int:
      case ArgDesc::Real:
      case ArgDesc::Context:
        break;
      case ArgDesc::Dims:
        if (d.count < 0 || d.count > kMaxDims)
          return error(which + " has " + std::to_string(d.count) + " axes (at most " +
                       std::to_string(kMaxDims) + ")");
        if (d.value < 0 || d.value + 2 * int64_t(d.count) > p.num_ints)
          return error(which + " reads ints [" + std::to_string(d.value) + ", +" +
                       std::to_string(2 * d.count) + ") beyond Program::num_ints = " +
                       std::to_string(p.num_ints));
        break;
      default:
        return error(which + " has unknown kind " + std::to_string(int(d.kind)));
    }
  }
  if (p.num_steps < 0 || (p.num_steps > 0 && !p.steps)) return error("no step table");
  if (p.forward_end < 0 || p.forward_end > p.num_steps)
    return error("forward_end " + std::to_string(p.forward_end) + " is out of [0, " +
                 std::to_string(p.num_steps) + "]");
  if (p.output_pitch != 0 || p.output_columns != 0) {
    const int64_t numel = p.buffers[p.output].numel;
    if (p.output_columns < 1 || p.output_pitch < p.output_columns || numel % p.output_pitch != 0)
      return error("the output's rows (" + std::to_string(p.output_columns) + " of every " +
                   std::to_string(p.output_pitch) + " elements) do not tile its buffer of " +
                   std::to_string(numel) + " elements");
  }
  if (p.prologue_begin < 0 || p.prologue_begin > p.prologue_end ||
      p.prologue_end > p.num_steps)
    return error("prologue [" + std::to_string(p.prologue_begin) + ", " +
                 std::to_string(p.prologue_end) + ") is not a range of steps");
  for (int32_t s = 0; s < p.num_steps; s++) {
    Status st = check_step(p, s);
    if (!st.ok()) return error(st.message());
  }
  if (p.num_nodes < 0 || (p.num_nodes > 0 && !p.nodes)) return error("no node table");
  std::unordered_map<int32_t, int32_t> seen;
  for (int32_t i = 0; i < p.num_nodes; i++) {
    const NodeDesc& n = p.nodes[i];
    std::string which = "node " + std::to_string(i) + " (id " + std::to_string(n.id) + ")";
    if (!n.op || !n.capsule) return error(which + " has no op or capsule name");
    if (n.id < 0) return error(which + " has a negative id");
    if (!seen.emplace(n.id, i).second)
      return error(which + " repeats the id of node " + std::to_string(seen[n.id]));
    if (n.after_step < 0 || n.after_step >= p.forward_end)
      return error(which + " is recorded after step " + std::to_string(n.after_step) +
                   ", not a forward step [0, " + std::to_string(p.forward_end) + ")");
    if (n.vjp_begin < 0 || n.vjp_begin > n.vjp_end || n.vjp_end > p.num_steps)
      return error(which + ": VJP steps [" + std::to_string(n.vjp_begin) + ", " +
                   std::to_string(n.vjp_end) + ") are not a range of steps");
    if (n.num_saved < 0 || (n.num_saved > 0 && !n.saved))
      return error(which + " has no saved-name table");
    for (int32_t j = 0; j < n.num_saved; j++)
      if (!n.saved[j]) return error(which + ": saved name " + std::to_string(j) + " is null");
    if (n.num_state < 0 || (n.num_state > 0 && !n.state))
      return error(which + " has no state-name table");
    for (int32_t j = 0; j < n.num_state; j++)
      if (!n.state[j]) return error(which + ": state name " + std::to_string(j) + " is null");
  }
  return Status::Ok();
}

int32_t storage_owner(const Program& program, int32_t b) {
  while (program.buffers[b].alias_of != -1) b = program.buffers[b].alias_of;
  return b;
}

std::vector<StepAccess> step_access(const Program& p, int32_t blas_workspace) {
  std::vector<StepAccess> out(size_t(p.num_steps));
  for (int32_t s = 0; s < p.num_steps; s++) {
    const StepDesc& st = p.steps[s];
    StepAccess& a = out[size_t(s)];
    if (st.kind != StepKind::Kernel) {
      // A linear reads its bias; a linear's weight gradient writes it (db).
      const bool bias_written = st.kind == StepKind::LinearWeightGrad;
      for (int32_t b : {st.a, st.b, bias_written ? -1 : st.bias})
        if (b != -1) a.reads.push_back(storage_owner(p, b));
      a.writes.push_back(storage_owner(p, st.c));
      if (bias_written) a.writes.push_back(storage_owner(p, st.bias));
      // cuBLAS / cuBLASLt calls share their handle's workspace: never side by side.
      a.writes.push_back(blas_workspace);
      continue;
    }
    for (int32_t i = st.first_arg; i < st.first_arg + st.num_args; i++) {
      const ArgDesc& d = p.args[i];
      // A random op reads the step counter (a pseudo-buffer after the real ones),
      // which the optimizer's last block advances: never side by side with it.
      if (d.kind == ArgDesc::Context) a.reads.push_back(p.num_buffers);
      if (d.kind != ArgDesc::Buffer) continue;
      (d.count == 1 ? a.writes : a.reads).push_back(storage_owner(p, int32_t(d.value)));
    }
  }
  return out;
}

std::vector<int32_t> recorded_node_order(const Program& p) {
  std::vector<int32_t> order(size_t(p.num_nodes));
  for (int32_t i = 0; i < p.num_nodes; i++) order[size_t(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
    return p.nodes[x].after_step < p.nodes[y].after_step;
  });
  return order;
}

std::vector<int32_t> training_step_order(const Program& p) {
  std::vector<int32_t> order;
  for (int32_t s = 0; s < p.forward_end; s++) order.push_back(s);
  for (int32_t s = p.prologue_begin; s < p.prologue_end; s++) order.push_back(s);
  const std::vector<int32_t> nodes = recorded_node_order(p);
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
    for (int32_t s = p.nodes[*it].vjp_begin; s < p.nodes[*it].vjp_end; s++) order.push_back(s);
  return order;
}

void ProgramTape::build(const Program& p, VjpFn vjp, int64_t element_bytes) {
  const std::vector<int32_t> order = recorded_node_order(p);
  std::unordered_map<std::string, int32_t> buffer_named;
  for (int32_t b = 0; b < p.num_buffers; b++)
    if (p.buffers[b].name) buffer_named.emplace(p.buffers[b].name, b);
  begin_.assign(size_t(p.forward_end) + 1, 0);
  nodes_.clear();
  by_id_.clear();
  // Filled completely before any TapeNode takes a view of them.
  saved_.assign(order.size(), {});
  state_.assign(order.size(), {});
  vjp_ran_.assign(order.size(), {});
  auto described = [&](const char* name) {
    SavedBuffer s{name};
    auto it = buffer_named.find(name);
    if (it != buffer_named.end()) {
      const BufferDesc& d = p.buffers[it->second];
      s.shape = d.shape;
      s.dtype = dtype_name(d.dtype, element_bytes);
      s.bytes = d.numel * rt::element_bytes(d.dtype, element_bytes);
    }
    return s;
  };
  program_ = &p;
  order_ = order;
  vjp_notes_.clear();
  vjp_step_nodes_.clear();
  for (size_t k = 0; k < order.size(); k++) {
    const NodeDesc& n = p.nodes[order[k]];
    for (int32_t v = n.vjp_begin; v < n.vjp_end; v++) vjp_step_nodes_[v].push_back(k);
    for (int32_t j = 0; j < n.num_saved; j++) saved_[k].push_back(described(n.saved[j]));
    for (int32_t j = 0; j < n.num_state; j++) state_[k].push_back(described(n.state[j]));
    describe_vjp(k);
  }
  for (size_t k = 0; k < order.size(); k++) {
    const NodeDesc& n = p.nodes[order[k]];
    TapeNode t;
    t.op = n.op;
    t.capsule = n.capsule;
    t.node_id = n.id;
    t.saved = saved_[k];
    t.state = state_[k];
    t.vjp = n.vjp_begin < n.vjp_end ? vjp : nullptr;
    t.kernel = n.kernel ? n.kernel : "";
    t.vjp_ran = &vjp_ran_[k];
    nodes_.push_back(std::move(t));
    begin_[size_t(n.after_step) + 1]++;
    by_id_[n.id] = &n;
  }
  for (size_t s = 1; s < begin_.size(); s++) begin_[s] += begin_[s - 1];
}

void ProgramTape::describe_vjp(size_t k) {
  const NodeDesc& n = program_->nodes[order_[k]];
  std::string& text = vjp_ran_[k];
  text.clear();
  for (int32_t v = n.vjp_begin; v < n.vjp_end; v++) {
    const StepDesc& st = program_->steps[v];
    auto note = vjp_notes_.find(v);
    text += std::string(text.empty() ? "" : ", ") +
            (note != vjp_notes_.end() ? note->second : std::string(st.what ? st.what : "?")) +
            " [" + (st.capsule ? st.capsule : "unassigned") + "]";
  }
}

void ProgramTape::note_ran(int32_t step, const std::string& ran) {
  if (program_ == nullptr || step < 0) return;
  if (size_t(step) + 1 >= begin_.size()) {  // a VJP step (or none): its nodes' texts
    auto nodes = vjp_step_nodes_.find(step);
    if (nodes == vjp_step_nodes_.end()) return;
    std::string& note = vjp_notes_[step];
    if (note == ran) return;
    note = ran;
    for (size_t k : nodes->second) describe_vjp(k);
    return;
  }
  for (int32_t i = begin_[size_t(step)]; i < begin_[size_t(step) + 1]; i++) {
    if (ran == nodes_[size_t(i)].kernel) continue;
    notes_.push_back(std::make_unique<std::string>(ran));
    nodes_[size_t(i)].kernel = notes_.back()->c_str();
  }
}

// ---- CpuProgramModel ---------------------------------------------------------------

template <class T>
CpuProgramModel<T>::CpuProgramModel(const Program& program, const CpuKernelFn* kernels)
    : program_(program), kernels_(kernels) {
  status_ = init();
}

uint64_t cpu_storage_layout(const Program& p, int64_t real_bytes, std::vector<int64_t>* offsets) {
  // Owners one after another, each starting on a 64-byte boundary.
  const uint64_t align = uint64_t(std::max<int64_t>(1, 64 / real_bytes));
  if (offsets) offsets->assign(size_t(p.num_buffers), -1);
  uint64_t total = 0;
  for (int32_t b = 0; b < p.num_buffers; b++) {
    if (p.buffers[b].alias_of != -1) continue;
    if (offsets) (*offsets)[size_t(b)] = int64_t(total);
    const uint64_t numel = uint64_t(std::max<int64_t>(p.buffers[b].numel, 1));
    total = add_bytes(total, mul_bytes((numel + align - 1) / align, align));
  }
  return total;
}

uint64_t param_elements(const Program& p) {
  uint64_t n = 0;
  for (int32_t i = 0; i < p.num_params; i++)
    if (p.params[i] >= 0 && p.params[i] < p.num_buffers)
      n = add_bytes(n, uint64_t(std::max<int64_t>(p.buffers[p.params[i]].numel, 0)));
  return n;
}

template <class T>
Status CpuProgramModel<T>::init() {
  const Program& p = program_;
  Status valid = check_program(p);
  if (!valid.ok()) return valid;
  // Bf16 buffers are the rounded operands of a cuda build's bf16 products; the cpu
  // kernels and products read T (or int32) only.
  for (int32_t b = 0; b < p.num_buffers; b++)
    if (p.buffers[b].dtype == DType::Bf16)
      return Status::Error("program `" + std::string(p.name ? p.name : "?") + "`: buffer " +
                           std::to_string(b) + " (" + p.buffers[b].name +
                           ") is bf16: bf16 buffers are for the products of a cuda build with "
                           "--precision bf16, which the cpu executor does not run");
  for (int32_t s = 0; s < p.num_steps; s++) {
    if (p.steps[s].kind != StepKind::Kernel) continue;
    if (!kernels_ || !kernels_[p.steps[s].kernel])
      return Status::Error("program `" + std::string(p.name ? p.name : "?") + "`: step " +
                           std::to_string(s) + ": cpu kernel " +
                           std::to_string(p.steps[s].kernel) + " (" +
                           p.kernel_names[p.steps[s].kernel] + ") is missing from the table");
  }

  std::vector<int64_t> offset;
  const uint64_t total = cpu_storage_layout(p, int64_t(sizeof(T)), &offset);
  storage_.assign(size_t(total), T(0));
  pointers_.resize(size_t(p.num_buffers));
  for (int32_t b = 0; b < p.num_buffers; b++)
    pointers_[size_t(b)] = storage_.data() + offset[size_t(storage_owner(p, b))];

  args_.resize(size_t(p.num_args));
  for (int32_t a = 0; a < p.num_args; a++) {
    const ArgDesc& d = p.args[a];
    ArgValue& v = args_[size_t(a)];
    switch (d.kind) {
      case ArgDesc::Buffer: v.ptr = pointers_[size_t(d.value)]; break;
      case ArgDesc::Int: v.i = d.value; break;
      case ArgDesc::Real: v.real = d.real; break;
      case ArgDesc::Dims: v.dims = DimsRef{d.count, p.ints + d.value, p.ints + d.value + d.count}; break;
      case ArgDesc::Context: v.ptr = rng_context_; break;
    }
  }

  tape_.build(p, &CpuProgramModel::vjp, int64_t(sizeof(T)));
  return Status::Ok();
}

template <class T>
T* CpuProgramModel<T>::buffer(int32_t b) const {
  if (!status_.ok() || b < 0 || b >= program_.num_buffers) return nullptr;
  return pointers_[size_t(b)];
}

template <class T>
T* CpuProgramModel<T>::param(int i) {
  return i >= 0 && i < program_.num_params ? buffer(program_.params[i]) : nullptr;
}

template <class T>
T* CpuProgramModel<T>::grad(int i) {
  return i >= 0 && i < program_.num_params ? buffer(program_.grads[i]) : nullptr;
}

template <class T>
T* CpuProgramModel<T>::state(int i) {
  return i >= 0 && i < program_.num_states ? buffer(program_.states[i]) : nullptr;
}

template <class T>
const T* CpuProgramModel<T>::prediction() const {
  const T* out = buffer(program_.output);
  if (program_.output_pitch == 0) return out;
  // The rows without their padding (the buffer holds them until the next forward).
  const int64_t pitch = program_.output_pitch, columns = program_.output_columns;
  unpadded_prediction_.resize(size_t(prediction_elements(program_)));
  for (int64_t r = 0; r < int64_t(unpadded_prediction_.size()) / columns; r++)
    std::memcpy(unpadded_prediction_.data() + r * columns, out + r * pitch,
                size_t(columns) * sizeof(T));
  return unpadded_prediction_.data();
}

template <class T>
void CpuProgramModel<T>::run_steps(int32_t begin, int32_t end, Tape* tape) {
  for (int32_t s = begin; s < end; s++) {
    const StepDesc& st = program_.steps[s];
    switch (st.kind) {
      case StepKind::Kernel:
        kernels_[st.kernel](args_.data() + st.first_arg);
        break;
      case StepKind::Gemm:
        matmul<T>(st.trans_a, st.trans_b, st.batch, st.m, st.n, st.k, pointers_[size_t(st.a)],
                  st.stride_a, pointers_[size_t(st.b)], st.stride_b, pointers_[size_t(st.c)]);
        break;
      case StepKind::Linear:
        linear<T>(st.m, st.k, st.n, pointers_[size_t(st.a)], pointers_[size_t(st.b)],
                  st.bias == -1 ? nullptr : pointers_[size_t(st.bias)], pointers_[size_t(st.c)]);
        break;
      case StepKind::LinearWeightGrad:
        linear_weight_grad<T>(st.k, st.n, st.m, pointers_[size_t(st.a)], pointers_[size_t(st.b)],
                              pointers_[size_t(st.c)], pointers_[size_t(st.bias)]);
        break;
    }
    tape_.record_after(s, tape);
  }
}

template <class T>
T CpuProgramModel<T>::forward(const T* x, const T* y, Tape* tape) {
  Status fits = two_real_fields(program_);
  if (!fits.ok()) {
    if (status_.ok()) status_ = fits;
    return std::numeric_limits<T>::quiet_NaN();
  }
  const void* fields[] = {x, y};
  return forward_fields(fields, tape);
}

template <class T>
T CpuProgramModel<T>::forward_fields(const void* const* fields, Tape* tape) {
  if (!status_.ok()) return std::numeric_limits<T>::quiet_NaN();
  const Program& p = program_;
  for (int32_t f = 0; f < p.num_fields; f++) {
    const BufferDesc& d = p.buffers[p.fields[f]];
    void* to = pointers_[size_t(p.fields[f])];
    if (fields[f] != to)
      std::memcpy(to, fields[f], size_t(d.numel * element_bytes(d.dtype, sizeof(T))));
  }
  // A forward that records the tape is a training step: dropout draws its mask.
  rng_context_[vouch::kRngTraining] = tape != nullptr ? 1 : 0;
  run_steps(0, p.forward_end, tape);
  return pointers_[size_t(p.loss)][0];
}

template <class T>
void CpuProgramModel<T>::backward(Tape& tape) {
  if (!status_.ok()) return;
  run_steps(program_.prologue_begin, program_.prologue_end, nullptr);
  tape.backward(this);
  // The training step is over (the VJPs drew the forward's masks again): the next
  // one draws new ones, as the cuda optimizer's advance of the device counter does.
  rng_context_[vouch::kRngStep]++;
}

template <class T>
void CpuProgramModel<T>::vjp(void* self, int node_id) {
  auto* model = static_cast<CpuProgramModel*>(self);
  const NodeDesc* n = model->tape_.node(node_id);
  if (n == nullptr) return;  // not a node of this program
  model->run_steps(n->vjp_begin, n->vjp_end, nullptr);
}

template class CpuProgramModel<float>;
template class CpuProgramModel<double>;

Backend cpu_program_backend(const Program& program, const CpuKernelFn* f32,
                            const CpuKernelFn* f64, std::string header,
                            std::map<std::string, std::string> capsule_reports) {
  Backend b;
  b.device = Device::Cpu;
  const Program* p = &program;
  if (f32)
    b.make_f32 = [p, f32]() -> std::unique_ptr<CompiledModel<float>> {
      return std::make_unique<CpuProgramModel<float>>(*p, f32);
    };
  if (f64)
    b.make_f64 = [p, f64]() -> std::unique_ptr<CompiledModel<double>> {
      return std::make_unique<CpuProgramModel<double>>(*p, f64);
    };
  b.memory_need = [p](int64_t real_bytes) {
    return cpu_run_memory(mul_bytes(cpu_storage_layout(*p, real_bytes, nullptr),
                                    uint64_t(real_bytes)),
                          param_elements(*p), real_bytes);
  };
  b.header = std::move(header);
  if (program.schedule && *program.schedule) b.header += "\n" + std::string(program.schedule);
  b.capsule_reports = std::move(capsule_reports);
  return b;
}

}  // namespace vouch::rt
