#include "gpu/device_tensor.h"

namespace gnncheck::gpu {

DeviceTensor::DeviceTensor(GpuContext& ctx, std::vector<index_t> shape)
    : shape_(std::move(shape)), buffer_(ctx.allocator, shape_size(shape_)) {
  buffer_.zero(ctx.stream);
}

DeviceTensor DeviceTensor::upload(GpuContext& ctx, const Tensor& host) {
  DeviceTensor t;
  t.shape_ = host.shape();
  t.buffer_ = DeviceBuffer<float>(ctx.allocator, host.size());
  const std::vector<float> values(host.values().begin(), host.values().end());
  t.buffer_.upload(values, ctx.stream);
  ctx.synchronize();  // `values` dies on return
  return t;
}

Tensor DeviceTensor::download(GpuContext& ctx) const {
  const std::vector<float> values = buffer_.download(ctx.stream);
  return Tensor(shape_, std::vector<double>(values.begin(), values.end()));
}

}  // namespace gnncheck::gpu
