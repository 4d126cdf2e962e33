//===- Recipe.h - how one family of ops becomes steps -----------*- C++ -*-===//
//
// A kernel recipe knows, for one family of ops, how to emit their cpu code,
// their cuda kernel instantiation and the step that runs it (tinygrad's "a
// backend is a table with a row per op family"; llm.c's "a kernel is a
// readable file with its launcher"). Codegen reaches a recipe only through a
// planned capsule: the recipe that handles the capsule's provider on the
// target is bound to it with capsules::ExecutableKernel, so a capsule with
// no handler is a compile-time error naming it, and no recipe runs under
// another capsule's name.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_RECIPES_RECIPE_H
#define VOUCH_CODEGEN_RECIPES_RECIPE_H

#include <string>
#include <vector>

#include "capsules/AcceptedPlan.h"
#include "codegen/ProgramBuilder.h"
#include "ir/OpTable.h"

namespace vouch::codegen {

/// The ops one step computes: a single op, a fused pointwise group
/// (vouch.fusion_group), or an op and the rounding of its bf16 twin
/// (bf16TwinStoreOf), with their planned entries.
struct StepGroup {
  llvm::SmallVector<mlir::Operation *> ops;
  std::vector<const capsules::PlannedOp *> planned;
};

class KernelRecipe {
public:
  virtual ~KernelRecipe() = default;
  /// The handler's name in bindings and errors, e.g. "pointwise".
  virtual llvm::StringRef name() const = 0;
  /// The provider this recipe runs on `target` (the handler identity that
  /// ExecutableKernel checks against the planned capsule): by default vouch's
  /// own kernels, reference on cpu and native-cuda on cuda.
  virtual capsules::Provider provider(mlir::Operation *op, Target target) const {
    return target == Target::Cuda ? capsules::Provider::NativeCuda
                                  : capsules::Provider::Reference;
  }
  /// Whether this recipe computes `op` (its family; a fused op is always
  /// the pointwise recipe's).
  virtual bool handles(mlir::Operation *op) const = 0;
  /// The operand whose storage `op`'s result shares (no step computes it),
  /// or a null Value: a view, or a sum over axes of extent 1.
  virtual mlir::Value aliasOf(mlir::Operation *op) const { return {}; }
  /// Whether this recipe computes fused groups (vouch.fusion_group): the
  /// pointwise recipe's kernels take a chain of ops.
  virtual bool computesFusedGroups() const { return false; }
  /// Appends the group's steps (none, for a view).
  virtual mlir::LogicalResult emit(const StepGroup &group,
                                   ProgramBuilder &builder) const = 0;
};

/// Every registered recipe, in lookup order (lower priority first).
const std::vector<const KernelRecipe *> &kernelRecipes();

/// The recipe that computes `op`: the first that handles it, and, for an op
/// of a fused pointwise group (vouch.fusion_group), computes fused groups; for
/// a bf16 twin's rounding, its op's recipe. Null when none does.
const KernelRecipe *recipeFor(mlir::Operation *op);

/// The recipe that computes `op` as `provider` on `target` (the planned
/// capsule's provider: a family may have a library recipe and a native one);
/// recipeFor(op) when none matches, so that binding reports the mismatch.
const KernelRecipe *recipeFor(mlir::Operation *op, Target target,
                              capsules::Provider provider);

/// Registers a recipe when the program starts; each recipe file ends with
/// one (`static const RecipeRegistration registration(&recipe);`), so a new
/// recipe is a new file and nothing else (codegen is linked whole:
/// alwayslink). A lower priority is asked first.
struct RecipeRegistration {
  explicit RecipeRegistration(const KernelRecipe *recipe, int priority = 10);
};

/// The op table's family of `op` (Structural for an op without a row).
OpFamily familyOf(mlir::Operation *op);

/// Whether `op` stores its bf16Result (the op table's) as bf16: that result's
/// type is bf16, as vouch-round-bf16-operands makes it. Such a result has
/// only a cuda kernel's f32 entry point: an error on cpu.
mlir::FailureOr<bool> storesBf16Result(mlir::Operation *op, bool cuda);

/// The bf16 twin the group's op stores beside its result: the result of the
/// vouch.round_bf16 that vouch-round-bf16-operands fused with the op (the op
/// table's bf16Twin; passes/Plan.h's bf16TwinProducer), or a null Value. Such a
/// group is emitted by the op's recipe, its kernel storing both (cuda only).
mlir::Value bf16TwinStoreOf(const StepGroup &group);

/// The real element types of a kernel's cuda entry points, each with the
/// suffix of its entry's name (`@NAME@_f32`, `@NAME@_f64`): what a recipe
/// loops over to write one entry per type.
struct CudaRealType {
  const char *type, *suffix;
};
inline constexpr CudaRealType kCudaRealTypes[] = {{"float", "f32"},
                                                  {"double", "f64"}};

/// Elements the copy kernels' quad twins move at a time (common.cuh's Quad).
inline constexpr int64_t kQuadElements = 4;

/// `source` with every `@KERNEL@` replaced by `kernel`: one entry-point
/// template for the kernels of a family that take the same arguments.
std::string withKernel(std::string source, llvm::StringRef kernel);

/// The extents of `shape` before and after `axis` (a tensor seen as [outer,
/// n, inner] around the axis).
void splitAt(llvm::ArrayRef<int64_t> shape, int64_t axis, int64_t &outer,
             int64_t &inner);

/// Launch grid of a grid-stride kernel over `lanes` work items (256
/// threads a block, at most 1056 blocks: 8 per SM of an H200).
uint32_t gridStrideBlocks(int64_t lanes);

/// Adds a step of a grid-stride kernel over `lanes` work items: on cuda
/// gridStrideBlocks(lanes) blocks of 256, on cpu no launch shape.
void addGridStrideStep(ProgramBuilder &builder, int32_t kernel,
                       llvm::ArrayRef<KernelArg> args, int64_t lanes);

/// The launch of contiguous rows of n f32 elements too long for the register
/// path (softmax.cuh's long_rows_staged, classifier.cuh's dlogits): each row
/// staged in shared memory by a thread-block cluster of two blocks of 512,
/// half a row each (long_row_part_bytes(n, 4, 2), mirrored: 100 KB at 50257),
/// two such blocks resident per SM, grid 2 * rows capped at four blocks per SM
/// (measured fastest at [8192, 50257]: softmax 1017 us, against about 1070 at
/// two blocks per SM and 1138 for a block of 1024 holding the whole row,
/// docs/performance.md); the entry points carry
/// kLongRowEntry and Parts = 2. Rows whose half does not fit the largest
/// block a GPU offers (227 KB: f32 rows beyond about 116,000) take the same
/// launch without shared memory; the executor gives a device with less none,
/// and f64 rows (twice the bytes) do not fit what is given: the kernels check
/// and take their unstaged long-row path, each block a row of its own.
struct LongRowLaunch {
  uint32_t grid, threads, sharedBytes, blocksPerSM;
};
LongRowLaunch longRowLaunch(int64_t rows, int64_t n);
/// The attributes of longRowLaunch's entry points (clusters need sm_90).
inline constexpr const char *kLongRowEntry =
    "__cluster_dims__(2, 1, 1) __launch_bounds__(512, 2) ";
/// The template argument of the blocks that stage a row (Parts).
inline constexpr int kLongRowParts = 2;

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_RECIPES_RECIPE_H
