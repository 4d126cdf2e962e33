//===- ConvRecipe.cpp - im2col and col2im -----------------------*- C++ -*-===//
//
// The two index ops of a convolution's composed form (ir/VouchOps.td,
// "Convolution"): im2col, an image's windows as columns, and col2im, its
// adjoint, columns folded back into an image (one writer per image element,
// its terms in ascending kernel-offset order: no atomics). The products
// between them are matmuls, the Gemm recipes' (cuBLAS with transpose flags).
// The geometry (ir/ConvGeometry.h) goes to the kernels as 21 integers in
// runtime/cuda/kernels/conv_geometry.h's field order, 1-D and 2-D padded to
// three axes with extent 1. cuda: runtime/cuda/kernels/conv.cuh, one thread
// per output element, grid-stride. cpu: runtime/cpu_kernels.h's im2col and
// col2im. Asked before the index recipe, which claims the whole family.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"
#include "ir/ConvGeometry.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

// args: input, result, then the geometry's 21 integers.
const char *kCpuConv = R"cpp(template <class T>
void @NAME@(const vouch::rt::ArgValue* args) {
  const vouch::ConvGeometry g{args[2].i, args[3].i, args[4].i,
                              {args[5].i, args[6].i, args[7].i},
                              {args[8].i, args[9].i, args[10].i},
                              {args[11].i, args[12].i, args[13].i},
                              {args[14].i, args[15].i, args[16].i},
                              {args[17].i, args[18].i, args[19].i},
                              {args[20].i, args[21].i, args[22].i}};
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

class ConvRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "conv"; }
  bool handles(Operation *op) const override {
    return isa<Im2colOp, Col2imOp>(op);
  }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    Operation *op = group.ops.front();
    bool cpu = builder.target() == Target::Cpu;
    auto im2col = dyn_cast<Im2colOp>(op);
    ConvGeometry g = im2col ? getConvGeometry(im2col)
                            : getConvGeometry(cast<Col2imOp>(op));
    // Three spatial axes: the missing ones of extent 1 change no index.
    while (g.spatialAxes() < kMaxConvSpatialAxes) {
      for (auto *list : {&g.image, &g.grid, &g.kernel, &g.stride, &g.dilation})
        list->push_back(1);
      g.padding.push_back(0);
    }
    std::vector<KernelArg> args = {KernelArg::buffer(op->getOperand(0)),
                                   KernelArg::buffer(op->getResult(0))};
    for (int64_t v : {g.batch, g.channels, g.groups})
      args.push_back(KernelArg::integer(v));
    for (const auto *list :
         {&g.image, &g.grid, &g.kernel, &g.stride, &g.padding, &g.dilation})
      for (int64_t v : *list)
        args.push_back(KernelArg::integer(v));
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
