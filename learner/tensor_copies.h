// Copies between host memory and LibTorch tensors on any device, never aliasing the source.
#pragma once

#include <vector>

#include <torch/types.h>

namespace rlx {

// A tensor of `type` on device holding a copy of the host values at data (laid out as sizes).
template <typename T>
torch::Tensor device_copy(const T* data, torch::IntArrayRef sizes, torch::ScalarType type, torch::Device device) {
  return torch::from_blob(const_cast<T*>(data), sizes, type).to(device, type, /*non_blocking=*/false, /*copy=*/true);
}

// The tensor's values as host float32, flattened.
inline std::vector<float> host_floats(const torch::Tensor& tensor) {
  const torch::Tensor host = tensor.detach().to(torch::kCPU, torch::kFloat).contiguous();
  return std::vector<float>(host.data_ptr<float>(), host.data_ptr<float>() + host.numel());
}

}  // namespace rlx
