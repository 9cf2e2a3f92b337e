#include "learner/gloo_communicator.h"

#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/error_text.h"

namespace rlx {

namespace {

c10d::ReduceOp to_c10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return c10d::ReduceOp::SUM;
    case ReduceOp::kMax: return c10d::ReduceOp::MAX;
    case ReduceOp::kMin: return c10d::ReduceOp::MIN;
  }
  return c10d::ReduceOp::SUM;
}

void require_cpu_contiguous(const torch::Tensor& tensor, const char* what) {
  if (!tensor.defined() || !tensor.device().is_cpu() || !tensor.is_contiguous()) {
    throw std::invalid_argument(std::string("GlooCommunicator::") + what + " needs a defined contiguous CPU tensor");
  }
}

// Starts work and waits for it, turning Gloo's errors (thrown as the work starts, e.g. a send to
// a peer whose connection closed, or as it is awaited) and timeouts into CommunicatorError.
template <typename Start>
void finish(Start start, std::chrono::milliseconds timeout, const std::string& what) {
  bool done = false;
  try {
    const c10::intrusive_ptr<c10d::Work> work = start();
    done = work->wait(timeout);
  } catch (const std::exception& e) {
    throw CommunicatorError("gloo " + what + " failed (a learner rank died or left?): " + error_text(e));
  }
  if (!done) throw CommunicatorError("gloo " + what + " timed out after " + std::to_string(timeout.count()) + " ms");
}

}  // namespace

namespace {

// This host's address on the route to `host` (a UDP socket "connected" there sends nothing, but
// the kernel picks the source address); nullopt when host does not resolve or has no route.
std::optional<std::string> local_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0 || found == nullptr) return std::nullopt;
  std::optional<std::string> address;
  for (addrinfo* candidate = found; candidate != nullptr && !address; candidate = candidate->ai_next) {
    const int fd = ::socket(candidate->ai_family, SOCK_DGRAM, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    char text[INET6_ADDRSTRLEN] = {};
    if (::connect(fd, candidate->ai_addr, candidate->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
      const void* raw = local.ss_family == AF_INET6
                            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                            : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
      if (::inet_ntop(local.ss_family, raw, text, sizeof(text)) != nullptr) address = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return address;
}

}  // namespace

GlooEndpoint gloo_endpoint_from_environment(const std::string& master_addr) {
  GlooEndpoint endpoint;
  if (const char* names = std::getenv("GLOO_SOCKET_IFNAME"); names != nullptr && *names != '\0') {
    const std::string list(names);
    endpoint.interface = list.substr(0, list.find(','));
    return endpoint;
  }
  if (std::optional<std::string> address = local_address_towards(master_addr)) {
    endpoint.hostname = *address;
    return endpoint;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') endpoint.hostname = host;
  return endpoint;
}

GlooCommunicator::GlooCommunicator(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout, const GlooEndpoint& endpoint)
    : rank_(rank), size_(size), timeout_(timeout) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw std::invalid_argument("GlooCommunicator: rank " + std::to_string(rank) + " outside a group of " + std::to_string(size));
  }
  try {
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    options->devices.push_back(endpoint.interface.empty()
                                   ? c10d::ProcessGroupGloo::createDeviceForHostname(endpoint.hostname)
                                   : c10d::ProcessGroupGloo::createDeviceForInterface(endpoint.interface));
    options->threads = 1;
    group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
  } catch (const std::exception& e) {
    const std::string where = endpoint.interface.empty() ? "host " + endpoint.hostname
                                                         : "interface " + endpoint.interface + " (GLOO_SOCKET_IFNAME)";
    throw CommunicatorError("gloo rendezvous of rank " + std::to_string(rank) + " of " + std::to_string(size) + " on " +
                            where + " failed: " + error_text(e));
  }
}

GlooCommunicator::~GlooCommunicator() = default;

void GlooCommunicator::allreduce(torch::Tensor& tensor, ReduceOp op) {
  require_cpu_contiguous(tensor, "allreduce");
  if (size_ == 1) return;
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = to_c10d(op);
  options.timeout = timeout_;
  finish([&] { return group_->allreduce(tensors, options); }, timeout_, "allreduce");
}

void GlooCommunicator::broadcast(torch::Tensor& tensor, int root) {
  require_cpu_contiguous(tensor, "broadcast");
  if (size_ == 1) return;
  std::vector<at::Tensor> tensors{tensor};
  c10d::BroadcastOptions options;
  options.rootRank = root;
  options.timeout = timeout_;
  finish([&] { return group_->broadcast(tensors, options); }, timeout_, "broadcast");
}

void GlooCommunicator::send(const torch::Tensor& tensor, int dst) {
  require_cpu_contiguous(tensor, "send");
  std::vector<at::Tensor> tensors{tensor};
  finish([&] { return group_->send(tensors, dst, /*tag=*/0); }, timeout_, "send to rank " + std::to_string(dst));
}

void GlooCommunicator::recv(torch::Tensor& tensor, int src) {
  require_cpu_contiguous(tensor, "recv");
  std::vector<at::Tensor> tensors{tensor};
  finish([&] { return group_->recv(tensors, src, /*tag=*/0); }, timeout_, "recv from rank " + std::to_string(src));
}

void GlooCommunicator::barrier() {
  if (size_ == 1) return;
  c10d::BarrierOptions options;
  options.timeout = timeout_;
  finish([&] { return group_->barrier(options); }, timeout_, "barrier");
}

}  // namespace rlx
