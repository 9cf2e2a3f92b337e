// The LibTorch-vs-native PPO learner benchmark behind `rlx bench learner --native`: a
// PpoLearner (one intra-op thread) and a NativePpoLearner with the same initial weights run
// the same full PPO updates on one batch of real env fragments; reports the median update
// and minibatch-step times of each and their ratio.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

struct NativeLearnerBenchmarkOptions {
  std::string env_id = "CartPole-v1";
  std::vector<int64_t> hidden_sizes = {64, 64};
  std::string activation = "tanh";
  int64_t batch_size = 1024;  // collected as 8 envs x batch_size / 8 steps
  int num_epochs = 20;
  int64_t minibatch_size = 256;
  int updates = 10;           // timed updates of each learner (after one warm-up update)
};

struct NativeLearnerBenchmarkResult {
  double torch_update_ms = 0.0;   // medians over the timed updates
  double native_update_ms = 0.0;
  double torch_minibatch_ms = 0.0;  // update time / minibatch steps
  double native_minibatch_ms = 0.0;
  int64_t minibatch_steps = 0;    // per update
  int64_t num_parameters = 0;
  double max_parameter_difference = 0.0;  // between the two learners after the first update
  double ratio() const { return native_update_ms > 0.0 ? torch_update_ms / native_update_ms : 0.0; }
};

// Runs the benchmark; throws std::invalid_argument on bad options.
NativeLearnerBenchmarkResult run_native_learner_benchmark(const NativeLearnerBenchmarkOptions& options);

}  // namespace rlx
