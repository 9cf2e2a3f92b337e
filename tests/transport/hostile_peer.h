// HostilePeer: a test peer that speaks the worker protocol over a real socket (Join, Hello after
// the Welcome, waits for weights and credits) and then sends whatever a test hands it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "core/sample_batch.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/sockets.h"

namespace rlx::test {

// A CartPole fragment of T steps and K envs that keeps the contract, made with the given policy
// version: env 1 terminates at the first step, and every env's episode is truncated at the last.
inline SampleBatch contract_fragment(int32_t steps, int32_t envs, uint64_t version) {
  SampleBatch batch;
  batch.policy_version = version;
  batch.resize(steps, envs, 4, 0, true);
  for (size_t i = 0; i < batch.obs.size(); ++i) batch.obs[i] = 0.01f * static_cast<float>(i % 100);
  for (size_t i = 0; i < batch.action_indices.size(); ++i) batch.action_indices[i] = static_cast<int64_t>(i % 2);
  for (size_t i = 0; i < batch.rewards.size(); ++i) batch.rewards[i] = 1.0f;
  for (size_t i = 0; i < batch.log_probs.size(); ++i) batch.log_probs[i] = -0.69f;
  if (steps > 1 && envs > 1) {
    batch.terminated[1] = 1;
    batch.final_obs_index.push_back(1);
  }
  for (int32_t k = 0; k < envs && steps > 0; ++k) {
    const int32_t last = (steps - 1) * envs + k;
    batch.truncated[static_cast<size_t>(last)] = 1;
    if (last != 1) batch.final_obs_index.push_back(last);
  }
  batch.final_obs.assign(batch.final_obs_index.size() * 4, -0.5f);
  return batch;
}

// One way to spoil a contract-keeping fragment, and the fault counter that must count it.
struct Attack {
  std::string name;
  std::string fault;
  std::function<void(SampleBatch&)> spoil;
};

// The attacks a receiver with a CartPole contract of T steps must refuse (K as announced).
inline std::vector<Attack> contract_attacks(int32_t steps, int32_t envs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto remake = [](int32_t t, int32_t k, int64_t obs_size) {
    return [t, k, obs_size](SampleBatch& b) {
      const uint64_t version = b.policy_version;
      b = contract_fragment(t, k, version);
      if (obs_size != 4) {
        b.obs_size = obs_size;
        b.obs.assign(static_cast<size_t>(t * k * obs_size), 0.1f);
        b.bootstrap_obs.assign(static_cast<size_t>(k * obs_size), 0.1f);
        b.final_obs.assign(b.final_obs_index.size() * static_cast<size_t>(obs_size), 0.1f);
      }
    };
  };
  return {
      {"observation size 5 for a 4-float env", "wrong_obs_size", remake(steps, envs, 5)},
      {"T = 0", "wrong_steps", remake(0, envs, 4)},
      {"K = 0", "wrong_envs", remake(steps, 0, 4)},
      {"T larger than granted", "wrong_steps", remake(steps * 2, envs, 4)},
      {"no log-prob column for PPO", "missing_policy_outputs",
       [](SampleBatch& b) {
         b.log_probs.clear();
         b.values.clear();
       }},
      {"a truncated step with no final observation", "final_obs_mismatch",
       [envs](SampleBatch& b) { b.truncated[static_cast<size_t>(envs + 1)] = 1; }},
      {"a NaN observation", "non_finite", [nan](SampleBatch& b) { b.obs[7] = nan; }},
      {"a NaN reward stamped with a future version", "non_finite",
       [nan](SampleBatch& b) {
         b.rewards[3] = nan;
         b.policy_version += 1000000;
       }},
      {"an infinite final observation", "non_finite",
       [](SampleBatch& b) { b.final_obs[0] = std::numeric_limits<float>::infinity(); }},
      {"a policy version far in the future", "unpublished_version", [](SampleBatch& b) { b.policy_version += 1000000; }},
      {"recurrent state for a memoryless model", "wrong_state_size",
       [envs](SampleBatch& b) {
         b.state_size = 8;
         b.initial_states.assign(static_cast<size_t>(envs) * 8, 0.0f);
       }},
  };
}

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

  // Joins as a CartPole worker would (K envs as constructed); true once it holds weights and credits.
  bool join(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    send(encode_join(worker_id_, ++sequence_));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      read(std::chrono::milliseconds(50));
      if (welcomed_ && !hello_sent_) {
        Hello hello;
        hello.worker_id = worker_id_;
        hello.env_id = env_id_;
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

  // The env id its hello announces (CartPole-v1 unless set before join()).
  void set_env_id(std::string env_id) { env_id_ = std::move(env_id); }

  // The peer spent one credit (it sent a fragment it held one for).
  void use_credit() { --credits_; }

  uint64_t latest_version() const { return latest_version_; }
  int64_t credits() const { return credits_; }
  bool stopped() const { return stopped_; }
  zmq::socket_t& socket() { return socket_; }

 private:
  zmq::socket_t socket_;
  int64_t num_envs_;
  std::string env_id_ = "CartPole-v1";
  uint64_t worker_id_ = 666;
  uint64_t sequence_ = 0;
  bool welcomed_ = false;
  bool hello_sent_ = false;
  uint64_t latest_version_ = 0;
  int64_t credits_ = 0;
  bool stopped_ = false;
};

}  // namespace rlx::test
