//===- AttentionRecipe.cpp - flash_attention, qkv_attention -----*- C++ -*-===//
//
// scaled_dot_product_attention's fused form. cuda: runtime/cuda/kernels/
// attention.cuh (under a tf32 or bf16 profile with heads of at most 64
// features, attention64.cuh's f32 kernels: FlashAttention-2's split of the
// work, blocks of 128), the forward one kernel (online softmax over key tiles, no
// Tq×Tk matrix; under a tf32 or bf16 profile the f32 entries are its
// tensor-core kernels, the products' operands rounded to TF32 or bf16), the
// gradient three: delta = Σ dy∘result per query into a
// scratch buffer, then dk and dv (a block per key tile, the queries in
// ascending tiles) and dq (a block per query tile, the keys in ascending
// tiles), each result written once, no atomics. Every tensor is passed with a
// Dims (its extents and strides; the batch axes walked row-major), the mask
// (an int32 0 / 1 buffer) with its broadcast strides over the scores
// [..., Tq, Tk]. qkv_attention and its gradient run the same kernels with
// q, k and v (and dq, dk, dv) as parts of one packed buffer: the entry adds
// the part's offset H·d to the pointer and passes Dims that view
// [..., T, 3·H·d] as [..., H, T, d] (the result [..., T, H·d] likewise).
// Under bf16 products a qkv that vouch-round-bf16-operands rounded (heads
// attention64.cuh takes) is passed as bf16 bits: the kernels `<op>_bf16`,
// attention64.cuh's bf16-input overloads, an f32 entry only.
// cpu: runtime/cpu_kernels.h's flash_attention / flash_attention_grad
// (contiguous tensors) and qkv_attention / qkv_attention_grad.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include <algorithm>
#include <optional>

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

/// Row-major strides of `shape`.
std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// A contiguous tensor's Dims: its extents, row-major strides.
KernelArg denseDims(Value v) {
  return KernelArg::dims(shapeOf(v), rowMajorStrides(shapeOf(v)));
}

/// The mask's Dims over the scores [..., Tq, Tk] (broadcast strides).
KernelArg maskDims(ArrayRef<int64_t> scores, Value mask) {
  return KernelArg::dims(scores, broadcastStrides(scores, shapeOf(mask)));
}

/// The extents every kernel of the op needs.
struct AttentionExtents {
  int64_t batch = 1, tq, tk, d, dv;
  std::vector<int64_t> scores; ///< [..., Tq, Tk]
};

AttentionExtents extentsOf(Value query, Value key, Value value) {
  ArrayRef<int64_t> q = shapeOf(query), k = shapeOf(key), v = shapeOf(value);
  AttentionExtents e;
  size_t rank = q.size();
  for (size_t i = 0; i + 2 < rank; ++i)
    e.batch *= q[i];
  e.tq = q[rank - 2];
  e.d = q[rank - 1];
  e.tk = k[rank - 2];
  e.dv = v[rank - 1];
  e.scores.assign(q.begin(), q.end() - 1);
  e.scores.push_back(e.tk);
  return e;
}

//===----------------------------------------------------------------------===//
// Launch shapes: attention.cuh's helpers, mirrored (kernel_lab launches the
// kernels with the header's own).
//===----------------------------------------------------------------------===//

constexpr int64_t kTile = 64;      // kAttentionTile: rows of a tile, features of a chunk
constexpr int64_t kPitch = 65;     // kAttentionPitch
constexpr uint32_t kThreads = 256; // kAttentionThreads
constexpr int64_t kDeltaRows = 64; // kAttentionDeltaRows

/// attention_chunks: 64-feature chunks of a head (the DV / DK template
/// arguments), 1..4.
int64_t chunks(int64_t d) { return d <= 64 ? 1 : d <= 128 ? 2 : d <= 192 ? 3 : 4; }

/// attention_tile_grid: a block per (batch, tile) of the side it owns.
uint32_t tileGrid(int64_t batch, int64_t t) {
  return static_cast<uint32_t>(std::max<int64_t>(1, batch * ((t + kTile - 1) / kTile)));
}

/// attention_delta_grid: a block per (batch, 16 query rows), at most 65,535.
uint32_t deltaGrid(int64_t batch, int64_t tq) {
  return static_cast<uint32_t>(
      std::clamp<int64_t>(batch * ((tq + kDeltaRows - 1) / kDeltaRows), 1, 65535));
}

