// gnncheck/gpu/device_tensor.h — a float32 device copy of a gnncheck Tensor, with its shape.
//
// Cases carry float64 tensors (core/case.h); the GPU reference computes in float32, so upload
// rounds each value to float32 once and download widens back to float64 exactly.
//
//   DeviceTensor x = DeviceTensor::upload(ctx, c.inputs.at("x"));
//   DeviceTensor y(ctx, {n_dst, f});                // zero-filled
//   Tensor host_y = y.download(ctx);
#pragma once

#include <vector>

#include "gpu/context.h"
#include "core/tensor.h"

namespace gnncheck::gpu {

class DeviceTensor {
 public:
  DeviceTensor() = default;
  // A zero-filled tensor of `shape`.
  DeviceTensor(GpuContext& ctx, std::vector<index_t> shape);
  static DeviceTensor upload(GpuContext& ctx, const Tensor& host);

  Tensor download(GpuContext& ctx) const;

  const std::vector<index_t>& shape() const { return shape_; }
  index_t size() const { return buffer_.size(); }
  index_t rows() const { return shape_.empty() ? 1 : shape_[0]; }
  // The product of the trailing dimensions, from the shape: a [0, F] tensor has rows of F values
  // (dividing the size by the rows would give 0 and lose F on an empty graph).
  index_t row_size() const {
    index_t n = 1;
    for (size_t i = 1; i < shape_.size(); ++i) n *= shape_[i];
    return n;
  }
  float* data() { return buffer_.data(); }
  const float* data() const { return buffer_.data(); }

 private:
  std::vector<index_t> shape_;
  DeviceBuffer<float> buffer_;
};

}  // namespace gnncheck::gpu
