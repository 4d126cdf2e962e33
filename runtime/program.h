// program.h: a compiled model as tables, the whole interface between generated code
// and the runtime's executors.
//
// Codegen emits, per model and per backend, one Program: the buffers the model
// computes with, the steps of its forward pass, of each tape node's VJP and of the
// prologue (native kernel calls and GEMMs), and the tape nodes the forward steps
// complete. The executors own everything else: allocation, execution, the tape, the
// optimizer, CUDA graph capture (runtime/executor.h for cpu, runtime/cuda/executor.h
// for cuda). Tables grow linearly with the model, and a kernel used by many steps
// appears once in the kernel table (IREE's split: the compiler emits data and small
// dispatches, the runtime runs them).
//
// Plain aggregates only, so generated code can write them as constant initialisers.
#ifndef VOUCH_RUNTIME_PROGRAM_H_
#define VOUCH_RUNTIME_PROGRAM_H_

#include <cstdint>

namespace vouch::rt {

// The most axes a Dims argument carries (the capsules' rank limit).
inline constexpr int kMaxDims = 8;

// The element type of a buffer: the run's real type T (f32 or f64, chosen when the
// executable runs), or 32-bit integers (labels, ids), which stay int32 in every run.
// i1 values (masks) are I32 buffers holding 0 (false) or 1 (true): one integer storage
// class keeps the executors, the tape and the loaders as they are (a mask is small next
// to the reals it selects), kernels read a mask as `const int32_t*` / `const int*`, and
// the loader refuses any other value in an i1 field (FieldInfo's min/max 0..1).
// Bf16: bf16 bits (uint16: the upper half of the f32 the value was rounded from, nearest
// even), 2 bytes an element: an f32 value rounded once by its producer so that the
// products reading it (Gemm, Linear, LinearWeightGrad operands) take it as it lies
// instead of rounding it again at every product. Legal only in an f32 cuda Program whose
// products are bf16 (--precision bf16); never a data field, param, gradient, state,
// the loss or the output (check_program), and the cpu executor refuses it.
enum class DType : uint8_t { Real = 0, I32 = 1, Bf16 = 2 };

// The storage of one value. A view (reshape) shares the storage of the buffer it
// aliases; so does a value that codegen's storage plan put in a slot (a buffer
// `storage<k>` no step names, codegen/StoragePlan.h), shared with other values whose
// lifetimes within a step are disjoint from its own; every other value, param, input
// and target owns its own. The executors
// give every buffer numel * sizeof(T) bytes whatever its dtype (an I32 buffer uses the
// first 4 * numel of them), so aliasing and allocation stay dtype-blind, with two
// exceptions for Bf16 (2 bytes an element, f32 runs only): a Bf16 buffer may alias Real
// or I32 storage of half its element count, rounded up (check_program compares bytes),
// and storage owned by a Bf16 buffer is sized by what its occupants take (cuda's
// storage_bytes).
struct BufferDesc {
  int64_t numel;     // elements (a rank-0 value has 1)
  int32_t alias_of;  // -1: owns storage; else the buffer whose storage it shares (a
                     // view's source or a storage slot)
  const char* name;  // the model's name for it ("w1", "x") or "v<N>"
  const char* shape;  // "[8, 2]" ("[]" for rank 0); may be null (then not shown)
  DType dtype;        // Real unless an integer input, target or value (I32), or a
                      // value rounded to bf16 for bf16 products (Bf16)
  // Starts at zero on every executor (cuda poisons the others): a kernel's scratch
  // that must (an arrival counter, which the kernel leaves at zero again).
  bool zero_init = false;
};

// Bytes of one element of a buffer of dtype `d` in a run whose real type has
// `real_bytes` bytes.
inline int64_t element_bytes(DType d, int64_t real_bytes) {
  switch (d) {
    case DType::I32: return 4;
    case DType::Bf16: return 2;
    case DType::Real: break;
  }
  return real_bytes;
}

// The dtype's name as the tape and messages print it: "f32" / "f64" (Real, by
// `real_bytes`), "i32", "bf16".
inline const char* dtype_name(DType d, int64_t real_bytes) {
  switch (d) {
    case DType::I32: return "i32";
    case DType::Bf16: return "bf16";
    case DType::Real: break;
  }
  return real_bytes == 8 ? "f64" : "f32";
}

// One argument of a kernel step, in the kernel's parameter order.
//  Buffer: the element pointer of buffer `value` (T*; T = the run's element type);
//          `count` 1 when the step writes it, 0 when it only reads it (the cuda
//          executor orders launches by these; every kernel step marks at least one,
//          as check_program requires).
//  Int:    the integer `value` (passed as int64 / long long).
//  Real:   the double `real` (passed as double).
//  Dims:   `count` axes read from Program::ints at offset `value`: count extents, then
//          count strides. cuda passes it by value as `struct Dims { int rank; long long
//          extent[8]; long long stride[8]; }` (runtime/cuda/kernels/common.cuh); cpu
//          kernels receive a DimsRef (below).
//  Context: the executor's random-op step context (runtime/cuda/kernels/
//          counter_rng.h's RngContextSlot: step, training flag, run seed), passed as
//          `const long long*` (cuda: device memory the optimizer advances, so a
//          captured graph reads each step's value; cpu: the executor's host words).
//          value and count unused; the cuda executor orders it after the step counter.
struct ArgDesc {
  enum Kind : uint8_t { Buffer, Int, Real, Dims, Context };
  Kind kind;
  int64_t value;
  int32_t count;
  double real;
};

enum class StepKind : uint8_t {
  Kernel,  // one kernel of the kernel table with its arguments
  Gemm,    // C[b] = op(A[b])·op(B[b]), row-major, transpose flags, no transposed copy
  Linear,  // y = x·Wᵀ + b (W stored [n, k], bias optional), rows = m
  LinearWeightGrad,  // a linear's dW = dyᵀ·x and db = Σ_rows dy in one call
};

struct StepDesc {
  StepKind kind;
  // Kernel: the kernel table entry and its arguments Program::args[first_arg, +num_args).
  int32_t kernel;
  int32_t first_arg, num_args;
  // Kernel on cuda: the launch shape (cpu ignores it).
  uint32_t grid_x, block_x, block_y;
  // Gemm: C[b] (m x n) = op(A[b]) (m x k) · op(B[b]) (k x n); A[b] at a + b*stride_a.
  // Linear: y (m x n) = x (m x k) · W (n x k)ᵀ + bias (n; -1: none); a = x, b = W.
  // LinearWeightGrad: c = dW (m x n) = dyᵀ · x, bias = db (m, written) = Σ_rows dy, with
  // a = dy (k x m), b = x (k x n): a Gemm with trans_a (set) whose bias is an output.
  bool trans_a, trans_b;
  int64_t batch, m, n, k, stride_a, stride_b;
  int32_t a, b, c, bias;
  // What runs, as the tape and --show-backend name it: the kernel symbol, or the
  // library call (e.g. "cublasGemmEx(transa=T, transb=N)").
  const char* what;
  // The capsule it runs under (the plan's); may be null (then "unassigned").
  const char* capsule;
  // Kernel on cuda: the dynamic shared memory the launch asks for (bytes; 0: none). A
  // kernel given it takes a faster path; the executor gives 0 where the device cannot
  // (the kernel checks, and takes its other path).
  uint32_t shared_bytes;
  // Kernel on cuda: nonzero: a persistent grid, at most this many blocks per SM
  // (grid = min(grid_x, blocks_per_sm × the device's SMs)); 0: grid_x.
  uint32_t blocks_per_sm;
  // Kernel on cuda: the dynamic shared memory of an f64 run where it differs from
  // shared_bytes (kernels whose tiles hold elements: flash attention); 0: shared_bytes.
  uint32_t shared_bytes_f64;
};

// One forward node: what the tape records once forward step `after_step` has run.
struct NodeDesc {
  int32_t id;
  const char* op;       // the dialect op, e.g. "linear"
  const char* capsule;  // the planned capsule it ran under
  const char* kernel;   // the kernel symbol or library call that computed it
  int32_t after_step;   // index into Program::steps (a forward step)
  int32_t vjp_begin, vjp_end;  // its VJP steps; vjp_begin == vjp_end: no VJP
  const char* const* saved;    // names of the buffers its VJP reads
  int32_t num_saved;
  // Names of the state buffers (Program::states) it reads and, in a training step,
  // updates in place (batch_norm's running statistics); null and 0 for other nodes.
  const char* const* state;
  int32_t num_state;
};

struct Program {
  const char* name;
  const BufferDesc* buffers;
  int32_t num_buffers;
  const int32_t* params;  // buffer of param i (declaration order)
  const int32_t* grads;   // buffer of param i's gradient
  int32_t num_params;
  int32_t loss, output;  // buffers
  const StepDesc* steps;
  int32_t num_steps;
  int32_t forward_end;                   // steps [0, forward_end): the forward pass
  int32_t prologue_begin, prologue_end;  // constant gradients, run before the VJPs
  const ArgDesc* args;
  const int64_t* ints;
  const NodeDesc* nodes;  // in forward order
  int32_t num_nodes;
  const char* const* kernel_names;  // cuda: entry points without _f32/_f64; cpu: labels
  int32_t num_kernels;
  const char* schedule;  // --show-backend: every step in launch order, human-readable
  // Lengths of `args` and `ints` (appended after the first draft, so positional
  // initialisers of the fields above keep their meaning). Required: the executors
  // check every step's argument range and every Dims against them.
  int32_t num_args;
  int32_t num_ints;
  // The capsules of the step's own work besides the steps above (the plan's; may be
  // null): batch selection and the optimizer.
  const char* batch_capsule;
  const char* optimizer_capsule;
  // The data fields each batch fills: the inputs, then the targets, in declaration
  // order (ModelDescription::fields); their buffers hold [batch, ...] rows.
  const int32_t* fields;
  int32_t num_fields;
  // The capsule of gradient clipping (the plan's; null when the model does not clip).
  const char* clip_capsule;
  // The model's state (batch_norm's running statistics), in ModelDescription::states
  // order: buffers that persist from step to step, initialised and checkpointed by the
  // driver like params but never trained (no gradient, no optimizer). A step that
  // updates one reads and writes it (a Buffer argument marked written); each owns its
  // storage, which codegen's storage plan never shares. (Appended last: programs
  // without state leave these null and 0.)
  const int32_t* states;
  int32_t num_states;
  // The output where it is the first `output_columns` elements of each
  // `output_pitch`-element row of its buffer (the model's output op's `columns`:
  // logits whose classes vouch-pad-classes padded); 0 and 0: the whole buffer. The
  // executors' prediction() holds the rows without their padding. (Appended last.)
  int64_t output_pitch;
  int64_t output_columns;
};

// The prediction's elements: the output buffer's, less its rows' padding.
inline int64_t prediction_elements(const Program& p) {
  const int64_t numel = p.buffers[p.output].numel;
  return p.output_pitch > 0 ? numel / p.output_pitch * p.output_columns : numel;
}

// cpu: a resolved kernel argument, and the signature of a cpu kernel table entry.
struct DimsRef {
  int32_t rank;
  const int64_t* extent;
  const int64_t* stride;
};
union ArgValue {
  void* ptr;
  int64_t i;
  double real;
  DimsRef dims;
};
using CpuKernelFn = void (*)(const ArgValue* args);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_PROGRAM_H_
