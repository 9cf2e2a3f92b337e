// The data-parallel PPO learner benchmark behind `rlx bench learner`: M ranks (threads, each
// with its own learner, device and Gloo/NCCL group over one c10d HashStore) run full PPO
// updates on their shards of one batch of real env fragments; reports samples learned per
// second and the share of update time spent in gradient all-reduces. The learners compute in
// `precision` (learner/mixed_precision.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

struct LearnerBenchmarkOptions {
  int num_learners = 1;
  std::string device = "cpu";   // "cpu" or "cuda" (rank r on cuda:r)
  std::string precision = "fp32";  // "fp32", "bf16" or "fp16" (cuda)
  bool analytic_gradients = true;  // fp32's hand-written backward (bf16 and fp16 always take autograd's)
  std::string env_id = "CartPole-v1";
  std::vector<int64_t> hidden_sizes = {64, 64};
  int num_envs = 16;            // K of each fragment
  int fragment_length = 64;     // T
  int num_fragments = 8;        // train batch = fragments * K * T
  int64_t minibatch_size = 256;
  int num_epochs = 4;
  int repeats = 3;              // timed updates (after one warm-up update)
};

struct LearnerBenchmarkRun {
  double seconds = 0.0;          // one update (rank 0's wall time)
  double samples_per_s = 0.0;    // train-batch samples / seconds
  double allreduce_share = 0.0;  // gradient all-reduce time / update time (rank 0)
};

struct LearnerBenchmarkResult {
  std::vector<LearnerBenchmarkRun> runs;
  double samples_per_s = 0.0;    // medians over runs
  double allreduce_share = 0.0;
  int64_t batch_samples = 0;
  int64_t num_parameters = 0;
  int64_t skipped_steps = 0;     // fp16: minibatch steps skipped for an inf/NaN gradient, rank 0, timed updates
};

// Runs the benchmark; throws std::invalid_argument on bad options, ConfigError on a precision the
// device cannot run, CommunicatorError when a group fails (e.g. cuda without the NCCL backend).
LearnerBenchmarkResult run_learner_benchmark(const LearnerBenchmarkOptions& options);

}  // namespace rlx
