// test_program.h (tests only): a hand-written Program, the MLP
//   h_pre = linear(x, W1, b1); h = relu(h_pre); pred = linear(h, W2, b2);
//   loss = mse_loss(view(pred), y)
// with batch B, in I, hidden H, out O, plus a parameter `unused` off the gradient path
// whose gradient the prologue fills with zeros. It is written the way codegen writes
// Programs (buffers, steps, args, ints, nodes) and exercises every table feature:
// Linear and Gemm steps (trans_a, no transposed copy), kernels with Buffer (written:
// count 1; read-only: count 0) / Int / Real / Dims arguments, an alias (pred_flat views
// pred) and an alias of an alias (pred_row views pred_flat), a prologue step, a tape
// node without VJP (the view), two nodes recorded after the same step, sparse node ids.
//
// The cpu kernels below are the test's own (relu, step, mul, sub, scale, fill,
// reduce_sum; mse_loss calls runtime/cpu_kernels.h's);
// runtime/cuda/testdata/executor_test_kernels.cu has the same kernels as CUDA under the
// names of Program::kernel_names plus _f32 / _f64.
#ifndef VOUCH_RUNTIME_TEST_PROGRAM_H_
#define VOUCH_RUNTIME_TEST_PROGRAM_H_

#include <cstdint>
#include <vector>

#include "runtime/cpu_kernels.h"
#include "runtime/model_api.h"
#include "runtime/program.h"

