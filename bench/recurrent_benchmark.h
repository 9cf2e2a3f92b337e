// The recurrent-vs-MLP speed benchmark behind `rlx bench recurrent`: a worker's step
// (ActorCriticPolicy::act for K envs, torch-free) and the LibTorch PpoLearner's update (one
// intra-op thread), each for an MLP of one hidden layer of width H and for recurrent cores of
// H units (hidden_sizes [], core_size H). The models take turns within each repeat, so a busy
// machine slows each of them alike, and the ratios compare like with like.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

struct RecurrentBenchmarkOptions {
  std::string env_id = "CartPoleNoVel-v1";
  int64_t width = 64;                            // H: the MLP's hidden layer, the cores' size
  std::vector<std::string> cores = {"lstm", "gru"};
  std::string activation = "relu";               // RL Zoo's CartPoleNoVel settings
  int envs = 8;                                  // K: envs per act() call and per fragment
  bool values = false;                           // act() computes V(s) too (PPO's workers do not)
  int act_calls = 2000;                          // timed act() calls per repeat (after as many warm-up calls)
  int steps = 32;                                // T of each fragment of the learner's batch
  int fragments = 1;
  int num_epochs = 20;
  int64_t minibatch_size = 256;
  int64_t max_seq_len = 32;
  bool autograd_mlp = true;                      // also time the MLP's update with autograd (as the cores train)
  int repeats = 5;
};

// One model's timings, one entry per repeat.
struct RecurrentModelTimings {
  std::string model;                 // "mlp", a core ("lstm", "gru"), or "mlp_autograd" (update only)
  int64_t num_parameters = 0;
  std::vector<double> act_us;        // microseconds per act() call (empty for "mlp_autograd")
  std::vector<double> update_ms;     // milliseconds per PpoLearner::update
  int64_t minibatch_steps = 0;       // per update

  // Medians of the repeats (0 when there are none).
  double median_act_us() const;
  double median_update_ms() const;
};

struct RecurrentBenchmarkResult {
  std::vector<RecurrentModelTimings> models;  // "mlp" first
  int64_t batch_samples = 0;                  // envs x steps x fragments
};

// Runs the benchmark; throws std::invalid_argument on bad options (an unknown env or core among them).
RecurrentBenchmarkResult run_recurrent_benchmark(const RecurrentBenchmarkOptions& options);

}  // namespace rlx
