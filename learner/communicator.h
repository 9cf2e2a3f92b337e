// Communicator: the few collectives data-parallel learners need (all-reduce, broadcast,
// point-to-point buffers, barrier), behind one interface so the learners do not care whether
// Gloo (CPU tensors) or NCCL (CUDA tensors) moves the bytes. Every call is a collective or a
// matched send/recv: all ranks must make the same calls in the same order. A peer that died or
// stays silent past the communicator's timeout makes the call throw CommunicatorError.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

namespace rlx {

// A collective failed (a peer died, a timeout passed); the group is unusable afterwards.
class CommunicatorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ReduceOp { kSum, kMax, kMin };

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The device whose tensors this communicator moves (kCPU for Gloo, a CUDA device for NCCL).
  virtual torch::Device device() const = 0;

  // Reduces a contiguous float32/float64 tensor over all ranks in place.
  virtual void allreduce(torch::Tensor& tensor, ReduceOp op = ReduceOp::kSum) = 0;
  // Copies root's contiguous tensor into every rank's tensor of the same shape and dtype.
  virtual void broadcast(torch::Tensor& tensor, int root) = 0;
  // Sends a contiguous tensor to rank dst; the receiver must recv a tensor of the same size.
  virtual void send(const torch::Tensor& tensor, int dst) = 0;
  // Receives into a contiguous tensor from rank src.
  virtual void recv(torch::Tensor& tensor, int src) = 0;
  // Returns when every rank has called it.
  virtual void barrier() = 0;
  // The group is being left without a word to the peers (it failed, or an elastic group is
  // re-formed): later calls may throw, and destruction must not wait for a peer.
  virtual void abandon() {}
};

// Reduces host doubles over all ranks in place (through a tensor on the communicator's device).
void allreduce_host(Communicator& comm, std::vector<double>& values, ReduceOp op = ReduceOp::kSum);

// Sends bytes to dst (their size first, so the receiver need not know it).
void send_bytes(Communicator& comm, const std::string& bytes, int dst);
// Receives what send_bytes sent from src.
std::string recv_bytes(Communicator& comm, int src);
// Root's bytes on every rank (bytes is input on root, output elsewhere).
void broadcast_bytes(Communicator& comm, std::string& bytes, int root);

}  // namespace rlx