namespace vouch::rt::test_program {

// Buffer indices of the MLP program.
enum MlpBuffer : int32_t {
  kW1, kB1, kW2, kB2, kUnused,            // params
  kX, kY,                                 // input, target
  kHPre, kH, kPred, kPredFlat, kLoss,     // forward (kPredFlat views kPred)
  kDiff, kDPred, kDW2, kDB2, kDH, kMask, kDHPre, kDW1, kDB1, kDUnused,  // backward
  kPredRow,                               // views kPredFlat (an alias of an alias)
  kNumMlpBuffers
};
// Kernel indices (Program::kernel_names).
enum MlpKernel : int32_t {
  kRelu, kStep, kMul, kSub, kScale, kFill, kMseLoss, kReduceSum, kNumMlpKernels
};
inline constexpr int64_t kUnusedNumel = 3;

// ---- the cpu kernels: args in the order the steps pass them -------------------------

template <class T> T* out_of(const ArgValue* a, int i) { return static_cast<T*>(a[i].ptr); }
template <class T> const T* in_of(const ArgValue* a, int i) {
  return static_cast<const T*>(a[i].ptr);
}

// relu(out, in, n): in > 0 ? in : 0.
template <class T> void cpu_relu(const ArgValue* a) {
  for (int64_t i = 0; i < a[2].i; i++) {
    T v = in_of<T>(a, 1)[i];
    out_of<T>(a, 0)[i] = v > T(0) ? v : T(0);
  }
}
// step(out, in, n): in > 0 ? 1 : 0 (relu's derivative, 0 at 0).
template <class T> void cpu_step(const ArgValue* a) {
  for (int64_t i = 0; i < a[2].i; i++) out_of<T>(a, 0)[i] = in_of<T>(a, 1)[i] > T(0) ? T(1) : T(0);
}
// mul(out, a, b, n), sub(out, a, b, n).
template <class T> void cpu_mul(const ArgValue* a) {
  for (int64_t i = 0; i < a[3].i; i++) out_of<T>(a, 0)[i] = in_of<T>(a, 1)[i] * in_of<T>(a, 2)[i];
}
template <class T> void cpu_sub(const ArgValue* a) {
  for (int64_t i = 0; i < a[3].i; i++) out_of<T>(a, 0)[i] = in_of<T>(a, 1)[i] - in_of<T>(a, 2)[i];
}
// scale(out, in, real s, n): in * T(s).
template <class T> void cpu_scale(const ArgValue* a) {
  for (int64_t i = 0; i < a[3].i; i++) out_of<T>(a, 0)[i] = in_of<T>(a, 1)[i] * T(a[2].real);
}
// fill(out, real v, n).
template <class T> void cpu_fill(const ArgValue* a) {
  for (int64_t i = 0; i < a[2].i; i++) out_of<T>(a, 0)[i] = T(a[1].real);
}
// mse_loss(out, pred, target, n): rt::mse_loss (runtime/cpu_kernels.h), a left fold of
// squared differences divided by n.
template <class T> void cpu_mse_loss(const ArgValue* a) {
  out_of<T>(a, 0)[0] = rt::mse_loss<T>(a[3].i, in_of<T>(a, 1), in_of<T>(a, 2));
}
// The input offset of flat position `flat` walking `d` row-major.
inline int64_t dims_offset(const DimsRef& d, int64_t flat) {
  int64_t offset = 0;
  for (int32_t axis = d.rank; axis-- > 0;) {
    offset += (flat % d.extent[axis]) * d.stride[axis];
    flat /= d.extent[axis];
  }
  return offset;
}
inline int64_t dims_numel(const DimsRef& d) {
  int64_t n = 1;
  for (int32_t axis = 0; axis < d.rank; axis++) n *= d.extent[axis];
  return n;
}
// reduce_sum(out, in, Dims kept, Dims reduced): out[o] = left fold over the reduced
// walk of in[kept offset of o + reduced offset].
template <class T> void cpu_reduce_sum(const ArgValue* a) {
  const DimsRef& kept = a[2].dims;
  const DimsRef& reduced = a[3].dims;
  for (int64_t o = 0; o < dims_numel(kept); o++) {
    int64_t base = dims_offset(kept, o);
    T acc = T(0);
    for (int64_t r = 0; r < dims_numel(reduced); r++) acc += in_of<T>(a, 1)[base + dims_offset(reduced, r)];
    out_of<T>(a, 0)[o] = acc;
  }
}

template <class T>
inline const CpuKernelFn kMlpCpuKernels[kNumMlpKernels] = {
    &cpu_relu<T>, &cpu_step<T>, &cpu_mul<T>, &cpu_sub<T>,
    &cpu_scale<T>, &cpu_fill<T>, &cpu_mse_loss<T>, &cpu_reduce_sum<T>};

inline const char* const kMlpKernelNames[kNumMlpKernels] = {
    "mlp_relu", "mlp_step", "mlp_mul", "mlp_sub",
    "mlp_scale", "mlp_fill", "mlp_mse_loss", "mlp_reduce_sum"};

// Node ids (sparse on purpose) and the steps of the program.
inline constexpr int32_t kLinear1Node = 3, kReluNode = 5, kLinear2Node = 8, kViewNode = 9,
                         kMseNode = 13;
inline constexpr int32_t kForwardEnd = 4, kPrologueStep = 4;

inline const char* const kSavedLinear1[] = {"x"};
inline const char* const kSavedRelu[] = {"h_pre"};
inline const char* const kSavedLinear2[] = {"h", "W2"};
inline const char* const kSavedMse[] = {"pred", "y"};

// Library steps of one batch entry, as codegen's ProgramBuilder makes them.
// y (m x n) = x (m x k) · W (n x k)ᵀ + bias (n; -1: none).
inline StepDesc linear_step(int32_t x, int32_t w, int32_t bias, int32_t y, int64_t m,
                            int64_t k, int64_t n) {
  StepDesc s{};
  s.kind = StepKind::Linear;
  s.batch = 1;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a = x;
  s.b = w;
  s.bias = bias;
  s.c = y;
  s.what = "cublasLtMatmul(test linear)";
  return s;
}
// dW (m x n) = dyᵀ·x and db (m) = Σ_rows dy, dy [k, m], x [k, n].
inline StepDesc weight_grad_step(int32_t dy, int32_t x, int32_t dw, int32_t db, int64_t m,
                                 int64_t n, int64_t k) {
  StepDesc s = linear_step(dy, x, db, dw, m, k, n);
  s.kind = StepKind::LinearWeightGrad;
  s.trans_a = true;
  s.what = "cublasLtMatmul(test weight grad)";
  return s;
}
// C (m x n) = op(A) (m x k) · op(B) (k x n).
inline StepDesc gemm_step(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int32_t a,
                          int32_t b, int32_t c) {
  StepDesc s = linear_step(a, b, -1, c, m, k, n);
  s.kind = StepKind::Gemm;
  s.trans_a = ta;
  s.trans_b = tb;
  s.stride_a = m * k;
  s.stride_b = k * n;
  s.what = "cublasGemmEx(test gemm)";
  return s;
}

// The tables and the Program pointing into them (not copyable: program points here).
struct MlpProgram {
  int64_t B, I, H, O;
  std::vector<BufferDesc> buffers;
  std::vector<int32_t> params, grads;
  static constexpr int32_t kFields[] = {kX, kY};
  std::vector<StepDesc> steps;
  std::vector<ArgDesc> args;
  std::vector<int64_t> ints;
  std::vector<NodeDesc> nodes;
  Program program{};

