#include "bench/sampling_benchmark.h"

#include <time.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "core/sample_batch.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

// Forwards to a policy and adds up the wall time of act().
class TimedPolicy : public RolloutPolicy {
 public:
  explicit TimedPolicy(RolloutPolicy& inner) : RolloutPolicy(inner.config(), inner.config().kind, 0), inner_(inner) {}

  void act(const ObsBatch& obs, int num_envs, const ActOutput& out) override {
    const auto start = Clock::now();
    inner_.act(obs, num_envs, out);
    seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
    ++calls_;
  }
  void load_weights(const float* params, size_t count, uint64_t version) override {
    inner_.load_weights(params, count, version);
  }
  size_t num_parameters() const override { return inner_.num_parameters(); }
  std::vector<float> weights() const override { return inner_.weights(); }
  bool has_policy_outputs() const override { return inner_.has_policy_outputs(); }
  bool has_values() const override { return inner_.has_values(); }

  void restart() {
    seconds_ = 0.0;
    calls_ = 0;
  }
  double seconds() const { return seconds_; }
  int64_t calls() const { return calls_; }

 private:
  RolloutPolicy& inner_;
  double seconds_ = 0.0;
  int64_t calls_ = 0;
};

double thread_cpu_seconds() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

LocalSamplingMeasurement measure_local_sampling(const EnvFactory& factory, int num_envs, int fragment_length,
                                                const ModelSpec& policy_config, double seconds, uint64_t seed) {
  if (!(seconds >= 0.0)) throw std::invalid_argument("measure_local_sampling needs seconds >= 0");
  VectorEnv envs(factory, num_envs);
  ModelSpec config = policy_config;
  // The env's observation space (floats, bytes or both, flattened into the network's input).
  config.observation_space = envs.spec().observation_space;
  config.obs_size = config.observation_space.flat_size();
  config.action_mask = envs.spec().action_mask;
  config.action_space = envs.spec().action_space;
  // As a PPO worker samples: log-probs, no V(s) (the learner recomputes it).
  ActorCriticPolicy policy(config, seed, /*deterministic=*/false, /*values=*/false);
  TimedPolicy timed(policy);
  FragmentCollector collector(envs, timed, fragment_length, seed);
  SampleBatch batch;
  collector.collect(batch);  // warm-up: sizes the batch and the kernel's buffers
  collector.take_finished_episodes();
  timed.restart();

  LocalSamplingMeasurement result;
  result.num_parameters = static_cast<int64_t>(policy.num_parameters());
  const double cpu_start = thread_cpu_seconds();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  do {
    collector.collect(batch);
    ++result.fragments;
  } while (Clock::now() < deadline);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = thread_cpu_seconds() - cpu_start;
  result.env_steps = result.fragments * fragment_length * static_cast<int64_t>(num_envs);
  result.episodes = static_cast<int64_t>(collector.take_finished_episodes().size());
  result.inference_seconds = timed.seconds();
  result.inference_calls = timed.calls();
  return result;
}

LocalSamplingMeasurement measure_local_sampling(const std::string& env_id, int num_envs, int fragment_length,
                                                const ModelSpec& policy_config, double seconds, uint64_t seed) {
  return measure_local_sampling(global_env_registry().factory(env_id), num_envs, fragment_length, policy_config, seconds,
                                seed);
}

}  // namespace rlx
