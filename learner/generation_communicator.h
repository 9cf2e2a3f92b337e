// GenerationCommunicator: the Communicator an elastic group's learners hold for good, while the
// group under it is re-formed: it forwards every call to the current generation's communicator
// (Gloo or NCCL), which swap() replaces. Between an abandon() and the next swap() every call
// throws CommunicatorError, as a call on a failed group does.
#pragma once

#include <memory>

#include "learner/communicator.h"

namespace rlx {

class GenerationCommunicator : public Communicator {
 public:
  explicit GenerationCommunicator(torch::Device device) : device_(device) {}

  // Makes `next` the communicator every call goes to (the previous one is released).
  void swap(std::unique_ptr<Communicator> next);
  // Releases the current communicator without talking to its peers (its generation failed or
  // ends); calls throw until the next swap().
  void abandon() override;
  bool formed() const { return current_ != nullptr; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  torch::Device device() const override { return device_; }
  void allreduce(torch::Tensor& tensor, ReduceOp op = ReduceOp::kSum) override { current().allreduce(tensor, op); }
  void broadcast(torch::Tensor& tensor, int root) override { current().broadcast(tensor, root); }
  void send(const torch::Tensor& tensor, int dst) override { current().send(tensor, dst); }
  void recv(torch::Tensor& tensor, int src) override { current().recv(tensor, src); }
  void barrier() override { current().barrier(); }

 private:
  Communicator& current();

  torch::Device device_;
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<Communicator> current_;
};

}  // namespace rlx