  // `weight_grad_step`: linear1's dW1 and db1 as one LinearWeightGrad step (step 12, the
  // program 13 steps) instead of a Gemm and a reduce_sum kernel.
  MlpProgram(int64_t b, int64_t i, int64_t h, int64_t o, bool weight_grad_step = false)
      : B(b), I(i), H(h), O(o), fused_weight_grad(weight_grad_step) {
    build();
  }
  const bool fused_weight_grad;
  MlpProgram(const MlpProgram&) = delete;
  MlpProgram& operator=(const MlpProgram&) = delete;

 private:
  // A buffer the step only reads (count 0), and the one it writes (count 1).
  static ArgDesc buf(int32_t b) { return {ArgDesc::Buffer, b, 0, 0.0}; }
  static ArgDesc out(int32_t b) { return {ArgDesc::Buffer, b, 1, 0.0}; }
  static ArgDesc num(int64_t v) { return {ArgDesc::Int, v, 0, 0.0}; }
  static ArgDesc real(double v) { return {ArgDesc::Real, 0, 0, v}; }
  // A rank-1 Dims: extent e, stride s, appended to ints.
  ArgDesc dims1(int64_t e, int64_t s) {
    ArgDesc d{ArgDesc::Dims, int64_t(ints.size()), 1, 0.0};
    ints.push_back(e);
    ints.push_back(s);
    return d;
  }
  // A kernel step; what runs is the kernel's name (kMlpKernelNames).
  void kernel(MlpKernel k, std::vector<ArgDesc> a, uint32_t grid, uint32_t block_x,
              uint32_t block_y) {
    StepDesc s{};
    s.kind = StepKind::Kernel;
    s.kernel = k;
    s.first_arg = int32_t(args.size());
    s.num_args = int32_t(a.size());
    s.grid_x = grid;
    s.block_x = block_x;
    s.block_y = block_y;
    s.bias = -1;
    s.what = kMlpKernelNames[k];
    args.insert(args.end(), a.begin(), a.end());
    steps.push_back(s);
  }
  void linear(int32_t x, int32_t w, int32_t bias, int32_t y, int64_t m, int64_t k, int64_t n) {
    steps.push_back(linear_step(x, w, bias, y, m, k, n));
  }
  void weight_grad(int32_t dy, int32_t x, int32_t dw, int32_t db, int64_t m, int64_t n,
                   int64_t k) {
    steps.push_back(weight_grad_step(dy, x, dw, db, m, n, k));
  }
  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int32_t a, int32_t b, int32_t c) {
    steps.push_back(gemm_step(ta, tb, m, n, k, a, b, c));
  }

