// An env shipped as a C++ plugin with structured spaces trains from the CLI and its exported
// policy reads back: PluginMaskedGrid-v0 (tests/plugins/structured.cc: a Dict of a uint8 grid and
// a Discrete level, masked MultiDiscrete actions) learned by PPO with a worker process that loads
// the plugin, exported, and traced by `rlx evaluate --deterministic`, whose actions rlx::Policy
// (C++, PolicyObservation's floats, bytes and mask) and python/rlx_policy.py (NumPy) give again.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/policy.h"
#include "policy_trace.h"
#include "run_rlx.h"

using rlx::test::read_text_file;
using rlx::test::run_rlx;
using rlx::test::temp_dir;

namespace {

// Random legal play scores 5 an episode, the optimum 10 (PluginMaskedGrid-v0's comment); PPO
// reaches 9 in 1.5k-2k steps (8 seeds), 40k is the stop criterion that would fail the test.
constexpr const char* kExperiment =
    "masked-grid-ppo:\n"
    "  env: PluginMaskedGrid-v0\n"
    "  algorithm: PPO\n"
    "  stop: {episode_return_mean: 9, timesteps_total: 40000}\n"
    "  config: {num_envs_per_worker: 16, rollout_fragment_length: 16, max_policy_lag: 0, train_batch_size: 256,\n"
    "           minibatch_size: 128, num_epochs: 8, lr: 0.003, gamma: 0.5, lambda: 0.9, hidden_sizes: [32],\n"
    "           entropy_coeff: 0.0, checkpoint_freq: 0}\n";


// True when every element of a MultiDiscrete action (no starts) is legal under its flat mask.
bool legal(const std::vector<int64_t>& action, const std::vector<uint8_t>& mask, const std::vector<int64_t>& nvec) {
  size_t at = 0;
  for (size_t e = 0; e < action.size(); ++e) {
    if (action[e] < 0 || action[e] >= nvec[e] || mask[at + static_cast<size_t>(action[e])] == 0) return false;
    at += static_cast<size_t>(nvec[e]);
  }
  return true;
}

}  // namespace

TEST_CASE("a plugin env with a Dict observation and masked MultiDiscrete actions learns, exports, and reads back",
          "[cli][plugins][learning]") {
  const std::string plugin = RLX_TEST_PLUGIN_STRUCTURED;
  const std::string out = temp_dir("plugin_learning");
  std::ofstream(out + "/masked-grid-ppo.yaml") << kExperiment;

  // 1. Training, with one worker process that loads the plugin itself.
  const auto train = run_rlx("train " + out + "/masked-grid-ppo.yaml --workers 1 --env-plugin " + plugin +
                             " --seed 0 --trial-name t --output " + out + " -q");
  INFO(train.out << train.err);
  REQUIRE(train.exit_code == 0);  // 0: stopped by episode_return_mean, not by timesteps_total
  const std::string trial = out + "/masked-grid-ppo/t";
  CHECK(std::filesystem::exists(trial + "/logs/worker_1.log"));
  const std::vector<nlohmann::json> iterations = rlx::test::json_lines(read_text_file(trial + "/result.jsonl"));
  REQUIRE(iterations.size() >= 2);
  INFO(read_text_file(trial + "/result.jsonl"));
  CHECK(iterations.front().at("episode_return_mean").get<double>() < 7.0);  // near random play's 5: learning shows
  CHECK(iterations.back().at("episode_return_mean").get<double>() >= 9.0);
  for (const nlohmann::json& iteration : iterations) {
    // An illegal action would pay -10 and end its episode at a negative return.
    CHECK(iteration.at("episode_return_min").get<double>() >= 0.0);
  }
  const auto result = nlohmann::json::parse(read_text_file(trial + "/result.json"));
  const std::string checkpoint = result.at("last_checkpoint").get<std::string>();

  // 2. Export, then a deterministic trace of the checkpoint in the plugin env.
  const std::string policy_path = out + "/policy.rlxp";
  const auto exported = run_rlx("export " + checkpoint + " -o " + policy_path);
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  const std::string trace_path = out + "/trace.jsonl";
  const auto evaluated = run_rlx("evaluate " + checkpoint + " --deterministic --episodes 3 --seed 3 --trace " +
                                 trace_path + " --env-plugin " + plugin);
  INFO(evaluated.out << evaluated.err);
  REQUIRE(evaluated.exit_code == 0);
  const auto summary = nlohmann::json::parse(evaluated.out.substr(evaluated.out.rfind('{')));
  CHECK(summary.at("return_mean").get<double>() >= 9.0);  // the greedy policy reads the level and the grid

  rlx::Policy policy(policy_path);
  CHECK(policy.observation_space() == "Dict('grid': Box(0, 1, (2, 2, 2), uint8), 'level': Discrete(3, start=1))");
  CHECK(policy.float_size() == 1);
  CHECK(policy.byte_size() == 8);
  CHECK(policy.trained_with_mask());
  CHECK(policy.indexed_actions());
  const std::vector<int64_t> nvec = {3, 2};
  CHECK(policy.action_categories() == nvec);

  const std::vector<nlohmann::json> steps = rlx::test::trace_steps(trace_path);
  REQUIRE(steps.size() == 30);  // 3 episodes of 10 steps: none ended early by an illegal action
  std::set<std::vector<int64_t>> actions;
  for (const nlohmann::json& step : steps) {
    INFO(step.dump());
    const std::vector<int64_t> action = step.at("action").get<std::vector<int64_t>>();
    REQUIRE(step.at("obs").size() == 1);
    REQUIRE(step.at("obs_bytes").size() == 8);
    REQUIRE(legal(action, rlx::test::trace_bytes(step, "action_mask"), nvec));
    actions.insert(action);
  }
  CHECK(actions.size() >= 3);  // the observation moves the action: the comparison means something

  // 3. Both readers give every traced action again.
  rlx::test::check_cpp_reader(policy_path, steps);
  rlx::test::check_python_reader(policy_path, trace_path, out, steps.size());
  std::system(("rm -rf " + out).c_str());
}
