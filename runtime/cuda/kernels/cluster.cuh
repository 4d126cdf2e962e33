// cluster.cuh: what the kernels that split one unit of work (a long row, a channel)
// over the blocks of a Hopper thread-block cluster share: a block's rank and its
// cluster's place in the grid, the cluster barrier, reads of another block's shared
// memory (distributed shared memory), and the combination of the blocks' values in
// rank order, so that every block of the cluster gets the same bits. Parts is the
// cluster's size, a compile-time constant of the entry point (__cluster_dims__); Parts
// = 1 is a block alone, with none of these instructions. Used by softmax.cuh's staged
// long rows (Parts = 2) and batchnorm.cuh's channels (Parts = 8).
#ifndef VOUCH_RUNTIME_CUDA_KERNELS_CLUSTER_CUH_
#define VOUCH_RUNTIME_CUDA_KERNELS_CLUSTER_CUH_

namespace vouch {

// This block's rank in its cluster, the cluster's index and the clusters (Parts > 1);
// for Parts = 1: 0, the block's index and the blocks.
// (Clusters need sm_90: compiling Parts = 2 for an older GPU fails in ptxas.)
template <int Parts>
__device__ inline void cluster_position(unsigned& rank, long long& first, long long& step) {
  if constexpr (Parts > 1) {
    unsigned r, id, count;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(id));
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(count));
    rank = r, first = id, step = count;
  } else {
    rank = 0, first = blockIdx.x, step = gridDim.x;
  }
}

// Every thread of the cluster's blocks waits until all have arrived; shared memory
// written before is visible to the cluster after (release / acquire).
__device__ inline void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
          : "memory");
}

// The value at `mine` (shared memory) in the cluster's block of rank `rank`.
template <class T>
__device__ inline T load_from_rank(const T* mine, unsigned rank) {
  const unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(mine));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  T v;
  if constexpr (sizeof(T) == 8)
    asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(remote) : "memory");
  else
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
}

// The combination of the cluster's blocks' values v (each block's, the same in all
// its threads), rank 0's first: every block gets the same bits. `slot` (shared) holds
// this block's v for the others; Parts = 1: v.
template <int Parts, class T, class Combine>
__device__ inline T combine_parts(T v, Combine combine, T* slot, unsigned rank) {
  if constexpr (Parts == 1) {
    return v;
  } else {
    if (threadIdx.x == 0) *slot = v;
    cluster_sync();
    T total = rank == 0 ? v : load_from_rank(slot, 0);
    for (unsigned r = 1; r < Parts; ++r) total = combine(total, r == rank ? v : load_from_rank(slot, r));
    return total;
  }
}

}  // namespace vouch

#endif  // VOUCH_RUNTIME_CUDA_KERNELS_CLUSTER_CUH_