  void build() {
    buffers = {
        {H * I, -1, "W1"},       {H, -1, "b1"},         {O * H, -1, "W2"},
        {O, -1, "b2"},           {kUnusedNumel, -1, "unused"},
        {B * I, -1, "x"},        {B * O, -1, "y"},
        {B * H, -1, "h_pre"},    {B * H, -1, "h"},      {B * O, -1, "pred"},
        {B * O, kPred, "pred_flat"}, {1, -1, "loss"},
        {B * O, -1, "diff"},     {B * O, -1, "dpred"},  {O * H, -1, "dW2"},
        {O, -1, "db2"},          {B * H, -1, "dh"},     {B * H, -1, "mask"},
        {B * H, -1, "dh_pre"},   {H * I, -1, "dW1"},    {H, -1, "db1"},
        {kUnusedNumel, -1, "d_unused"},
        {B * O, kPredFlat, "pred_row"},
    };
    params = {kW1, kB1, kW2, kB2, kUnused};
    grads = {kDW1, kDB1, kDW2, kDB2, kDUnused};
    const int64_t bh = B * H, bo = B * O;
    auto grid = [](int64_t n) { return uint32_t((n + 255) / 256); };
    // forward [0, 4)
    linear(kX, kW1, kB1, kHPre, B, I, H);                                           // 0
    kernel(kRelu, {out(kH), buf(kHPre), num(bh)}, grid(bh), 256, 1);                // 1
    linear(kH, kW2, kB2, kPred, B, H, O);                                           // 2
    kernel(kMseLoss, {out(kLoss), buf(kPredFlat), buf(kY), num(bo)}, 1, 1, 1);      // 3
    // prologue [4, 5)
    kernel(kFill, {out(kDUnused), real(0.0), num(kUnusedNumel)}, 1, 256, 1);        // 4
    // mse VJP [5, 7): dpred = (pred - y) * (2 / n)
    kernel(kSub, {out(kDiff), buf(kPredRow), buf(kY), num(bo)}, grid(bo), 256, 1);  // 5
    kernel(kScale, {out(kDPred), buf(kDiff), real(2.0 / double(bo)), num(bo)}, grid(bo), 256,
           1);                                                                      // 6
    // linear2 VJP [7, 10): dW2 = dpredᵀ h, db2 = sum_rows dpred, dh = dpred W2
    gemm(true, false, O, H, B, kDPred, kH, kDW2);                                   // 7
    kernel(kReduceSum, {out(kDB2), buf(kDPred), dims1(O, 1), dims1(B, O)}, 1, 32, 4);  // 8
    gemm(false, false, B, H, O, kDPred, kW2, kDH);                                  // 9
    // relu VJP [10, 12): dh_pre = dh * step(h_pre)
    kernel(kStep, {out(kMask), buf(kHPre), num(bh)}, grid(bh), 256, 1);             // 10
    kernel(kMul, {out(kDHPre), buf(kDH), buf(kMask), num(bh)}, grid(bh), 256, 1);   // 11
    // linear1 VJP [12, 14): dW1 = dh_preᵀ x, db1 = sum_rows dh_pre (no dx: x is input);
    // [12, 13) as one step
    if (fused_weight_grad) {
      weight_grad(kDHPre, kX, kDW1, kDB1, H, I, B);                                 // 12
    } else {
      gemm(true, false, H, I, B, kDHPre, kX, kDW1);                                 // 12
      kernel(kReduceSum, {out(kDB1), buf(kDHPre), dims1(H, 1), dims1(B, H)}, 1, 32, 4);  // 13
    }
    const int32_t linear1_vjp_end = int32_t(steps.size());

    nodes = {
        {kLinear1Node, "linear", "test.linear", "linear(x, W1, b1)", 0, 12, linear1_vjp_end,
         kSavedLinear1, 1},
        {kReluNode, "relu", "test.relu", "mlp_relu", 1, 10, 12, kSavedRelu, 1},
        {kLinear2Node, "linear", "test.linear", "linear(h, W2, b2)", 2, 7, 10, kSavedLinear2, 2},
        {kViewNode, "reshape", "test.view", "view", 2, 0, 0, nullptr, 0},
        {kMseNode, "mse_loss", "test.mse_loss", "mlp_mse_loss", 3, 5, 7, kSavedMse, 2},
    };

    program.name = "test_mlp";
    program.buffers = buffers.data();
    program.num_buffers = int32_t(buffers.size());
    program.params = params.data();
    program.grads = grads.data();
    program.num_params = int32_t(params.size());
    program.fields = kFields;
    program.num_fields = 2;
    program.loss = kLoss;
    program.output = kPred;
    program.steps = steps.data();
    program.num_steps = int32_t(steps.size());
    program.forward_end = kForwardEnd;
    program.prologue_begin = kPrologueStep;
    program.prologue_end = kPrologueStep + 1;
    program.args = args.data();
    program.ints = ints.data();
    program.nodes = nodes.data();
    program.num_nodes = int32_t(nodes.size());
    program.kernel_names = kMlpKernelNames;
    program.num_kernels = kNumMlpKernels;
    program.schedule = fused_weight_grad ? "test schedule: 13 steps" : "test schedule: 14 steps";
    program.num_args = int32_t(args.size());
    program.num_ints = int32_t(ints.size());
  }
};

