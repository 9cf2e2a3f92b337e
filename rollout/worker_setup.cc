#include "rollout/worker_setup.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "envs/frame_stack.h"
#include "models/model_spec_json.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

using nlohmann::json;

constexpr int kMaxEnvsPerWorker = 1 << 16;
constexpr int kMaxFragmentLength = 1 << 16;
constexpr int kMaxWeightDelay = 1000;  // as the worker_weight_delay key allows

// The value at key with type T; throws std::invalid_argument naming the key when it is
// missing or of another type.
template <typename T>
T required(const json& object, const char* key, const char* expected) {
  auto it = object.find(key);
  if (it == object.end()) throw std::invalid_argument(std::string("worker setup: missing key '") + key + "'");
  try {
    return it->template get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("worker setup: key '") + key + "' must be " + expected + ", got " +
                                it->dump());
  }
}

void check_range(const char* key, double value, double low, double high) {
  if (!(value >= low && value <= high)) {
    throw std::invalid_argument(std::string("worker setup: key '") + key + "' = " + std::to_string(value) +
                                " is outside [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  }
}

// The multi_agent part of a setup; throws std::invalid_argument naming what is wrong.
std::shared_ptr<const MultiAgentWorkerSetup> multi_agent_from_json(const json& in) {
  const auto bad = [](const std::string& what) { return std::invalid_argument("worker setup: key 'multi_agent': " + what); };
  if (!in.is_object() || !in.contains("setup") || !in.contains("policies")) {
    throw bad("expected an object of 'setup' and 'policies'");
  }
  auto multi = std::make_shared<MultiAgentWorkerSetup>();
  multi->setup = in.at("setup");
  if (!multi->setup.is_object()) throw bad("'setup' must be an object");
  const json& policies = in.at("policies");
  if (!policies.is_array() || policies.empty() || policies.size() > kMaxWorkerPolicies) {
    throw bad("'policies' must be an array of 1 to " + std::to_string(kMaxWorkerPolicies) + " entries");
  }
  for (size_t p = 0; p < policies.size(); ++p) {
    if (policies[p].is_null()) {
      multi->policies.emplace_back();  // scripted
      continue;
    }
    if (!policies[p].is_object() || policies[p].contains("multi_agent")) {
      throw bad("policy " + std::to_string(p) + " must be a single-agent worker setup or null");
    }
    multi->policies.push_back(WorkerSetup::from_json(policies[p].dump()));
  }
  return multi;
}

}  // namespace

double WorkerSetup::initial_epsilon() const {
  return apex_epsilons ? apex_worker_epsilon(worker_index, num_workers) : epsilon;
}

EnvSpec WorkerSetup::env_spec() const { return frame_stacked_spec(global_env_registry().spec(env_id), frame_stack); }

EnvFactory WorkerSetup::env_factory() const {
  return frame_stacked_factory(global_env_registry().factory(env_id), frame_stack);
}

const ModelSpec& WorkerSetup::model_for(const EnvSpec& env) const {
  model.check_env(env, "this worker's");
  return model;
}

std::string WorkerSetup::to_json() const {
  json out = {{"env_id", env_id},
                    {"env_config", json::parse(env_config)},
                    {"num_envs", num_envs},
                    {"fragment_length", fragment_length},
                    {"seed", seed},
                    {"worker_index", worker_index},
                    {"model", model_spec_to_json(model)},
                    {"epsilon", epsilon},
                    {"apex_epsilons", apex_epsilons},
                    {"num_workers", num_workers},
                    {"deterministic", deterministic},
                    {"behaviour_values", behaviour_values},
                    {"drop_nonfinite_episodes", drop_nonfinite_episodes},
                    {"weight_delay", weight_delay},
                    {"frame_stack", frame_stack}};
  if (multi_agent) {
    json policies = json::array();
    for (const std::optional<WorkerSetup>& policy : multi_agent->policies) {
      policies.push_back(policy ? json::parse(policy->to_json()) : json());
    }
    out["multi_agent"] = {{"setup", multi_agent->setup}, {"policies", policies}};
  }
  return out.dump();
}

WorkerSetup WorkerSetup::from_json(const std::string& text) {
  json in;
  try {
    in = json::parse(text);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("worker setup: not valid JSON: ") + e.what());
  }
  if (!in.is_object()) throw std::invalid_argument("worker setup: expected a JSON object");
  WorkerSetup setup;
  setup.env_id = required<std::string>(in, "env_id", "a string");
  if (setup.env_id.empty() || setup.env_id.size() > 256) throw std::invalid_argument("worker setup: bad 'env_id'");
  // Absent in the Welcome of learners before Python envs: none.
  if (in.contains("env_config")) {
    const json& env_config = in.at("env_config");
    if (!env_config.is_object()) throw std::invalid_argument("worker setup: key 'env_config' must be a JSON object");
    setup.env_config = env_config.dump();
    if (setup.env_config.size() > kMaxEnvConfigBytes) {
      throw std::invalid_argument("worker setup: 'env_config' is " + std::to_string(setup.env_config.size()) +
                                  " bytes, more than " + std::to_string(kMaxEnvConfigBytes));
    }
  }
  setup.num_envs = required<int>(in, "num_envs", "an integer");
  check_range("num_envs", setup.num_envs, 1, kMaxEnvsPerWorker);
  setup.fragment_length = required<int>(in, "fragment_length", "an integer");
  check_range("fragment_length", setup.fragment_length, 1, kMaxFragmentLength);
  setup.seed = required<uint64_t>(in, "seed", "a non-negative integer");
  setup.worker_index = required<int>(in, "worker_index", "an integer");
  check_range("worker_index", setup.worker_index, 0, 1 << 30);
  if (!in.contains("model")) {
    throw std::invalid_argument("worker setup: missing key 'model' (a learner of an rlx before model specs?)");
  }
  setup.model = model_spec_from_json(in.at("model"), "worker setup: model");
  setup.epsilon = required<double>(in, "epsilon", "a number");
  check_range("epsilon", setup.epsilon, 0, 1);
  setup.deterministic = required<bool>(in, "deterministic", "a boolean");
  // Absent in the Welcome of learners before it: they wanted values.
  if (in.contains("behaviour_values")) setup.behaviour_values = required<bool>(in, "behaviour_values", "a boolean");
  setup.apex_epsilons = required<bool>(in, "apex_epsilons", "a boolean");
  setup.num_workers = required<int>(in, "num_workers", "an integer");
  check_range("num_workers", setup.num_workers, 1, 1 << 20);
  setup.drop_nonfinite_episodes = required<bool>(in, "drop_nonfinite_episodes", "a boolean");
  // Absent in the Welcome of learners before it: no delay.
  if (in.contains("weight_delay")) {
    setup.weight_delay = required<int>(in, "weight_delay", "an integer");
    check_range("weight_delay", setup.weight_delay, 0, kMaxWeightDelay);
  }
  // Absent in the Welcome of learners before it: no stacking.
  if (in.contains("frame_stack")) {
    setup.frame_stack = required<int>(in, "frame_stack", "an integer");
    check_range("frame_stack", setup.frame_stack, 1, kMaxFrameStack);
  }
  if (in.contains("multi_agent")) setup.multi_agent = multi_agent_from_json(in.at("multi_agent"));
  return setup;
}

}  // namespace rlx