/// attention_forward_shared_bytes / attention_backward_shared_bytes: 4 or 5
/// tiles of [64][65] elements (f32 66,560 / 83,200 bytes; f64 twice that).
uint32_t tileBytes(int tiles, int64_t element) {
  return static_cast<uint32_t>(tiles * kTile * kPitch * element);
}

/// attention_tf32_forward_shared_bytes / attention_tf32_backward_shared_bytes:
/// the tensor-core kernels' tiles (rows of 68 floats; TF32 and bf16 alike),
/// f32 only.
constexpr uint32_t kTcForwardBytes = 4 * kTile * 68 * 4 + 2 * 2 * kTile * 4; // 70,656
constexpr uint32_t kTcBackwardBytes = 5 * kTile * 68 * 4;                   // 87,040

/// attention64.cuh (tensor-core products, heads of at most 64 features): blocks
/// of kAttention64Threads, tiles of [64][64] floats, or of bf16 for q, k and v
/// given as bf16 (8 KiB: attention64_tile_floats), dO's float either way
/// (attention64_*_shared_bytes).
constexpr uint32_t kThreads64 = 128;
constexpr uint32_t k64FloatTile = 64 * 64 * 4;
constexpr uint32_t a64Tile(bool bf16Inputs) {
  return bf16Inputs ? k64FloatTile / 2 : k64FloatTile;
}
/// Q, K × 2, V × 2: 81,920 bytes, bf16 40,960.
constexpr uint32_t a64ForwardBytes(bool bf16Inputs) { return 5 * a64Tile(bf16Inputs); }
/// Q, K × 2, V × 2, dO: 98,304, bf16 57,344.
constexpr uint32_t a64DqBytes(bool bf16Inputs) {
  return 5 * a64Tile(bf16Inputs) + k64FloatTile;
}
/// K, V, Q × 2, dO × 2, lse and delta × 2: 99,328, bf16 66,560.
constexpr uint32_t a64DkdvBytes(bool bf16Inputs) {
  return 4 * a64Tile(bf16Inputs) + 2 * k64FloatTile + 4 * 64 * 4;
}

/// Whether a tensor-core build's f32 entries take attention64.cuh's kernels:
/// heads of at most 64 features (GPT-2's), measured 1.2-1.6x faster than
/// attention.cuh's tensor-core kernels at GPT-2's shape (docs/performance.md).
bool useAttention64(const std::string &twin, int64_t d, int64_t dv) {
  return !twin.empty() && attention64TakesHeads(d, dv);
}

/// The blocks an SM that attention64.cuh's entry `stem` is compiled for (its
/// launch bounds' second argument). Two where q, k and v are float (their
/// float tiles let no third block share the SM). Their 8 KiB bf16 tiles let
/// three: the forward and dq then take 168 registers (44 and 184 bytes
/// spilled) and run faster, dkdv (128 accumulators) spills 544 bytes and
/// runs slower, so keeps two. H100, GPT-2's shape, kernel lab: forward 0.155
/// -> 0.128 ms, dq 0.161 -> 0.148, dkdv 0.253 -> 0.299 (four blocks: 0.127,
/// 0.230, 0.414).
int a64BlocksPerSm(const std::string &stem, bool bf16Inputs) {
  return bf16Inputs && stem != "attention_dkdv" ? 3 : 2;
}

/// The suffix of attention.cuh's tensor-core twin for a profile's product
/// precision ("_tf32", "_bf16"); empty for fp32 (the FMA kernels).
std::string tensorCoreTwin(capsules::ProductPrecision p) {
  if (p == capsules::ProductPrecision::Fp32)
    return "";
  return "_" + std::string(capsules::toString(p));
}

/// The f32 entry points with one chunk (heads of up to 64: GPT-2's) hold two
/// blocks per SM in 128 registers (attention.cuh's measure).
std::string bounds(const char *type, int64_t chunkCount) {
  return std::string(type) == "float" && chunkCount == 1
             ? "__launch_bounds__(256, 2) "
             : "";
}

//===----------------------------------------------------------------------===//
// Sources
//===----------------------------------------------------------------------===//

