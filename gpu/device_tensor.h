// gnncheck/gpu/device_tensor.h — a float32 device copy of a gnncheck Tensor, with its shape.
//
// Cases carry float64 tensors (oracle/case.h); the GPU reference computes in float32, so upload
// rounds each value to float32 once and download widens back to float64 exactly.
//
//   DeviceTensor x = DeviceTensor::upload(ctx, c.inputs.at("x"));
//   DeviceTensor y(ctx, {n_dst, f});                // zero-filled
//   Tensor host_y = y.download(ctx);
#pragma once

#include <vector>

#include "gpu/context.h"
#include "oracle/tensor.h"

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
  index_t row_size() const { return rows() == 0 ? 0 : size() / rows(); }
  float* data() { return buffer_.data(); }
  const float* data() const { return buffer_.data(); }

 private:
  std::vector<index_t> shape_;
  DeviceBuffer<float> buffer_;
};

}  // namespace gnncheck::gpu
