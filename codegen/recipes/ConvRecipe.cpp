//===- ConvRecipe.cpp - im2col, col2im and col2im_matmul --------*- C++ -*-===//
//
// The index ops of a convolution's composed form (ir/VouchOps.td,
// "Convolution"): im2col, an image's windows as columns, and col2im, its
// adjoint, columns folded back into an image (one writer per image element,
// its terms in ascending kernel-offset order: no atomics). The products
// between them are matmuls, the Gemm recipes' (cuBLAS with transpose flags),
// except where vouch-fold-col2im made a product and its col2im one
// col2im_matmul (an implicit GEMM, the columns never stored). The geometry
// (ir/ConvGeometry.h) goes to the kernels as 21 integers in
// runtime/cuda/kernels/conv_geometry.h's field order, 1-D and 2-D padded to
// three axes with extent 1 in front. cuda: runtime/cuda/kernels/conv.cuh, one thread
// per output element, grid-stride; col2im_matmul.cuh, a block per tile
// (conv_implicit_tiles). cpu: runtime/cpu_kernels.h's im2col, col2im and
// col2im_matmul. Asked before the index recipe, which claims the whole
// family.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"
#include "ir/ConvGeometry.h"
#include "runtime/cuda/kernels/implicit_tiles.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

// args: input, result, then the geometry's 21 integers.
const char *kCpuConv = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::ConvGeometry g = vouch::rt::conv_geometry_from(args, 2);
  vouch::rt::@KERNEL@<T>(static_cast<const T*>(args[0].ptr), static_cast<T*>(args[1].ptr), g);
}
)cpp";

const char *kCudaConv = R"cu(#include "conv.cuh"
#define VOUCH_CONV_PARAMS long long n, long long c, long long g, long long s0, long long s1, long long s2, long long g0, long long g1, long long g2, long long k0, long long k1, long long k2, long long t0, long long t1, long long t2, long long p0, long long p1, long long p2, long long d0, long long d1, long long d2
#define VOUCH_CONV_GEOMETRY vouch::ConvGeometry{n, c, g, {s0, s1, s2}, {g0, g1, g2}, {k0, k1, k2}, {t0, t1, t2}, {p0, p1, p2}, {d0, d1, d2}}
extern "C" __global__ void @NAME@_f32(const float* in, float* out, VOUCH_CONV_PARAMS) {
  vouch::@KERNEL@_kernel<float>(in, out, VOUCH_CONV_GEOMETRY);
}
extern "C" __global__ void @NAME@_f64(const double* in, double* out, VOUCH_CONV_PARAMS) {
  vouch::@KERNEL@_kernel<double>(in, out, VOUCH_CONV_GEOMETRY);
}
#undef VOUCH_CONV_PARAMS
#undef VOUCH_CONV_GEOMETRY
)cu";

// args: lhs, rhs, result, the geometry's 21 integers, then the product's
// rows per group (R).
const char *kCpuCol2imMatmul = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::ConvGeometry g = vouch::rt::conv_geometry_from(args, 3);
  vouch::rt::col2im_matmul<T>(static_cast<const T*>(args[0].ptr),
                              static_cast<const T*>(args[1].ptr),
                              static_cast<T*>(args[2].ptr), g, args[24].i);
}
)cpp";

// @F32@: the f32 kernel, col2im_matmul_kernel<float> (fp32 products) or
// col2im_matmul_tf32_kernel (tensor cores, under products=tf32 / bf16), and
// @BOUNDS@ its launch bounds: three blocks per SM for tf32 (80 registers, no
// spills, ~10% faster on an H100 than two), none for fp32 (no faster).
const char *kCudaCol2imMatmul = R"cu(#include "col2im_matmul.cuh"
#define VOUCH_CONV_PARAMS long long n, long long c, long long g, long long s0, long long s1, long long s2, long long g0, long long g1, long long g2, long long k0, long long k1, long long k2, long long t0, long long t1, long long t2, long long p0, long long p1, long long p2, long long d0, long long d1, long long d2
#define VOUCH_CONV_GEOMETRY vouch::ConvGeometry{n, c, g, {s0, s1, s2}, {g0, g1, g2}, {k0, k1, k2}, {t0, t1, t2}, {p0, p1, p2}, {d0, d1, d2}}
extern "C" __global__ void @BOUNDS@ @NAME@_f32(const float* lhs, const float* rhs, float* out, VOUCH_CONV_PARAMS, long long rows) {
  vouch::@F32@(lhs, rhs, out, VOUCH_CONV_GEOMETRY, rows);
}
extern "C" __global__ void __launch_bounds__(256) @NAME@_f64(const double* lhs, const double* rhs, double* out, VOUCH_CONV_PARAMS, long long rows) {
  vouch::col2im_matmul_kernel<double>(lhs, rhs, out, VOUCH_CONV_GEOMETRY, rows);
}
#undef VOUCH_CONV_PARAMS
#undef VOUCH_CONV_GEOMETRY
)cu";