/// A cpu step calling `function` (the op table's cpuKernel, e.g.
/// `vouch::rt::flash_attention<T>`) with the step's arguments in
/// order: `inputs` const tensors, the mask and its Dims (nullptr and an empty
/// shape when none), `outputs` tensors, `integers` extents, `causal`, scale.
/// flash_attention: 3 inputs (q, k, v), 2 outputs (out, lse), 5 extents
/// (batch, tq, tk, d, dv); flash_attention_grad: 6 (dy, q, k, v, out, lse),
/// 3 (dq, dk, dv), 5; qkv_attention: 1 (qkv), 2, 4 (batch, T, H, d);
/// qkv_attention_grad: 4 (dy, qkv, out, lse), 1 (dqkv), 4.
std::string cpuCallSource(const std::string &function, int inputs, int outputs,
                          int integers, bool masked) {
  auto arg = [](int i) { return "args[" + std::to_string(i) + "]"; };
  std::string call;
  int at = 0;
  for (; at < inputs; ++at)
    call += "static_cast<const T*>(" + arg(at) + ".ptr), ";
  if (masked) {
    call += "static_cast<const int32_t*>(" + arg(at) + ".ptr), " + arg(at + 1) +
            ".dims.rank, " + arg(at + 1) + ".dims.extent, " + arg(at + 1) +
            ".dims.stride, ";
    at += 2;
  } else {
    call += "nullptr, 0, nullptr, nullptr, ";
  }
  for (int end = at + outputs; at < end; ++at)
    call += "static_cast<T*>(" + arg(at) + ".ptr), ";
  for (int end = at + integers; at < end; ++at)
    call += arg(at) + ".i, ";
  call += arg(at) + ".i != 0, static_cast<T>(" + arg(at + 1) + ".real)";
  return "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n"
         "  " + function + "(" + call + ");\n}\n";
}

/// A cuda entry point calling `vouch::<stem>_kernel<type[, heads]>` with
/// parameters `params` (each "T* name" or "Dims name"; `T` replaced by the
/// element type) and, where the op has no mask, nullptr and an empty Dims for
/// the mask's. `tensorCore` ("_tf32" / "_bf16", tensorCoreTwin): the f32
/// entry calls that twin, e.g. `<stem>_tf32_kernel<heads>` (tensor cores),
/// the f64 entry the kernel.
/// `attention64`: the f32 entry calls attention64.cuh's kernel of the stem and
/// the tensor-core twin instead (`attention64_forward_tf32_kernel`), with its
/// own launch bounds; the f64 entry stays attention.cuh's (a tf32 / bf16 build
/// has no f64 run: train_main refuses --dtype f64 before any launch).
/// `call`, where not empty, is the kernel's arguments as expressions of the
/// entry's parameters (qkv_attention's `qkv + part`), in the kernel's order;
/// `mask` and `md` in it stand for the mask's pair as in `params`.
/// `bf16Inputs` (attention64 under bf16 products, qkv rounded by
/// vouch-round-bf16-operands): q, k, v (qkv) are bf16 bits, `const unsigned
/// short*`, which picks attention64.cuh's bf16-input kernels; f32 entry only.
std::string cudaEntry(const std::string &stem, const std::string &heads,
                      const std::vector<std::string> &params, bool masked,
                      int64_t boundChunks, const std::string &tensorCore,
                      bool attention64 = false,
                      const std::vector<std::string> &call = {},
                      bool bf16Inputs = false) {
  std::string source;
  for (auto [type, suffix] : kCudaRealTypes) {
    if (bf16Inputs && std::string(type) != "float")
      continue;
    std::string list, names;
    for (const std::string &p : params) {
      bool isMask = p == "const int* mask" || p == "vouch::Dims md";
      std::string name = p.substr(p.rfind(' ') + 1);
      if (isMask && !masked) {
        names += std::string(names.empty() ? "" : ", ") +
                 (p == "const int* mask" ? "nullptr" : "vouch::Dims{}");
        continue;
      }
      std::string typed = p;
      bool input = name == "q" || name == "k" || name == "v" || name == "qkv";
      std::string element = bf16Inputs && input ? "unsigned short" : type;
      for (size_t at = typed.find("T*"); at != std::string::npos;
           at = typed.find("T*", at + element.size()))
        typed.replace(at, 1, element);
      list += (list.empty() ? "" : ", ") + typed;
      names += (names.empty() ? "" : ", ") + name;
    }
    if (!call.empty()) {
      names.clear();
      for (const std::string &arg : call)
        names += (names.empty() ? "" : ", ") +
                 (masked || (arg != "mask" && arg != "md") ? arg
                  : arg == "mask"                          ? std::string("nullptr")
                                                           : std::string("vouch::Dims{}"));
    }
    bool float64 = std::string(type) == "double";
    if (attention64 && !float64) {
      source += "extern \"C\" __global__ void __launch_bounds__(128, " +
                std::to_string(a64BlocksPerSm(stem, bf16Inputs)) + ") @NAME@_" +
                std::string(suffix) + "(" + list + ") {\n  vouch::attention64_" +
                stem.substr(std::string("attention_").size()) + tensorCore + "_kernel(" +
                names + ");\n}\n";
      continue;
    }
    source += "extern \"C\" __global__ void " +
              (boundChunks ? bounds(type, boundChunks) : std::string()) + "@NAME@_" +
              suffix + "(" +
              list + ") {\n  vouch::" +
              // The f32 entry of a TF32 / bf16 build: attention.cuh's
              // tensor-core kernel of the same arguments (no element type
              // parameter).
              (!tensorCore.empty() && std::string(type) == "float"
                   ? stem + tensorCore + "_kernel<" + heads.substr(2)
                   : stem + "_kernel<" + type + heads) +
              ">(" + names + ");\n}\n";
  }
  return source;
}

