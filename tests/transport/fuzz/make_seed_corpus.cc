// Writes one valid message of each type (and a fragment that keeps the contract fuzzer's
// contract) into DIR, in the fuzzers' input format.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "tests/transport/fuzz/fuzz_frames.h"
#include "transport/encode.h"

namespace {

void write_seed(const std::string& dir, const std::string& name, const std::vector<zmq::message_t>& frames) {
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out << rlx::join_fuzz_input(frames);
  if (!out.flush()) throw std::runtime_error("cannot write " + dir + "/" + name);
}

std::shared_ptr<rlx::SampleBatch> small_batch(bool discrete) {
  auto batch = std::make_shared<rlx::SampleBatch>();
  batch->worker_id = 3;
  batch->policy_version = 9;
  batch->resize(2, 2, 3, discrete ? 0 : 2, !discrete);
  for (size_t i = 0; i < batch->obs.size(); ++i) batch->obs[i] = 0.5f * static_cast<float>(i);
  batch->terminated[1] = 1;
  batch->final_obs_index = {1};
  batch->final_obs = {1.f, 2.f, 3.f};
  return batch;
}

// A fragment that keeps the fragment-contract fuzzer's contract (CartPole, T = 16, K = 4).
std::shared_ptr<rlx::SampleBatch> contract_batch() {
  auto batch = std::make_shared<rlx::SampleBatch>();
  batch->policy_version = 1;
  batch->resize(16, 4, 4, 0, true);
  for (size_t i = 0; i < batch->obs.size(); ++i) batch->obs[i] = 0.01f * static_cast<float>(i);
  for (size_t i = 0; i < batch->action_indices.size(); ++i) batch->action_indices[i] = static_cast<int64_t>(i % 2);
  std::fill(batch->rewards.begin(), batch->rewards.end(), 1.f);
  batch->terminated[5] = 1;
  batch->final_obs_index = {5};
  batch->final_obs = {0.1f, 0.2f, 0.3f, 0.4f};
  return batch;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: rlx_decoder_fuzz_seeds DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir);
  rlx::Hello hello;
  hello.worker_id = 5;
  hello.env_id = "CartPole-v1";
  hello.num_envs = 8;
  hello.obs_size = 4;
  hello.num_actions = 2;
  hello.pid = 1234;
  hello.hostname = "node-1";
  write_seed(dir, "hello", rlx::encode_hello(hello, 1));
  write_seed(dir, "heartbeat", rlx::encode_heartbeat(5, 2));
  write_seed(dir, "fragment_cartpole_contract", rlx::encode_sample_fragment(contract_batch(), 3));
  write_seed(dir, "fragment_discrete", rlx::encode_sample_fragment(small_batch(true), 3));
  write_seed(dir, "fragment_box", rlx::encode_sample_fragment(small_batch(false), 4));
  write_seed(dir, "episode_stats", rlx::encode_episode_stats({{10.5, 20.0}, {11, 21}}, 5, 5));
  auto weights = std::make_shared<rlx::Weights>();
  weights->policy_version = 9;
  weights->params = {0.1f, 0.2f, 0.3f};
  weights->obs_mean = {0.0, 1.0};
  weights->obs_var = {1.0, 2.0};
  weights->obs_count = 100;
  write_seed(dir, "weights", rlx::encode_weights(weights, 0, 6));
  write_seed(dir, "credit_grant", rlx::encode_credit_grant({4}, 0, 7));
  write_seed(dir, "stop", rlx::encode_stop(0, 8));
  const auto seeds = std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{});
  std::cout << "wrote " << seeds << " seeds to " << dir << "\n";
  return 0;
}