/// `g` with three spatial axes: the missing ones, of extent 1, change no
/// index. They go in front, so the kernels' innermost axis (im2col's quads
/// run along it) is the image's own last one.
ConvGeometry threeAxes(ConvGeometry g) {
  while (g.spatialAxes() < kMaxConvSpatialAxes) {
    for (auto *list : {&g.image, &g.grid, &g.kernel, &g.stride, &g.dilation})
      list->insert(list->begin(), 1);
    g.padding.insert(g.padding.begin(), 0);
  }
  return g;
}

/// The geometry's 21 integers, in conv_geometry.h's field order.
void appendGeometry(std::vector<KernelArg> &args, const ConvGeometry &g) {
  for (int64_t v : {g.batch, g.channels, g.groups})
    args.push_back(KernelArg::integer(v));
  for (const auto *list :
       {&g.image, &g.grid, &g.kernel, &g.stride, &g.padding, &g.dilation})
    for (int64_t v : *list)
      args.push_back(KernelArg::integer(v));
}

LogicalResult emitCol2imMatmul(Col2imMatmulOp op, ProgramBuilder &builder) {
  bool cpu = builder.target() == Target::Cpu;
  ConvGeometry g = threeAxes(getConvGeometry(op));
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  int64_t rows = lhs.getDimSize(lhs.getRank() - 2);
  std::vector<KernelArg> args = {KernelArg::buffer(op.getLhs()),
                                 KernelArg::buffer(op.getRhs()),
                                 KernelArg::buffer(op.getResult())};
  appendGeometry(args, g);
  args.push_back(KernelArg::integer(rows));
  if (cpu) {
    builder.addKernelStep(
        builder.kernel("col2im_matmul", kCpuCol2imMatmul), args, 0, 0, 0);
    return success();
  }
  bool tensorCores = builder.products() != capsules::ProductPrecision::Fp32;
  std::string source = kCudaCol2imMatmul;
  std::string f32 = tensorCores ? "col2im_matmul_tf32_kernel"
                                : "col2im_matmul_kernel<float>";
  source.replace(source.find("@F32@"), 5, f32);
  source.replace(source.find("@BOUNDS@"), 8,
                 tensorCores ? "__launch_bounds__(256, 3)"
                             : "__launch_bounds__(256)");
  int64_t positions = g.batch;
  for (int64_t extent : g.image)
    positions *= extent;
  int64_t tiles =
      implicit_tiles(g.groups, g.channels / g.groups, positions);
  if (tiles > std::numeric_limits<uint32_t>::max())
    return op.emitOpError("needs ")
           << tiles << " blocks, more than a launch's grid holds";
  builder.addKernelStep(
      builder.kernel(tensorCores ? "col2im_matmul_tf32" : "col2im_matmul",
                     source),
      args, static_cast<uint32_t>(tiles), kImplicitThreads, 1);
  return success();
}

class ConvRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "conv"; }
  bool handles(Operation *op) const override {
    return isa<Im2colOp, Col2imOp, Col2imMatmulOp>(op);
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    if (auto folded = dyn_cast<Col2imMatmulOp>(op))
      return emitCol2imMatmul(folded, builder);
    bool cpu = builder.target() == Target::Cpu;
    auto im2col = dyn_cast<Im2colOp>(op);
    ConvGeometry g = threeAxes(im2col ? getConvGeometry(im2col)
                                      : getConvGeometry(cast<Col2imOp>(op)));
    std::vector<KernelArg> args = {KernelArg::buffer(op->getOperand(0)),
                                   KernelArg::buffer(op->getResult(0))};
    appendGeometry(args, g);
    StringRef kernelName = im2col ? "im2col" : "col2im";
    int32_t kernel = builder.kernel(
        kernelName, withKernel(cpu ? kCpuConv : kCudaConv, kernelName));
    addGridStrideStep(builder, kernel, args, numel(op->getResult(0)));
    return success();
  }
};

const ConvRecipe recipe;
// Before the index recipe, which claims the whole index family.
const RecipeRegistration registration(&recipe, 5);

} // namespace

} // namespace vouch::codegen