/// The kernels' tensor parameters and, for qkv_attention, the call that
/// reads q, k and v (and writes dq, dk and dv) out of one packed buffer at
/// offsets `part` = H·d: its Dims `hd` view a part as [..., H, T, d].
const std::vector<std::string> kForwardParams = {
    "const T* q", "vouch::Dims qd",  "const T* k", "vouch::Dims kd",
    "const T* v", "vouch::Dims vd",  "const int* mask", "vouch::Dims md",
    "T* out",     "vouch::Dims od",  "T* lse",     "long long causal",
    "double scale"};
const std::vector<std::string> kPackedForwardParams = {
    "const T* qkv", "vouch::Dims hd", "long long part", "const int* mask",
    "vouch::Dims md", "T* out", "vouch::Dims od", "T* lse", "long long causal",
    "double scale"};
const std::vector<std::string> kPackedInputs = {
    "qkv", "hd", "qkv + part", "hd", "qkv + 2 * part", "hd", "mask", "md"};
const std::vector<std::string> kGradParams = {
    "const T* q",    "vouch::Dims qd",  "const T* k",      "vouch::Dims kd",
    "const T* v",    "vouch::Dims vd",  "const int* mask", "vouch::Dims md",
    "const T* dout", "vouch::Dims dod", "const T* lse",    "const T* delta"};
const std::vector<std::string> kPackedGradParams = {
    "const T* qkv",  "vouch::Dims hd",  "long long part", "const int* mask",
    "vouch::Dims md", "const T* dout", "vouch::Dims dod", "const T* lse",
    "const T* delta"};

