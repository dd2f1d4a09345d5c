// The scale-only GPU replicas' catalogue (gpu_scale_replicas.h): names, bugs, targets; compiled into
// every build so that a build without CUDA still lists them and says why they cannot run.
#include "adapters/replicas/gpu/gpu_scale_replicas.h"

namespace gnncheck {

std::vector<GpuScaleReplicaInfo> gpu_scale_replica_catalogue() {
  return {
      {"gpu_scale_int32_edge_offsets",
       "spmm forward reads the CSR offsets narrowed to int32: a row whose offsets pass 2^31 (negative once narrowed) is "
       "taken for a malformed, empty row and its output left 0",
       "spmm", "graphs of more than 2^31 edges (Kronecker scale 27), rows past edge 2^31",
       "gnncheck scale --system gpu_scale_int32_edge_offsets --target spmm --graph kronecker:27 --rows 1000 --expect caught"},
      {"gpu_scale_softmax_no_max_on_hubs",
       "edge softmax whose long-row path (rows of more than 10^4 edges) skips the max subtraction: exp(s)/Σexp(s) in "
       "float32, Inf/Inf = NaN once a logit passes 88.7, and a sum past 3.4·10^38 (alpha 0) below that; rows of at most "
       "10^4 edges subtract the max and are right at any logit scale",
       "edge_softmax", "rows of more than 10^4 edges with logits beyond float32's exp range (--magnitude 100)",
       "gnncheck scale --system gpu_scale_softmax_no_max_on_hubs --target edge_softmax --graph kronecker:25 --rows 100 "
       "--magnitude 100 --expect caught"},
      {"gpu_scale_race_on_hubs",
       "spmm backward (the Aᵀ walk) splits rows of Aᵀ with more than 10^5 entries into chunks of 2^15 combined by a "
       "racy read-modify-write: one chunk's partial sum per such row is lost (which one: a hash of the row)",
       "spmm", "rows of Aᵀ with more than 10^5 entries (Kronecker scale 25 and up)",
       "gnncheck scale --system gpu_scale_race_on_hubs --target spmm --graph kronecker:25 --rows 10000 --expect caught"},
  };
}

}  // namespace gnncheck
