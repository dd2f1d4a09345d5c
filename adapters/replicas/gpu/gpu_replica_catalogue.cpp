// The GPU replicas' catalogue (gpu_replicas.h): names, bugs and targets only, compiled into every
// build, so that a build without CUDA still knows the names and can say why they cannot run. The
// kernels that carry the bugs are in gpu_replicas.cpp and replica_kernels.cu (CUDA builds only).
#include "adapters/replicas/gpu/gpu_replicas.h"

namespace gnncheck {

std::vector<GpuReplicaInfo> gpu_replica_catalogue() {
  return {
      {"gpu-replica-1", 1,
       "spmm backward kernel walks the forward's CSR: grad x = A·ḡ instead of Aᵀ·ḡ (square graphs only)", "adjoint",
       {"spmm"}},
      {"gpu-replica-5", 5,
       "attention backward walks the CSR with CSR-ordered edge tensors: spmm_ve's grad x = A_α·ḡ instead of "
       "A_αᵀ·ḡ, sddmm_add's grad b = row sums instead of column sums (square graphs only)",
       "adjoint", {"spmm_ve", "sddmm_add"}},
      {"gpu-replica-8", 8,
       "edge softmax kernel computes exp(s)/Σexp(s) without subtracting the row maximum, in float32", "numerics",
       {"edge_softmax"}},
      {"gpu-replica-10", 10,
       "spmm kernels (forward over the CSR, backward over the CSC) cover whole blocks of 32 feature columns "
       "only: the last (width mod 32) columns of y and grad x stay 0",
       "differential", {"spmm"}},
      {"gpu-replica-11", 11,
       "spmm_ve backward kernel walks the CSC and reads the attention at the CSC position, w[p] instead of "
       "w[edge_perm[p]] (missing eShuffle)",
       "differential", {"spmm_ve"}},
  };
}

}  // namespace gnncheck