std::vector<std::string> concat(std::vector<std::string> a,
                                const std::vector<std::string> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// One attention op as its kernels see it: flash_attention's q, k, v, result
/// and gradients each a buffer of its own, dense; qkv_attention's q, k, v
/// (and dq, dk, dv) parts of one packed buffer, its result and gradient
/// [..., T, H·d] read as [..., H, T, d].
struct AttentionOperands {
  std::string name; ///< the op's, the kernels' base name
  bool forward = true, causal = false;
  double scale = 1;
  AttentionExtents e;
  std::optional<QkvHeads> packed; ///< the heads of qkv (q is qkv)
  Value q, k, v, mask, result, lse;
  Value grad, dq, dk, dv;  ///< the gradient op's (dq: qkv_attention's dqkv)

  /// Whether q, k and v are bf16 (qkv rounded by vouch-round-bf16-operands
  /// for attention64.cuh's kernels).
  bool bf16Inputs() const {
    return cast<ShapedType>(q.getType()).getElementType().isBF16();
  }
  /// The kernels' base name: the op's, `_masked`, `_bf16` for bf16 inputs.
  std::string variant() const {
    return name + (mask ? "_masked" : "") + (bf16Inputs() ? "_bf16" : "");
  }
  /// H·d: k's offset in qkv, v's at twice it.
  int64_t part() const { return packed->heads * packed->features; }
  /// The forward and gradient kernels' input arguments, in the order of
  /// kForwardParams' first eight (or kPackedForwardParams' first five).
  void appendInputs(SmallVectorImpl<KernelArg> &args) const {
    if (packed)
      args.append({KernelArg::buffer(q),
                   KernelArg::dims(packed->headShape(), packed->headStrides(3)),
                   KernelArg::integer(part())});
    else
      args.append({KernelArg::buffer(q), denseDims(q), KernelArg::buffer(k),
                   denseDims(k), KernelArg::buffer(v), denseDims(v)});
    if (mask)
      args.append({KernelArg::buffer(mask), maskDims(e.scores, mask)});
  }
  /// The Dims of the result or of its gradient (the same shape).
  KernelArg resultLikeDims(Value tensor) const {
    return packed ? KernelArg::dims(packed->headShape(), packed->headStrides(1))
                  : denseDims(tensor);
  }
};

/// The cuda kernels an op's extents and the profile take: attention.cuh's
/// (their tensor-core twin under tf32 / bf16), or attention64.cuh's.
struct KernelChoice {
  std::string twin; ///< tensorCoreTwin
  bool a64;         ///< useAttention64
  int64_t dk, dv;   ///< 64-feature chunks of q's and v's heads
  bool bf16Inputs;  ///< q, k and v bf16 (AttentionOperands::bf16Inputs)

  KernelChoice(capsules::ProductPrecision products, const AttentionOperands &o)
      : twin(tensorCoreTwin(products)), a64(useAttention64(twin, o.e.d, o.e.dv)),
        dk(chunks(o.e.d)), dv(chunks(o.e.dv)), bf16Inputs(o.bf16Inputs()) {}
  std::string include() const {
    return a64 ? "#include \"attention64.cuh\"\n" : "#include \"attention.cuh\"\n";
  }
  uint32_t threads() const { return a64 ? kThreads64 : kThreads; }
  uint32_t forwardBytes() const {
    return a64 ? a64ForwardBytes(bf16Inputs) : twin.empty() ? tileBytes(4, 4) : kTcForwardBytes;
  }
  uint32_t dkdvBytes() const {
    return a64 ? a64DkdvBytes(bf16Inputs) : backwardBytes();
  }
  uint32_t dqBytes() const { return a64 ? a64DqBytes(bf16Inputs) : backwardBytes(); }

private:
  /// attention.cuh's backward kernels (dkdv and dq alike).
  uint32_t backwardBytes() const {
    return twin.empty() ? tileBytes(5, 4) : kTcBackwardBytes;
  }
};

/// What both forms' ops share: name, causal, scale, mask, result, lse.
template <class Op>
AttentionOperands commonOperandsOf(Op op, bool forward) {
  AttentionOperands o;
  o.name = op->getName().stripDialect().str();
  o.forward = forward;
  o.causal = op.getCausal();
  o.scale = op.getScale().convertToDouble();
  o.mask = op.getMask(), o.result = op.getResult(), o.lse = op.getLse();
  return o;
}

template <class Op>
AttentionOperands flashOperandsOf(Op op, bool forward) {
  AttentionOperands o = commonOperandsOf(op, forward);
  o.e = extentsOf(op.getQuery(), op.getKey(), op.getValue());
  o.q = op.getQuery(), o.k = op.getKey(), o.v = op.getValue();
  return o;
}

template <class Op>
AttentionOperands packedOperandsOf(Op op, bool forward) {
  AttentionOperands o = commonOperandsOf(op, forward);
  QkvHeads h = *qkvHeads(cast<RankedTensorType>(op.getQkv().getType()), op.getHeads());
  o.e.batch = h.heads;
  for (int64_t b : h.batch)
    o.e.batch *= b;
  o.e.tq = o.e.tk = h.tokens;
  o.e.d = o.e.dv = h.features;
  SmallVector<int64_t> scores = h.scoresShape();
  o.e.scores.assign(scores.begin(), scores.end());
  o.q = o.k = o.v = op.getQkv();
  o.packed = std::move(h);
  return o;
}

AttentionOperands operandsOf(Operation *op) {
  if (auto fused = dyn_cast<FlashAttentionOp>(op))
    return flashOperandsOf(fused, /*forward=*/true);
  if (auto grad = dyn_cast<FlashAttentionGradOp>(op)) {
    AttentionOperands o = flashOperandsOf(grad, /*forward=*/false);
    o.grad = grad.getGrad(), o.dq = grad.getDq(), o.dk = grad.getDk(),
    o.dv = grad.getDv();
    return o;
  }
  if (auto packed = dyn_cast<QkvAttentionOp>(op))
    return packedOperandsOf(packed, /*forward=*/true);
  auto grad = cast<QkvAttentionGradOp>(op);
  AttentionOperands o = packedOperandsOf(grad, /*forward=*/false);
  o.grad = grad.getGrad(), o.dq = grad.getDqkv();
  return o;
}

class AttentionRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "attention"; }
  bool handles(Operation *op) const override {
    return familyOf(op) == OpFamily::Attention;
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    AttentionOperands o = operandsOf(group.ops.front());
    if (builder.target() != Target::Cuda)
      return emitCpu(o, builder);
    return o.forward ? emitForward(o, builder) : emitGrad(o, builder);
  }

