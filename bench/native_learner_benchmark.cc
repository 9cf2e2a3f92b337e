#include "bench/native_learner_benchmark.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/policy_networks.h"
#include "learner/ppo_learner.h"
#include "native/native_ppo_learner.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

constexpr int kEnvs = 8;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Median milliseconds of `updates` calls of update(), after one warm-up call.
template <typename Learner>
double time_updates(Learner& learner, const std::vector<SampleBatch>& batches, int updates, int64_t& steps) {
  steps = learner.update(batches, 0).num_minibatch_steps;
  std::vector<double> ms;
  for (int i = 0; i < updates; ++i) {
    const auto start = std::chrono::steady_clock::now();
    learner.update(batches, 0);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return median(ms);
}

}  // namespace

NativeLearnerBenchmarkResult run_native_learner_benchmark(const NativeLearnerBenchmarkOptions& options) {
  if (options.batch_size < kEnvs || options.batch_size % kEnvs != 0) {
    throw std::invalid_argument("native learner benchmark: batch_size must be a positive multiple of " + std::to_string(kEnvs) +
                                ", got " + std::to_string(options.batch_size));
  }
  if (options.updates < 1) throw std::invalid_argument("native learner benchmark: updates must be >= 1, got " + std::to_string(options.updates));
  ModelSpec model = ModelSpec::for_env(global_env_registry().spec(options.env_id));
  model.hidden_sizes = options.hidden_sizes;
  model.activation = options.activation;
  PpoConfig config;
  config.num_epochs = options.num_epochs;
  config.minibatch_size = options.minibatch_size;
  config.lr = 1e-4;  // small steps keep the repeated updates on one batch well-behaved

  NativePpoLearner native(model, config, 1);
  PpoLearner torch_learner(model, config, 1);
  load_flat_parameters(torch_learner.model(), native.parameters().data(), native.parameters().size());

  VectorEnv envs(global_env_registry().factory(options.env_id), kEnvs);
  ActorCriticPolicy policy(model, 2);
  policy.load_weights(native.parameters().data(), native.parameters().size(), 0);
  FragmentCollector collector(envs, policy, static_cast<int>(options.batch_size / kEnvs), 3);
  std::vector<SampleBatch> batches(1);
  collector.collect(batches[0]);

  NativeLearnerBenchmarkResult result;
  result.num_parameters = static_cast<int64_t>(native.parameters().size());
  const int previous_threads = set_inference_threads(1);
  int64_t torch_steps = 0;
  result.torch_update_ms = time_updates(torch_learner, batches, options.updates, torch_steps);
  set_inference_threads(previous_threads);
  result.native_update_ms = time_updates(native, batches, options.updates, result.minibatch_steps);
  if (torch_steps != result.minibatch_steps) throw std::logic_error("the learners took different numbers of minibatch steps");
  result.torch_minibatch_ms = result.torch_update_ms / static_cast<double>(result.minibatch_steps);
  result.native_minibatch_ms = result.native_update_ms / static_cast<double>(result.minibatch_steps);

  // Agreement after one update from the same weights (a sanity check, not a test).
  NativePpoLearner native_once(model, config, 1);
  PpoLearner torch_once(model, config, 1);
  load_flat_parameters(torch_once.model(), native_once.parameters().data(), native_once.parameters().size());
  native_once.update(batches, 0);
  torch_once.update(batches, 0);
  const std::vector<float> torch_params = torch_once.weights(0)->params;
  for (size_t i = 0; i < torch_params.size(); ++i) {
    result.max_parameter_difference =
        std::max(result.max_parameter_difference, std::fabs(static_cast<double>(torch_params[i]) - native_once.parameters()[i]));
  }
  return result;
}

}  // namespace rlx
