// gnncheck/gpu/storage_format.cuh — the formats cuSPARSE reads and writes the reference's tensors
// in, and the conversions between them and the float32 tensors of a TargetRun.
//
//   StorageFormat::float32   the tensors as they are (the `cusparse` system)
//   StorageFormat::float16   IEEE binary16, CUDA_R_16F (the `cusparse_float16` system)
//   StorageFormat::bfloat16  bfloat16, CUDA_R_16BF (the `cusparse_bfloat16` system)
// Sums are float32 in every format (cuSPARSE's computeType CUDA_R_32F). round_to_storage rounds
// each float32 value to nearest (ties to even; beyond the format's range: ±∞); widen_from_storage
// is exact. Both are no-ops on n = 0.
//
//   DeviceBuffer<unsigned char> x16(ctx.allocator, n * element_bytes(StorageFormat::float16));
//   round_to_storage(ctx, StorageFormat::float16, d_x, n, x16.data());
#pragma once

#include <cstddef>
#include <cstdint>

#include <library_types.h>

#include "gpu/context.h"

namespace gnncheck::gpu {

enum class StorageFormat { float32, float16, bfloat16 };

inline std::size_t element_bytes(StorageFormat f) { return f == StorageFormat::float32 ? 4 : 2; }

inline cudaDataType cuda_data_type(StorageFormat f) {
  switch (f) {
    case StorageFormat::float32: return CUDA_R_32F;
    case StorageFormat::float16: return CUDA_R_16F;
    case StorageFormat::bfloat16: return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

// out [n] (in `format`) = in [n] rounded to nearest; for float32 a copy.
void round_to_storage(GpuContext& ctx, StorageFormat format, const float* in, std::int64_t n, void* out);
// out [n] = in [n] (in `format`) as float32, exactly.
void widen_from_storage(GpuContext& ctx, StorageFormat format, const void* in, std::int64_t n, float* out);

}  // namespace gnncheck::gpu