private:
  /// cpu: runtime/cpu_kernels.h's flash_attention(_grad) or, for the packed
  /// ops, qkv_attention(_grad) (whose extents are batch, T, H, d).
  static LogicalResult emitCpu(const AttentionOperands &o, ProgramBuilder &builder) {
    bool masked = bool(o.mask);
    SmallVector<KernelArg> args;
    if (!o.forward)
      args.push_back(KernelArg::buffer(o.grad));
    args.push_back(KernelArg::buffer(o.q));
    if (!o.packed)
      args.append({KernelArg::buffer(o.k), KernelArg::buffer(o.v)});
    if (!o.forward)
      args.append({KernelArg::buffer(o.result), KernelArg::buffer(o.lse)});
    int inputs = static_cast<int>(args.size());
    if (masked)
      args.append({KernelArg::buffer(o.mask), maskDims(o.e.scores, o.mask)});
    size_t firstOutput = args.size();
    if (o.forward)
      args.append({KernelArg::buffer(o.result), KernelArg::buffer(o.lse)});
    else if (o.packed)
      args.push_back(KernelArg::buffer(o.dq));
    else
      args.append({KernelArg::buffer(o.dq), KernelArg::buffer(o.dk),
                   KernelArg::buffer(o.dv)});
    int outputs = static_cast<int>(args.size() - firstOutput);
    if (o.packed)
      args.append({KernelArg::integer(o.e.batch / o.packed->heads),
                   KernelArg::integer(o.e.tq), KernelArg::integer(o.packed->heads),
                   KernelArg::integer(o.e.d)});
    else
      args.append({KernelArg::integer(o.e.batch), KernelArg::integer(o.e.tq),
                   KernelArg::integer(o.e.tk), KernelArg::integer(o.e.d),
                   KernelArg::integer(o.e.dv)});
    args.append({KernelArg::integer(o.causal ? 1 : 0), KernelArg::real(o.scale)});
    builder.addKernelStep(
        builder.kernel(o.name + (masked ? "_masked" : ""),
                       cpuCallSource(std::string(findOpFacts(o.name)->cpuKernel), inputs,
                                     outputs, o.packed ? 4 : 5, masked)),
        args, 0, 0, 0);
    return success();
  }

  static LogicalResult emitForward(const AttentionOperands &o,
                                   ProgramBuilder &builder) {
    bool masked = bool(o.mask);
    std::string variant = o.variant();
    SmallVector<KernelArg> args;
    o.appendInputs(args);
    args.append({KernelArg::buffer(o.result), o.resultLikeDims(o.result),
                 KernelArg::buffer(o.lse), KernelArg::integer(o.causal),
                 KernelArg::real(o.scale)});
    KernelChoice kernels(builder.products(), o);
    std::string source =
        kernels.include() +
        cudaEntry("attention_forward", ", " + std::to_string(kernels.dv),
                  o.packed ? kPackedForwardParams : kForwardParams, masked,
                  kernels.dv, kernels.twin, kernels.a64,
                  o.packed ? concat(kPackedInputs, {"out", "od", "lse", "causal", "scale"})
                           : std::vector<std::string>{},
                  o.bf16Inputs());
    builder.addKernelStep(builder.kernel(variant, source), args,
                          tileGrid(o.e.batch, o.e.tq), kernels.threads(), 1,
                          kernels.forwardBytes(), 0, tileBytes(4, 8));
    return success();
  }

  static LogicalResult emitGrad(const AttentionOperands &o,
                                ProgramBuilder &builder) {
    const AttentionExtents &e = o.e;
    bool masked = bool(o.mask);
    std::string variant = o.variant();
    // delta = Σ dy∘result per query: a scratch buffer of this op's own, read
    // by both gradient kernels.
    int32_t delta = builder.addScratch(builder.bufferName(o.dq) + ".delta",
                                       e.batch * e.tq, rt::DType::Real, false);
    KernelChoice kernels(builder.products(), o);
    {
      std::string source =
          "#include \"attention.cuh\"\n" +
          cudaEntry("attention_delta", "",
                    {"const T* dout", "vouch::Dims dod", "const T* out",
                     "vouch::Dims od", "T* delta"},
                    masked, 0, /*tensorCore=*/"");
      builder.addKernelStep(
          // One kernel for both ops (the same source: builder.kernel keeps the
          // first name it was given), so one name that fits both.
          builder.kernel("attention_delta", source),
          {KernelArg::buffer(o.grad), o.resultLikeDims(o.grad), KernelArg::buffer(o.result),
           o.resultLikeDims(o.result), KernelArg::scratch(delta)},
          deltaGrid(e.batch, e.tq), kThreads, 1);
    }
    auto inputs = [&](SmallVectorImpl<KernelArg> &args) {
      o.appendInputs(args);
      args.append({KernelArg::buffer(o.grad), o.resultLikeDims(o.grad),
                   KernelArg::buffer(o.lse), KernelArg::scratch(delta)});
    };
    const std::vector<std::string> &common = o.packed ? kPackedGradParams : kGradParams;
    const std::vector<std::string> packedCommon =
        concat(kPackedInputs, {"dout", "dod", "lse", "delta"});
    {
      SmallVector<KernelArg> args;
      inputs(args);
      std::vector<std::string> params, call;
      if (o.packed) {
        args.append({KernelArg::buffer(o.dq), KernelArg::integer(o.causal),
                     KernelArg::real(o.scale)});
        params = concat(common, {"T* dqkv", "long long causal", "double scale"});
        call = concat(packedCommon, {"dqkv + part", "hd", "dqkv + 2 * part", "hd",
                                     "causal", "scale"});
      } else {
        args.append({KernelArg::buffer(o.dk), denseDims(o.dk), KernelArg::buffer(o.dv),
                     denseDims(o.dv), KernelArg::integer(o.causal),
                     KernelArg::real(o.scale)});
        params = concat(common, {"T* dk", "vouch::Dims dkd", "T* dv", "vouch::Dims dvd",
                                 "long long causal", "double scale"});
      }
      builder.addKernelStep(
          builder.kernel(variant + "_dkdv",
                         kernels.include() +
                             cudaEntry("attention_dkdv",
                                       ", " + std::to_string(kernels.dk) + ", " +
                                           std::to_string(kernels.dv),
                                       params, masked, std::max(kernels.dk, kernels.dv),
                                       kernels.twin, kernels.a64, call, o.bf16Inputs())),
          args, tileGrid(e.batch, e.tk), kernels.threads(), 1,
          kernels.dkdvBytes(), 0, tileBytes(5, 8));
    }
    {
      SmallVector<KernelArg> args;
      inputs(args);
      std::vector<std::string> params, call;
      if (o.packed) {
        args.append({KernelArg::buffer(o.dq), KernelArg::integer(o.causal),
                     KernelArg::real(o.scale)});
        params = concat(common, {"T* dqkv", "long long causal", "double scale"});
        call = concat(packedCommon, {"dqkv", "hd", "causal", "scale"});
      } else {
        args.append({KernelArg::buffer(o.dq), denseDims(o.dq),
                     KernelArg::integer(o.causal), KernelArg::real(o.scale)});
        params = concat(common, {"T* dq", "vouch::Dims dqd", "long long causal",
                                 "double scale"});
      }
      builder.addKernelStep(
          builder.kernel(variant + "_dq",
                         kernels.include() +
                             cudaEntry("attention_dq", ", " + std::to_string(kernels.dk),
                                       params, masked, kernels.dk, kernels.twin,
                                       kernels.a64, call, o.bf16Inputs())),
          args, tileGrid(e.batch, e.tq), kernels.threads(), 1,
          kernels.dqBytes(), 0, tileBytes(5, 8));
    }
    return success();
  }
};

const AttentionRecipe recipe;
const RecipeRegistration registration(&recipe);

} // namespace

} // namespace vouch::codegen
