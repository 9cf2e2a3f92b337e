#include "bench/recurrent_benchmark.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>

#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/policy_networks.h"
#include "learner/ppo_learner.h"
#include "models/rollout_policy.h"
#include "rollout/fragment_collector.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void check_options(const RecurrentBenchmarkOptions& o) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("recurrent benchmark: " + what); };
  if (o.width < 1) fail("width must be >= 1, got " + std::to_string(o.width));
  if (o.envs < 1) fail("envs must be >= 1, got " + std::to_string(o.envs));
  if (o.act_calls < 1) fail("act_calls must be >= 1, got " + std::to_string(o.act_calls));
  if (o.steps < 1 || o.fragments < 1) fail("steps and fragments must be >= 1");
  if (o.num_epochs < 1 || o.minibatch_size < 1 || o.max_seq_len < 1) fail("epochs, minibatch and max_seq_len must be >= 1");
  if (o.repeats < 1) fail("repeats must be >= 1, got " + std::to_string(o.repeats));
  for (const std::string& core : o.cores) {
    if (core != "lstm" && core != "gru") fail("a core is lstm or gru, got '" + core + "'");
  }
}

// One model under test: its spec, a worker's policy for act() and a learner with its batch.
struct ModelCase {
  std::string name;
  ModelSpec spec;
  PpoConfig config;
  std::unique_ptr<ActorCriticPolicy> worker;     // null for an update-only case
  std::unique_ptr<PpoLearner> learner;
  std::vector<SampleBatch> batches;
  RecurrentModelTimings timings;
};

PpoConfig learner_config(const RecurrentBenchmarkOptions& o, const ModelSpec& spec) {
  PpoConfig config;  // RL Zoo's ppo_lstm.yml for CartPoleNoVel, as experiments/cartpole-novel-ppo.yaml
  config.num_epochs = o.num_epochs;
  config.minibatch_size = o.minibatch_size;
  config.max_seq_len = o.max_seq_len;
  config.gamma = 0.98;
  config.lambda = 0.8;
  config.clip_param = 0.2;
  config.entropy_coeff = 0.0;
  config.normalize_observations = true;
  config.obs_stats_after_update = true;
  config.scale_rewards = true;
  config.ortho_init = spec.ortho_init;
  config.lr = 1e-4;  // small steps keep the repeated updates on one batch well-behaved
  return config;
}

// The batch each learner trains on: fragments collected by a policy with the learner's weights
// (a recurrent one records its first states, as workers do).
std::vector<SampleBatch> collect_batch(const RecurrentBenchmarkOptions& o, const ModelSpec& spec, const PpoLearner& learner) {
  VectorEnv envs(global_env_registry().factory(o.env_id), o.envs);
  ActorCriticPolicy policy(spec, 7);
  const std::shared_ptr<Weights> weights = learner.weights(1);
  policy.load_weights(weights->params.data(), weights->params.size(), weights->policy_version);
  FragmentCollector collector(envs, policy, o.steps, 11);
  std::vector<SampleBatch> batches(static_cast<size_t>(o.fragments));
  for (SampleBatch& batch : batches) collector.collect(batch);
  return batches;
}

ModelCase make_case(const RecurrentBenchmarkOptions& o, const std::string& name, const std::string& core) {
  ModelCase c;
  c.name = name;
  c.spec = ModelSpec::for_env(global_env_registry().spec(o.env_id));
  c.spec.activation = o.activation;
  c.spec.ortho_init = false;  // PyTorch's default init, as RL Zoo
  if (core.empty()) {
    c.spec.hidden_sizes = {o.width};
  } else {
    c.spec.hidden_sizes = {};
    c.spec.core = core;
    c.spec.core_size = o.width;
  }
  c.config = learner_config(o, c.spec);
  if (name == "mlp_autograd") c.config.analytic_gradients = false;
  else c.worker = std::make_unique<ActorCriticPolicy>(c.spec, 5, false, o.values);
  c.learner = std::make_unique<PpoLearner>(c.spec, c.config, 3);
  c.batches = collect_batch(o, c.spec, *c.learner);
  c.timings.model = name;
  c.timings.num_parameters = static_cast<int64_t>(c.learner->weights(0)->params.size());
  return c;
}

// Microseconds per act() call over calls calls, cycling through the observation rows [T, K, O].
double time_act(ActorCriticPolicy& policy, const std::vector<float>& obs, int64_t rows, int envs, int calls) {
  const auto k = static_cast<size_t>(envs);
  std::vector<int64_t> actions(k);
  std::vector<float> log_probs(k), values(k);
  ActOutput out;
  out.action_indices = actions.data();
  out.log_probs = log_probs.data();
  out.values = values.data();
  const auto row_floats = static_cast<int64_t>(obs.size()) / rows;
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) policy.act(obs.data() + (i % rows) * row_floats, envs, out);
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / calls;
}

double time_update(PpoLearner& learner, const std::vector<SampleBatch>& batches, int64_t& steps) {
  const auto start = Clock::now();
  steps = learner.update(batches, 0).num_minibatch_steps;
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

double RecurrentModelTimings::median_act_us() const { return median(act_us); }

double RecurrentModelTimings::median_update_ms() const { return median(update_ms); }

RecurrentBenchmarkResult run_recurrent_benchmark(const RecurrentBenchmarkOptions& options) {
  check_options(options);
  std::vector<ModelCase> cases;
  cases.push_back(make_case(options, "mlp", ""));
  for (const std::string& core : options.cores) cases.push_back(make_case(options, core, core));
  if (options.autograd_mlp) cases.push_back(make_case(options, "mlp_autograd", ""));

  // Real observations for act(): the MLP case's fragments, [T * fragments, K, O] rows of K.
  std::vector<float> obs;
  for (const SampleBatch& batch : cases.front().batches) obs.insert(obs.end(), batch.obs.begin(), batch.obs.end());
  const int64_t rows = static_cast<int64_t>(options.steps) * options.fragments;

  const int previous_threads = set_inference_threads(1);
  for (ModelCase& c : cases) {  // warm-up: caches, allocations, LibTorch's first calls
    if (c.worker) time_act(*c.worker, obs, rows, options.envs, options.act_calls);
    time_update(*c.learner, c.batches, c.timings.minibatch_steps);
  }
  for (int r = 0; r < options.repeats; ++r) {
    for (ModelCase& c : cases) {
      if (c.worker) c.timings.act_us.push_back(time_act(*c.worker, obs, rows, options.envs, options.act_calls));
    }
    for (ModelCase& c : cases) c.timings.update_ms.push_back(time_update(*c.learner, c.batches, c.timings.minibatch_steps));
  }
  set_inference_threads(previous_threads);

  RecurrentBenchmarkResult result;
  result.batch_samples = rows * options.envs;
  for (ModelCase& c : cases) result.models.push_back(std::move(c.timings));
  return result;
}

}  // namespace rlx
