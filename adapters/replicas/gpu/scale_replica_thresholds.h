// gnncheck/adapters/replicas/gpu/scale_replica_thresholds.h — where the scale-only GPU replicas'
// bugs fire (gpu_scale_replicas.h); a header of constants alone, so the kernels (nvcc) and the
// catalogue (any build) read the same values.
#pragma once

#include <cstdint>

namespace gnncheck {

inline constexpr std::int64_t softmax_long_row_degree = 10'000;   // rows above this take the no-max path
inline constexpr std::int64_t race_column_length = 100'000;       // rows of Aᵀ above this lose one chunk
inline constexpr std::int64_t race_chunk_entries = std::int64_t{1} << 15;

}  // namespace gnncheck