// The quickstart's description with the test program's extra `unused` parameter,
// declared last so the other seeds are unchanged (runtime/quickstart_mlp_test.cc drops
// it for its hand-written model).
inline ModelDescription quickstart_description(const char* name = "quickstart_mlp") {
  ModelDescription m;
  m.name = name;
  InitSpec xavier{InitKind::XavierUniform}, zeros{InitKind::Zeros};
  m.params = {{"W1", {8, 2}, 16, xavier},
              {"b1", {8}, 8, zeros},
              {"W2", {1, 8}, 8, xavier},
              {"b2", {1}, 1, zeros},
              {"unused", {kUnusedNumel}, kUnusedNumel, zeros}};
  m.batch = 1;
  m.in_features = 2;
  m.out_features = 1;
  m.optimizer.kind = OptimizerConfig::Adam;
  m.optimizer.lr = 0.03;
  return m;
}

// What the quickstart prints at the default seed (TorchLean's documented run, f64);
// runtime/quickstart_mlp_test.cc checks the same text from hand-written code.
inline constexpr const char kQuickstartGolden[] =
    "mean_loss(before) = 1.349908\n"
    "step 0: loss=2.328068\n"
    "step 25: loss=0.012265\n"
    "step 50: loss=0.000821\n"
    "step 75: loss=0.000000\n"
    "step 100: loss=0.005942\n"
    "step 125: loss=0.041133\n"
    "step 150: loss=0.000790\n"
    "step 175: loss=0.000322\n"
    "mean_loss(after) = 0.002521\n"
    "  center: x=(0.000000,0.000000)  target=0.200000  pred=[0.187445]\n"
    "  heldout: x=(0.250000,-0.750000)  target=0.200000  pred=[0.109527]\n"
    "steps=200 loss0=1.349908 loss1=0.002521\n"
    "predict(heldout) = [0.109527]\n";

// The same at seed 2026 for two steps (TorchLean's numbers).
inline constexpr const char kQuickstartTwoStepsSeed2026[] =
    "mean_loss(before) = 0.761530\n"
    "step 0: loss=0.038059\n"
    "mean_loss(after) = 0.755218\n"
    "  center: x=(0.000000,0.000000)  target=0.200000  pred=[0.026134]\n"
    "  heldout: x=(0.250000,-0.750000)  target=0.200000  pred=[0.074492]\n"
    "steps=2 loss0=0.761530 loss1=0.755218\n"
    "predict(heldout) = [0.074492]\n";

}  // namespace vouch::rt::test_program

#endif  // VOUCH_RUNTIME_TEST_PROGRAM_H_
