// HostilePeer: a test peer that speaks the worker protocol over a real socket (Join, Hello after
// the Welcome, waits for weights and credits) and then sends whatever a test hands it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "core/sample_batch.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/sockets.h"

namespace rlx::test {

class HostilePeer {
 public:
  // Connects a DEALER to endpoint; routing_id empty: the learner's ROUTER assigns one.
  HostilePeer(zmq::context_t& context, const std::string& endpoint, int64_t num_envs = 4,
              const std::string& routing_id = "")
      : num_envs_(num_envs) {
    socket_ = make_socket(context, zmq::socket_type::dealer);
    if (!routing_id.empty()) socket_.set(zmq::sockopt::routing_id, routing_id);
    socket_.connect(endpoint);
  }

  // Joins as a CartPole worker would; true once it holds weights and credits.
  bool join(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    send(encode_join(worker_id_, ++sequence_));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      read(std::chrono::milliseconds(50));
      if (welcomed_ && !hello_sent_) {
        Hello hello;
        hello.worker_id = worker_id_;
        hello.env_id = "CartPole-v1";
        hello.num_envs = num_envs_;
        hello.obs_size = 4;
        hello.num_actions = 2;
        hello.pid = 1;
        hello.hostname = "hostile";
        send(encode_hello(hello, ++sequence_));
        hello_sent_ = true;
      }
      if (hello_sent_ && latest_version_ > 0 && credits_ > 0) return true;
    }
    return false;
  }

  // Sends a fragment as is (worker_id stamped).
  void send_fragment(const SampleBatch& batch) {
    auto copy = std::make_shared<SampleBatch>(batch);
    copy->worker_id = worker_id_;
    send(encode_sample_fragment(copy, ++sequence_));
  }

  void send(std::vector<zmq::message_t> frames) { send_frames(socket_, frames, std::chrono::milliseconds(1000)); }

  // Reads what the learner sent for up to wait.
  void read(std::chrono::milliseconds wait) {
    auto frames = recv_frames(socket_, wait);
    while (frames) {
      DecodeResult result = decode_message(*frames);
      if (result.ok()) {
        if (std::holds_alternative<Welcome>(*result.message)) welcomed_ = true;
        if (auto* weights = std::get_if<Weights>(&*result.message)) latest_version_ = weights->policy_version;
        if (auto* grant = std::get_if<CreditGrant>(&*result.message)) credits_ += grant->credits;
        if (std::holds_alternative<Stop>(*result.message)) stopped_ = true;
      }
      frames = recv_frames(socket_, std::chrono::milliseconds(0));
    }
  }

  // The peer spent one credit (it sent a fragment it held one for).
  void use_credit() { --credits_; }

  uint64_t latest_version() const { return latest_version_; }
  int64_t credits() const { return credits_; }
  bool stopped() const { return stopped_; }
  zmq::socket_t& socket() { return socket_; }

 private:
  zmq::socket_t socket_;
  int64_t num_envs_;
  uint64_t worker_id_ = 666;
  uint64_t sequence_ = 0;
  bool welcomed_ = false;
  bool hello_sent_ = false;
  uint64_t latest_version_ = 0;
  int64_t credits_ = 0;
  bool stopped_ = false;
};

}  // namespace rlx::test
