// GlooCommunicator: Communicator over LibTorch's c10d ProcessGroupGloo, for CPU tensors (and the
// host-side control traffic of every data-parallel group). Rendezvous goes through a c10d Store
// (a TCPStore hosted by rank 0 across processes, a HashStore between threads in tests).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "learner/communicator.h"

namespace c10d {
class Store;
class ProcessGroupGloo;
}  // namespace c10d

namespace rlx {

// Where this rank's Gloo device listens: the network interface named `interface` when set
// (GLOO_SOCKET_IFNAME), else the address `hostname` resolves to.
struct GlooEndpoint {
  std::string interface;
  std::string hostname = "127.0.0.1";  // loopback: every rank on this host
};

// The endpoint for ranks that meet at rank 0's host `master_addr`: GLOO_SOCKET_IFNAME's
// interface when it is set (the first of a comma-separated list), else this host's address on
// the route to master_addr (loopback when master_addr is this host), else this host's name.
GlooEndpoint gloo_endpoint_from_environment(const std::string& master_addr);

class GlooCommunicator : public Communicator {
 public:
  // Joins the group of `size` ranks through store (every rank calls this with the same store
  // contents); Gloo connects over loopback by default, or over `endpoint`'s interface. Every
  // later call throws CommunicatorError after `timeout` without its peers. Throws
  // CommunicatorError when the rendezvous fails (naming the interface or host).
  GlooCommunicator(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout,
                   const GlooEndpoint& endpoint = {});
  ~GlooCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  torch::Device device() const override { return torch::kCPU; }
  void allreduce(torch::Tensor& tensor, ReduceOp op = ReduceOp::kSum) override;
  void broadcast(torch::Tensor& tensor, int root) override;
  void send(const torch::Tensor& tensor, int dst) override;
  void recv(torch::Tensor& tensor, int src) override;
  void barrier() override;

 private:
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

}  // namespace rlx
