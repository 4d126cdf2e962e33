// implicit_tiles.h: the tiles of the implicit-GEMM convolution kernels (col2im_matmul.cuh),
// in plain integers so the compiler's recipe (codegen/recipes/ConvRecipe.cpp), which has
// its own ConvGeometry, sizes the launch from the same numbers as the kernels. Plain C++
// that also compiles as CUDA device code; conv_geometry.h's conv_implicit_* apply it.
//
// A block of kImplicitThreads threads computes a tile of kImplicitTileChannels image
// channels of one group by kImplicitTileColumns image positions (n, p); the 1-D grid has
// a block per tile: block b is column tile b mod T, then channel tile, then group (T the
// column tiles), so neighbouring blocks share a group's lhs rows.
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_IMPLICIT_TILES_H_
#define VOUCH_RUNTIME_CUDA_KERNELS_IMPLICIT_TILES_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VOUCH_TILES_HD __host__ __device__
#else
#define VOUCH_TILES_HD
#endif

namespace vouch {

constexpr long long kImplicitTileChannels = 64, kImplicitTileColumns = 128;
constexpr int kImplicitThreads = 256;

// Channel tiles of a group of `channels_per_group`, column tiles over `columns` = N · the
// image's spatial positions, and the grid: groups · channel tiles · column tiles.
VOUCH_TILES_HD inline long long implicit_channel_tiles(long long channels_per_group) {
  return (channels_per_group + kImplicitTileChannels - 1) / kImplicitTileChannels;
}
VOUCH_TILES_HD inline long long implicit_column_tiles(long long columns) {
  return (columns + kImplicitTileColumns - 1) / kImplicitTileColumns;
}
VOUCH_TILES_HD inline long long implicit_tiles(long long groups, long long channels_per_group,
                                               long long columns) {
  return groups * implicit_channel_tiles(channels_per_group) * implicit_column_tiles(columns);
}

}  // namespace vouch

#undef VOUCH_TILES_HD

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_IMPLICIT_TILES_H_
