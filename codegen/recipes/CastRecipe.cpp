//===- CastRecipe.cpp - cast between the run's real type and int32 -*- C++ -*-===//
//
// cast(x, f32|f64|i32): one elementwise kernel whose entry point's pointer
// types follow the op's element types (reals are the run's T, i32 and i1 are
// int32 buffers): runtime/cpu_kernels.h's cast<T> on cpu, cast.cuh's
// cast_kernel on cuda (grid-stride, block 256). The variant's name says which
// conversion it is (cast_rr, cast_ri, cast_ir, cast_ii), so each is emitted
// once however many ops use it.
//
//===----------------------------------------------------------------------===//
#include "codegen/recipes/Recipe.h"

#include "codegen/EmitSupport.h"

using namespace mlir;

namespace vouch::codegen {
namespace {

std::string castSource(bool cuda, bool inInt, bool outInt) {
  if (!cuda) {
    std::string in = inInt ? "nullptr, static_cast<const int32_t*>(args[0].ptr)"
                           : "static_cast<const T*>(args[0].ptr), nullptr";
    std::string out = outInt ? "nullptr, static_cast<int32_t*>(args[1].ptr)"
                             : "static_cast<T*>(args[1].ptr), nullptr";
    return "template <class T>\nvoid @NAME@(const vouch::rt::ArgValue* args) {\n"
           "  vouch::rt::cast<T>(" + in + ", " + out + ", args[2].i);\n}\n";
  }
  std::string source = "#include \"cast.cuh\"\n";
  for (auto [realType, realSuffix] : kCudaRealTypes) {
    const std::string type = realType, suffix = realSuffix;
    std::string inType = inInt ? "int" : type, outType = outInt ? "int" : type;
    source += "extern \"C\" __global__ void @NAME@_" + suffix + "(const " + inType +
              "* in, " + outType + "* out, long long n) {\n  vouch::cast_kernel<" +
              type + ">(" + (inInt ? "nullptr, in, " : "in, nullptr, ") +
              (outInt ? "nullptr, out, " : "out, nullptr, ") + "n);\n}\n";
  }
  return source;
}

class CastRecipe final : public KernelRecipe {
public:
  StringRef name() const override { return "cast"; }
  bool handles(Operation *op) const override { return isa<CastOp>(op); }

  LogicalResult emit(const StepGroup &group,
                     ProgramBuilder &builder) const override {
    auto op = cast<CastOp>(group.ops.front());
    bool cuda = builder.target() == Target::Cuda;
    bool inInt = storedAsInt32(op.getInput()), outInt = storedAsInt32(op.getResult());
    std::string variant = std::string("cast_") + (inInt ? "i" : "r") + (outInt ? "i" : "r");
    int32_t kernel = builder.kernel(variant, castSource(cuda, inInt, outInt));
    int64_t n = numel(op.getResult());
    addGridStrideStep(builder, kernel,
                      {KernelArg::buffer(op.getInput()),
                       KernelArg::buffer(op.getResult()), KernelArg::integer(n)},
                      n);
    return success();
  }
};

const CastRecipe recipe;
// Before the index family's recipe, which claims the family (cast is an
// index-family op: each result element reads one input element).
const RecipeRegistration registration(&recipe, 5);


} // namespace

} // namespace vouch::codegen
