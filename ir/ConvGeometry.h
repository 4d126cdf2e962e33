//===- ConvGeometry.h - the one derivation of a convolution's windows -*- C++ -*-===//
//
// A convolution's window geometry (docs/language.md, "Convolution"): an image
// [N, C, *spatial] with 1 to 3 spatial axes, windows of `kernel` extents with
// `stride`, `padding` and `dilation` per axis, the channels split into
// `groups`, and the grid of windows taken (the columns' trailing extents).
// The shape rules of conv, conv_transpose, im2col, col2im and col2im_matmul
// (VouchOps.cpp), codegen's recipe (codegen/recipes/ConvRecipe.cpp) and the
// gate's index obligation read it from here. (The reference interpreter computes the ops
// with loops of its own.)
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_IR_CONVGEOMETRY_H
#define VOUCH_IR_CONVGEOMETRY_H

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "ir/VouchOps.h"
#include "llvm/ADT/SmallVector.h"

namespace vouch {

/// The spatial axes a convolution takes (conv1d to conv3d); the kernels
/// (runtime/cuda/kernels/conv_geometry.h) pad fewer to three with extent 1.
inline constexpr int64_t kMaxConvSpatialAxes = 3;

/// The windows along one axis of extent `in` that fit the padded extent:
/// ⌊(in + 2·padding − dilation·(kernel − 1) − 1) / stride⌋ + 1, or a number
/// ≤ 0 when the dilated kernel is longer than the padded axis. Arguments are
/// those a verifier accepted (positive kernel, stride, dilation; padding
/// ≥ 0); computed in 128 bits, the result saturated to int64.
inline int64_t convWindowsAlong(int64_t in, int64_t kernel, int64_t stride,
                                int64_t padding, int64_t dilation) {
  __int128 span = static_cast<__int128>(dilation) * (kernel - 1) + 1;
  __int128 room = static_cast<__int128>(in) + 2 * static_cast<__int128>(padding);
  if (span > room)
    return room - span < std::numeric_limits<int64_t>::min()
               ? std::numeric_limits<int64_t>::min()
               : static_cast<int64_t>(room - span);
  __int128 windows = (room - span) / stride + 1;
  return windows > std::numeric_limits<int64_t>::max()
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(windows);
}

/// An im2col's or col2im's geometry: the image side [N, C, *image] and the
/// columns' [G, C/G·K, N, *grid].
struct ConvGeometry {
  int64_t batch = 0, channels = 0, groups = 1;
  llvm::SmallVector<int64_t, 3> image, grid, kernel, stride, padding, dilation;

  int64_t spatialAxes() const { return static_cast<int64_t>(image.size()); }

  /// The products the kernels index with, each saturating at UINT64_MAX,
  /// named as the gate's UInt32 obligation words them.
  void indexCounts(
      llvm::SmallVectorImpl<std::pair<std::string, uint64_t>> &out) const {
    auto product = [](std::initializer_list<llvm::ArrayRef<int64_t>> lists,
                      std::initializer_list<int64_t> scalars) {
      unsigned __int128 p = 1;
      const unsigned __int128 cap = std::numeric_limits<uint64_t>::max();
      auto times = [&](int64_t v) {
        p *= static_cast<uint64_t>(v < 0 ? 0 : v);
        if (p > cap)
          p = cap;
      };
      for (llvm::ArrayRef<int64_t> list : lists)
        for (int64_t v : list)
          times(v);
      for (int64_t v : scalars)
        times(v);
      return static_cast<uint64_t>(p);
    };
    int64_t perGroup = groups > 0 ? channels / groups : 0;
    out.push_back({"the image's spatial positions (product of " +
                       formatList(image) + ")",
                   product({image}, {})});
    out.push_back({"a batch entry's elements (C · spatial positions)",
                   product({image}, {channels})});
    out.push_back({"the windows per image (product of the grid " +
                       formatList(grid) + ")",
                   product({grid}, {})});
    out.push_back({"the kernel's offsets (product of " + formatList(kernel) +
                       ")",
                   product({kernel}, {})});
    out.push_back({"the columns' rows per group (C/G · kernel offsets)",
                   product({kernel}, {perGroup})});
    out.push_back({"the columns per row (N · windows per image)",
                   product({grid}, {batch})});
    out.push_back({"a group's column elements (rows · columns)",
                   product({kernel, grid}, {perGroup, batch})});
  }
};

/// The geometry of an op with window attributes over `image` and `grid`.
template <class OpT>
ConvGeometry getConvGeometry(OpT op, mlir::RankedTensorType image,
                             llvm::ArrayRef<int64_t> grid) {
  ConvGeometry g;
  g.batch = image.getDimSize(0);
  g.channels = image.getDimSize(1);
  g.groups = op.getGroups();
  g.image.assign(image.getShape().begin() + 2, image.getShape().end());
  g.grid.assign(grid.begin(), grid.end());
  g.kernel.assign(op.getKernel().begin(), op.getKernel().end());
  g.stride.assign(op.getStride().begin(), op.getStride().end());
  g.padding.assign(op.getPadding().begin(), op.getPadding().end());
  g.dilation.assign(op.getDilation().begin(), op.getDilation().end());
  return g;
}

/// An im2col's (image: its input) or a col2im's (image: its result); the
/// grid is the columns' trailing extents.
inline ConvGeometry getConvGeometry(Im2colOp op) {
  return getConvGeometry(
      op, llvm::cast<mlir::RankedTensorType>(op.getInput().getType()),
      llvm::cast<mlir::RankedTensorType>(op.getResult().getType())
          .getShape()
          .drop_front(3));
}

inline ConvGeometry getConvGeometry(Col2imOp op) {
  return getConvGeometry(
      op, llvm::cast<mlir::RankedTensorType>(op.getResult().getType()),
      llvm::cast<mlir::RankedTensorType>(op.getInput().getType())
          .getShape()
          .drop_front(3));
}

/// A col2im_matmul's: its result is the image, its grid an attribute (its
/// columns are never a value).
inline ConvGeometry getConvGeometry(Col2imMatmulOp op) {
  return getConvGeometry(
      op, llvm::cast<mlir::RankedTensorType>(op.getResult().getType()),
      op.getGrid());
}

} // namespace vouch

#endif // VOUCH_IR_CONVGEOMETRY_H
