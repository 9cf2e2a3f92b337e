#include "learner/communicator.h"

#include <cstring>

namespace rlx {

void allreduce_host(Communicator& comm, std::vector<double>& values, ReduceOp op) {
  if (values.empty()) return;
  torch::Tensor t = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())}, torch::kDouble)
                        .to(comm.device(), torch::kDouble, /*non_blocking=*/false, /*copy=*/true);
  comm.allreduce(t, op);
  const torch::Tensor host = t.to(torch::kCPU).contiguous();
  std::memcpy(values.data(), host.data_ptr<double>(), values.size() * sizeof(double));
}

namespace {

torch::Tensor byte_tensor(int64_t size, torch::Device device) {
  return torch::empty({size}, torch::TensorOptions().dtype(torch::kUInt8).device(device));
}

torch::Tensor to_comm_device(const std::string& bytes, torch::Device device) {
  torch::Tensor host = byte_tensor(static_cast<int64_t>(bytes.size()), torch::kCPU);
  if (!bytes.empty()) std::memcpy(host.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return device.is_cpu() ? host : host.to(device);
}

std::string from_comm_device(const torch::Tensor& tensor) {
  const torch::Tensor host = tensor.to(torch::kCPU).contiguous();
  return std::string(reinterpret_cast<const char*>(host.data_ptr<uint8_t>()), static_cast<size_t>(host.numel()));
}

}  // namespace

void send_bytes(Communicator& comm, const std::string& bytes, int dst) {
  torch::Tensor size = torch::full({1}, static_cast<int64_t>(bytes.size()), torch::kLong).to(comm.device());
  comm.send(size, dst);
  if (!bytes.empty()) comm.send(to_comm_device(bytes, comm.device()), dst);
}

std::string recv_bytes(Communicator& comm, int src) {
  torch::Tensor size = torch::zeros({1}, torch::kLong).to(comm.device());
  comm.recv(size, src);
  const int64_t n = size.to(torch::kCPU).item<int64_t>();
  if (n < 0) throw CommunicatorError("recv_bytes: rank " + std::to_string(src) + " announced a negative size");
  if (n == 0) return {};
  torch::Tensor data = byte_tensor(n, comm.device());
  comm.recv(data, src);
  return from_comm_device(data);
}

void broadcast_bytes(Communicator& comm, std::string& bytes, int root) {
  torch::Tensor size = torch::full({1}, static_cast<int64_t>(bytes.size()), torch::kLong).to(comm.device());
  comm.broadcast(size, root);
  const int64_t n = size.to(torch::kCPU).item<int64_t>();
  if (n == 0) {
    bytes.clear();
    return;
  }
  torch::Tensor data = comm.rank() == root ? to_comm_device(bytes, comm.device()) : byte_tensor(n, comm.device());
  comm.broadcast(data, root);
  if (comm.rank() != root) bytes = from_comm_device(data);
}

}  // namespace rlx
