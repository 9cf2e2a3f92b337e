// The trace comparison of the export tests: an `rlx evaluate --trace` file (cli/evaluate_command.cc:
// one JSON line per step with "obs", "obs_bytes" and "action_mask" where the env has them, and
// the "action" the env got) replayed through rlx::Policy (C++) and python/rlx_policy.py (NumPy),
// each of which must give every traced action again; a recurrent policy over whole episodes, its
// state from zeros at each "step": 0.
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/policy.h"
#include "run_rlx.h"

namespace rlx::test {

// The steps of a trace file.
inline std::vector<nlohmann::json> trace_steps(const std::string& path) {
  std::vector<nlohmann::json> steps;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) steps.push_back(nlohmann::json::parse(line));
  return steps;
}

// A traced step's array of small integers ("obs_bytes", "action_mask") as bytes; empty when absent.
inline std::vector<uint8_t> trace_bytes(const nlohmann::json& step, const char* key) {
  return step.contains(key) ? step.at(key).get<std::vector<uint8_t>>() : std::vector<uint8_t>{};
}

// rlx::Policy's action for a traced step's observation and mask; with a state (a recurrent
// policy's), act(observation, state), which returns the next state in the action.
inline PolicyAction act_on_step(Policy& policy, const nlohmann::json& step, bool deterministic,
                                const std::vector<float>* state = nullptr) {
  const std::vector<float> floats = step.at("obs").get<std::vector<float>>();
  const std::vector<uint8_t> bytes = trace_bytes(step, "obs_bytes");
  const std::vector<uint8_t> mask = trace_bytes(step, "action_mask");
  PolicyObservation obs;
  obs.floats = floats.data();
  obs.float_count = floats.size();
  obs.bytes = bytes.data();
  obs.byte_count = bytes.size();
  if (!mask.empty()) {
    obs.mask = mask.data();
    obs.mask_count = mask.size();
  }
  return state == nullptr ? policy.act(obs, deterministic) : policy.act(obs, *state, deterministic);
}

// Checks that rlx::Policy gives every traced step's action, exactly (the same kernel and floats); a
// recurrent policy steps its state through each episode, which the trace must hold from step 0.
inline void check_cpp_reader(const std::string& policy_path, const std::vector<nlohmann::json>& steps) {
  Policy policy(policy_path);
  REQUIRE(steps.size() > 10);
  std::vector<float> state;
  int64_t expected_step = 0;
  for (const nlohmann::json& step : steps) {
    INFO("episode " << step.at("episode") << " step " << step.at("step"));
    if (step.at("step") == 0) {
      state = policy.initial_state();
      expected_step = 0;
    }
    REQUIRE(step.at("step") == expected_step++);  // whole episodes, in order
    PolicyAction action = act_on_step(policy, step, true, policy.recurrent() ? &state : nullptr);
    if (policy.recurrent()) state = std::move(action.state);
    if (policy.discrete_actions()) {
      REQUIRE(action.index == step.at("action").get<int64_t>());
    } else if (policy.indexed_actions()) {
      REQUIRE(action.indices == step.at("action").get<std::vector<int64_t>>());
    } else {
      REQUIRE(action.values == step.at("action").get<std::vector<float>>());
    }
  }
}

// Runs python/rlx_policy.py with Debian's Python (it has NumPy) and ARGS; returns its exit status
// and output (files under out).
inline CommandOutput run_python_reader(const std::string& args, const std::string& out) {
  const std::string command = std::string(RLX_SYSTEM_PYTHON) + " " + RLX_SOURCE_DIR + "/python/rlx_policy.py " + args +
                              " > " + out + "/python.out 2> " + out + "/python.err";
  const int status = std::system(command.c_str());
  CommandOutput result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text_file(out + "/python.out");
  result.err = read_text_file(out + "/python.err");
  return result;
}

// Checks that python/rlx_policy.py --check-trace finds all `steps` steps of the trace (and, unless
// -1, `episodes` episodes) and no mismatch.
inline void check_python_reader(const std::string& policy_path, const std::string& trace_path, const std::string& out,
                                size_t steps, int64_t episodes = -1) {
  const auto python = run_python_reader(policy_path + " --check-trace " + trace_path + " --atol 1e-4", out);
  INFO(python.out << python.err);
  REQUIRE(python.exit_code == 0);
  const auto summary = nlohmann::json::parse(python.out.substr(python.out.rfind('{')));
  CHECK(summary.at("steps").get<size_t>() == steps);
  if (episodes >= 0) CHECK(summary.at("episodes").get<int64_t>() == episodes);
  CHECK(summary.at("mismatches") == 0);
}

// The last checkpoint of a finished `rlx train` run, from its result.json.
inline std::string last_checkpoint(const std::string& out, const std::string& experiment) {
  const auto result = nlohmann::json::parse(read_text_file(out + "/" + experiment + "/t/result.json"));
  return result.at("last_checkpoint").get<std::string>();
}

// Trains `experiments/FILE` (or FILE, an absolute path) with extra options (a short run), exports
// its last checkpoint to out/policy.rlxp, and writes `rlx evaluate --deterministic --trace` of
// `episodes` episodes of it to out/trace.jsonl. Returns the policy file's path.
inline std::string train_export_trace(const std::string& out, const std::string& file, const std::string& options,
                                      int episodes = 2) {
  const std::string name = file.substr(file.rfind('/') + 1);
  const std::string experiment = name.substr(0, name.find(".yaml"));
  const std::string path = file.front() == '/' ? file : std::string(RLX_SOURCE_DIR) + "/experiments/" + file;
  const auto train = run_rlx("train " + path + " " + options + " --seed 0 --trial-name t --output " + out + " -q");
  INFO(train.out << train.err);
  REQUIRE((train.exit_code == 0 || train.exit_code == 3));
  const std::string checkpoint = last_checkpoint(out, experiment);
  const std::string policy = out + "/policy.rlxp";
  const auto exported = run_rlx("export " + checkpoint + " -o " + policy);
  INFO(exported.out << exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK_THAT(exported.out, Catch::Contains("written to " + policy));
  const auto evaluated = run_rlx("evaluate " + checkpoint + " --deterministic --episodes " + std::to_string(episodes) +
                                 " --seed 3 --trace " + out + "/trace.jsonl");
  INFO(evaluated.err);
  REQUIRE(evaluated.exit_code == 0);
  return policy;
}

}  // namespace rlx::test
