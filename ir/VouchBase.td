//===- VouchBase.td - the vouch dialect and its type constraints -*- tablegen -*-===//
//
// The vouch dialect describes a model: its inputs, targets and trainable
// parameters, the computation from them to a scalar loss, and (after the
// autodiff pass) the gradient of that loss with respect to every parameter.
// All tensors are ranked with static shapes: codegen bakes every extent into
// the emitted kernels, and the assurance gate checks every one against the
// UInt32 CUDA ABI.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_BASE_TD
#define VOUCH_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Vouch_Dialect : Dialect {
  let name = "vouch";
  let cppNamespace = "::vouch";
  let summary = "Models, their loss and their gradients, with static shapes";
  let description = [{
    Values are builtin ranked tensors with static shapes and element types
    f32, f64 (data), i32 (indices) or i1 (masks). Parameters, inputs and
    targets are ops of their own (`vouch.param`, `vouch.input`,
    `vouch.target`) so every pass knows which values are trainable. The
    clauses of a description are typed attributes (VouchAttrs.td).
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

// Every value the dialect computes with is a static-shape tensor.
def Vouch_AnyTensor : StaticShapeTensorOf<[F32, F64, I32, I1]>;
def Vouch_FloatTensor : StaticShapeTensorOf<[F32, F64]>;
def Vouch_F32Tensor : StaticShapeTensorOf<[F32]>;
def Vouch_Bf16Tensor : StaticShapeTensorOf<[BF16]>;
// A product's operand: a real value, or an f32 one rounded to bf16 by
// vouch.round_bf16 (bf16 products; the result is then f32).
def Vouch_ProductOperand : StaticShapeTensorOf<[F32, F64, BF16]>;
// qkv_attention's qkv: a real value, or an f32 one rounded to bf16 by
// vouch.round_bf16 (bf16 products, heads attention64.cuh's kernels take; the
// results and dqkv are then f32).
def Vouch_AttentionOperand : StaticShapeTensorOf<[F32, F64, BF16]>;
// What a view may reshape: any value.
def Vouch_ViewTensor : StaticShapeTensorOf<[F32, F64, I32, I1, BF16]>;
def Vouch_IntTensor : StaticShapeTensorOf<[I32]>;

//===----------------------------------------------------------------------===//
// The op table (ir/OpTable.h): what the stages outside ir/ know about an op
//===----------------------------------------------------------------------===//

// What kind of computation an op is (vouch::OpFamily): it selects the
// frontend's generic lowering, the capsule templates and the kernel recipe.
class Vouch_OpFamily<string name_> { string name = name_; }
def Vouch_Structural : Vouch_OpFamily<"Structural">; // declares or marks values
def Vouch_Generator : Vouch_OpFamily<"Generator">;   // no tensor operands
def Vouch_Pointwise : Vouch_OpFamily<"Pointwise">;   // elementwise, one shape
def Vouch_View : Vouch_OpFamily<"View">;             // same elements, new shape
def Vouch_Index : Vouch_OpFamily<"Index">;           // each result reads one input
def Vouch_Reduction : Vouch_OpFamily<"Reduction">;   // sums over `axes`
def Vouch_Loss : Vouch_OpFamily<"Loss">;             // rank-0 reduction of two
def Vouch_Gemm : Vouch_OpFamily<"Gemm">;             // matrix products
def Vouch_Normalization : Vouch_OpFamily<"Normalization">; // row-wise (softmax, layer_norm)
def Vouch_Attention : Vouch_OpFamily<"Attention">;   // fused attention, its VJP
def Vouch_Pool : Vouch_OpFamily<"Pool">;             // windows over spatial axes (max_pool, ...)
// Channel-wise (axis 1) over every other axis, with running statistics (batch_norm)
def Vouch_BatchNormalization : Vouch_OpFamily<"BatchNormalization">;
// A convolution's product with its windows read in place (implicit GEMM:
// col2im_matmul), the columns never in memory
def Vouch_Convolution : Vouch_OpFamily<"Convolution">;
// Other ops of the dialect, as the op's CompositeOpInterface::decompose
// builds them: vouch-decompose replaces it before autodiff, so it is never
// planned and has no capsule of its own; the ops it becomes are planned,
// each under its own capsule, and keep its location (named after it).
def Vouch_Composite : Vouch_OpFamily<"Composite">;

// Every op of the dialect. Besides the usual ODS fields, a record sets the
// facts of its row in the op table; ir/gen_op_table.py reads them (through
// llvm-tblgen --dump-json) and derives hasVjp from the record's interfaces
// and transposeFlags from its arguments.
class Vouch_Op<string mnemonic, list<Trait> traits = []>
    : Op<Vouch_Dialect, mnemonic, traits> {
  // Required: the generator refuses a record that leaves it unset.
  Vouch_OpFamily family = ?;
  // The value contract's claim: what the op computes, in one line
  // ("lhs + rhs elementwise"). Required for every op but structural ones.
  string formula = "";
  // The builtin of the model language that lowers to this op ("" when
  // none) and its parameters as the language spells them: "x",
  // "lhs, rhs", "x, axes = all". Pointwise and reduction builtins lower
  // generically by family; the others name a lowering in frontend/.
  string builtin = "";
  string builtinParams = "";
  // cuda providers in order of preference, comma-separated, as
  // capsules::parseProvider spells them. Each ships one cuda capsule of the
  // op (a provider without a capsule template for the op's family is an
  // error the catalog test reports); a list other than "native-cuda"
  // replaces the profile's order.
  string cudaProviders = "native-cuda";
  // The runtime/cpu_kernels.h function computing the op on cpu ("" when
  // the cpu emitter writes an inline loop), and what the cpu code does
  // besides calling it.
  string cpuKernel = "";
  string cpuKernelNote = "";
  // Keys of capsules/Evidence.cpp citing tests of the value contract of
  // the op's cpu (reference) and native cuda capsules; "" = not provided.
  string cpuEvidence = "";
  string cudaEvidence = "gpu-suite";
  // Whether the native cuda kernel may contract a·b + c into one FMA: ""
  // as every native kernel (NVRTC's -fmad, capsules::kNativeCudaFmad);
  // "none" when the op's formula rounds every product and sum on its own
  // (written with the __fmul_rn / __fadd_rn intrinsics, which NVRTC never
  // contracts), which its native capsule then claims (contract=none).
  string contraction = "";
  // The native cuda kernel, where it is not its family's (the capsule's
  // provenance): the recipe and kernel-library files, and the symbol.
  string cudaKernelSource = "";
  string cudaKernel = "";
  // What the native cuda kernel does besides its formula, where that is part
  // of its claim (layer_norm_grad: three results in one launch, their
  // reduction order); its capsule's value summary ends with it.
  string cudaKernelNote = "";
  // Whether the op sums although its family does not (embedding_grad,
  // scatter_add): its capsules then state a reduction order (a left fold on
  // cpu, the kernel's fixed per-thread order on cuda).
  bit sums = 0;
  // The operand (its index among the op's operands) whose storage the result
  // may be written over, -1 (the default) when none: codegen's storage plan
  // (codegen/StoragePlan.h) may then give the result the operand's storage
  // when the op's step is the operand's last reader. Set only where both the
  // cpu and the cuda kernel write the result in place safely: every element
  // of the operand is read before any write can clobber it (element i read
  // only to write element i, or the row read into statistics / shared memory
  // before the row is written), and the operand has the result's shape and
  // element type. The op must have one result.
  int inPlaceOperand = -1;
  // The result (its index) that the op's cuda kernel can store as bf16,
  // rounded to nearest even as it is stored, -1 (the default) when none:
  // under bf16 products, vouch-round-bf16-operands folds a vouch.round_bf16
  // of that result into the op (the result then has element type bf16) where
  // nothing else reads the f32 value. Set only where the cuda recipe emits
  // the bf16-storing entry point and the kernel lab checks it bitwise against
  // round_bf16 of the f32 result.
  int bf16Result = -1;
  // The operand (its index) that the op's cuda kernels can read as bf16 under
  // bf16 products where their shapes say (qkv_attention's qkv, for
  // attention64.cuh's kernels: heads of at most kAttention64MaxHeadDim), -1
  // (the default) when none: vouch-round-bf16-operands then rounds it once,
  // and the gate lets the op's capsule read it. Set only where the cuda recipe
  // emits the bf16-reading entry points and the kernel lab checks them
  // bitwise against the f32-reading ones given the same values.
  int bf16Operand = -1;
  // The result (its index) that the op's cuda kernel can store twice, as f32
  // and beside it as bf16 (rounded to nearest even as it is stored), -1 (the
  // default) when none: under bf16 products, where bf16 products read that
  // result through a vouch.round_bf16 and something else reads the f32 value
  // (so bf16Result cannot take the rounding over), vouch-round-bf16-operands
  // puts the rounding in one fusion group with the op, and the op's kernel
  // stores both (no launch of its own, no second read of the f32 value). Set
  // only where the cuda recipe emits a twin-storing entry point, one launch
  // (codegen refuses more), for every case the pass groups, and the kernel
  // lab checks the twin bitwise against the stored f32 value rounded.
  int bf16Twin = -1;
}

// Ops that declare or mark values (model, input, param, loss, ...): never
// planned, no capsule, no builtin.
class Vouch_StructuralOp<string mnemonic, list<Trait> traits = []>
    : Vouch_Op<mnemonic, traits> {
  let family = Vouch_Structural;
  let cudaProviders = "";
  let cudaEvidence = "";
}

#endif // VOUCH_BASE_TD
