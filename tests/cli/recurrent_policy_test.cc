// Exported recurrent policies (LSTM and GRU cores) in both readers: each .rlxp is written with
// random weights, the workers' ActorCriticPolicy acts over episodes of several lengths (its state
// zeroed at each start, as `rlx evaluate` does) into a trace in `rlx evaluate --trace`'s form,
// and rlx::Policy (C++) and python/rlx_policy.py (NumPy) replay whole episodes with their own
// state to the same actions, with dense head layers after the core (head_fcnet_hiddens) and on a
// memoryless MLP too; and so do they for policies `rlx train` trains on CartPoleNoVel-v1, against
// `rlx evaluate --trace`; and with gSDE's [latent, A] log-std before the networks. The NumPy
// reader's refusals are checked here too.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "models/network_layout.h"
#include "models/policy.h"
#include "models/policy_file.h"
#include "models/rollout_policy.h"
#include "policy_trace.h"
#include "run_rlx.h"

namespace rlx {
namespace {

struct Core {
  const char* name;
  const char* kind;  // "lstm" or "gru"; "" for a memoryless model
  bool shared;       // one core in the trunk, or one per chain
  int64_t layers;
  Space actions;
  std::vector<int64_t> head = {};  // head layers before each output (ModelSpec::head_sizes)
  bool sde = false;                // gSDE's log-std [latent, A] (ModelSpec::sde)
};

std::vector<Core> cores() {
  return {{"an LSTM per chain, Discrete actions", "lstm", false, 1, Space::discrete(4, 1)},
          {"a GRU per chain, Discrete actions", "gru", false, 1, Space::discrete(3)},
          {"two stacked LSTMs in a shared trunk, Box actions", "lstm", true, 2,
           Space::box({2}, std::vector<float>{-1.0f, 0.0f}, std::vector<float>{2.0f, 0.5f})},
          {"a GRU in a shared trunk, Box actions", "gru", true, 1, Space::box({1}, -2.0f, 2.0f)},
          {"an LSTM per chain, then a dense head of 16, Discrete actions", "lstm", false, 1, Space::discrete(3), {16}},
          {"an MLP, then a dense head of 16, Box actions", "", false, 1, Space::box({2}, -1.0f, 1.0f), {16}},
          {"a GRU in a shared trunk, Box actions with gSDE", "gru", true, 1, Space::box({2}, -1.0f, 1.0f), {}, true},
          {"an MLP, then a dense head of 16, Box actions with gSDE", "", false, 1, Space::box({1}, -2.0f, 2.0f), {16},
           true}};
}

// A recurrent actor-critic over 4 floats, with observation statistics and weights of order-one
// outputs (N(0, 4 / fan_in), biases N(0, 0.01)), so that observations and state move the actions.
PolicyFile recurrent_file(const Core& core, uint64_t seed) {
  PolicyFile file;
  file.model.obs_size = 4;
  file.model.action_space = core.actions;
  file.model.hidden_sizes = {16};
  file.model.activation = "tanh";
  file.model.shared_trunk = core.shared;
  file.model.core = core.kind;
  file.model.core_size = 8;
  file.model.core_layers = core.layers;
  file.model.head_sizes = core.head;
  file.model.sde = core.sde;
  file.model.sde_sample_freq = 4;
  const ActorCriticLayout layout = actor_critic_layout(file.model);
  file.parameters.assign(layout.num_parameters, 0.0f);
  Rng rng(seed);
  for (const ParameterSpec& p : layout.parameters) {
    const double scale = p.shape.size() == 1 ? 0.1 : 2 / std::sqrt(static_cast<double>(p.shape.at(1)));
    for (size_t i = 0; i < p.size; ++i) file.parameters[p.offset + i] = static_cast<float>(rng.normal() * scale);
  }
  file.obs_mean = {0.1f, -0.2f, 0.0f, 0.3f};
  file.obs_var = {1.0f, 4.0f, 0.25f, 1.0f};
  file.obs_count = 100;
  file.algorithm = "PPO";
  file.env_id = "Recurrent-v0";
  return file;
}

std::string write_file(const PolicyFile& file, const std::string& path) {
  std::ofstream(path, std::ios::binary) << encode_policy_file(file);
  return path;
}

// Runs a python3 command line (Debian's, with NumPy) of the reader's checks; returns its exit
// status and output.
test::CommandOutput run_python(const std::string& args, const std::string& out) {
  const std::string command = std::string(RLX_SYSTEM_PYTHON) + " " + args + " > " + out + "/python.out 2>&1";
  const int status = std::system(command.c_str());
  test::CommandOutput result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = test::read_text_file(out + "/python.out");
  return result;
}

TEST_CASE("both readers replay a recurrent policy's episodes as the workers' policy acted them",
          "[cli][export][recurrent]") {
  const std::vector<int> lengths = {30, 7, 1, 45, 12};  // episodes of several lengths, one of a single step
  for (const Core& core : cores()) {
    SECTION(core.name) {
      const std::string out = test::temp_dir("recurrent_policy");
      const PolicyFile file = recurrent_file(core, 7);
      const std::string path = write_file(file, out + "/policy.rlxp");
      ActorCriticPolicy worker(file.model, 1, /*deterministic=*/true, /*values=*/false);
      worker.load_weights(file.parameters.data(), file.parameters.size(), 0);
      worker.set_obs_normalizer(file.obs_mean, file.obs_var, file.obs_count);
      const Space& actions = core.actions;
      Rng rng(3);
      std::ofstream trace(out + "/trace.jsonl");
      size_t steps = 0;
      for (size_t episode = 0; episode < lengths.size(); ++episode) {
        worker.reset_state(0);  // as rlx evaluate starts each episode
        for (int step = 0; step < lengths[episode]; ++step, ++steps) {
          std::vector<float> obs(4);
          for (float& x : obs) x = static_cast<float>(1.5 * rng.normal());
          int64_t index = 0;
          std::vector<float> values(actions.is_box() ? static_cast<size_t>(actions.size()) : 0);
          float log_prob = 0;
          worker.act(obs.data(), 1, ActOutput{&index, values.data(), &log_prob, nullptr});
          nlohmann::json line = {{"episode", episode}, {"step", step}, {"obs", obs}};
          if (actions.is_discrete()) {
            line["action"] = index + actions.start;
          } else {
            for (size_t j = 0; j < values.size(); ++j) {
              values[j] = std::clamp(values[j], actions.low[j], actions.high[j]);
            }
            line["action"] = values;
          }
          trace << line.dump() << "\n";
        }
      }
      trace.close();
      test::check_cpp_reader(path, test::trace_steps(out + "/trace.jsonl"));
      test::check_python_reader(path, out + "/trace.jsonl", out, steps, static_cast<int64_t>(lengths.size()));
      std::system(("rm -rf " + out).c_str());
    }
  }
}

TEST_CASE("the NumPy reader refuses a stateless act on a recurrent policy, a wrong state and a partial episode",
          "[cli][export][recurrent]") {
  const std::string out = test::temp_dir("recurrent_refusals");
  const std::string recurrent = write_file(recurrent_file(cores()[0], 8), out + "/recurrent.rlxp");
  PolicyFile plain = recurrent_file(cores()[0], 8);
  plain.model.core = "";
  plain.parameters = initial_parameters(actor_critic_layout(plain.model), 3);
  const std::string memoryless = write_file(plain, out + "/memoryless.rlxp");

  const auto checks = run_python(std::string(RLX_SOURCE_DIR) + "/tests/cli/policy_reader_checks.py recurrent " +
                                     recurrent + " " + memoryless,
                                 out);
  INFO(checks.out);
  REQUIRE(checks.exit_code == 0);
  CHECK_THAT(checks.out, Catch::Contains("act: this policy is recurrent (its lstm core carries 32 floats of state "
                                         "from step to step): call `action, state = policy.act(observation, state)`"));
  CHECK_THAT(checks.out,
             Catch::Contains("act needs a state of 32 floats, got 3 (initial_state() at an episode's start"));
  CHECK_THAT(checks.out, Catch::Contains("act needs a state of 0 floats, got 5 (this policy is memoryless: its state, "
                                         "initial_state(), is empty; an action mask goes by keyword, action_mask=)"));

  // A trace whose first episode lacks its first step cannot be replayed by a recurrent policy.
  std::ofstream(out + "/partial.jsonl")
      << nlohmann::json({{"episode", 0}, {"step", 1}, {"obs", {0.0, 0.0, 0.0, 0.0}}, {"action", 1}}).dump() << "\n";
  const auto partial = test::run_python_reader(recurrent + " --check-trace " + out + "/partial.jsonl", out);
  CHECK(partial.exit_code == 2);
  CHECK_THAT(partial.err, Catch::Contains("partial.jsonl line 1: episode 0 step 1 follows no step; a recurrent policy "
                                          "replays whole episodes, each from its step 0 on"));
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("both readers draw a gSDE policy's stochastic actions with the same spread", "[cli][export][sde]") {
  const Core core = cores().back();  // an MLP with gSDE
  REQUIRE(core.sde);
  const std::string out = test::temp_dir("sde_policy");
  PolicyFile file = recurrent_file(core, 7);
  // A log-std of -2.5 everywhere: a spread of a few tenths, well inside the Box's bounds.
  const ParameterSpec log_std = *actor_critic_layout(file.model).log_std;
  std::fill_n(file.parameters.begin() + static_cast<long>(log_std.offset), log_std.size, -2.5f);
  const std::string path = write_file(file, out + "/policy.rlxp");
  const std::vector<float> obs = {0.5f, -0.3f, 1.0f, 0.2f};
  const int draws = 4000, cpp_draws = 40000;
  Policy reader(path, 5);
  double sum = 0, squares = 0;
  for (int d = 0; d < cpp_draws; ++d) {
    const float a = reader.act(obs, /*deterministic=*/false).values.at(0);
    sum += a;
    squares += static_cast<double>(a) * a;
  }
  const double cpp_sd = std::sqrt(squares / cpp_draws - (sum / cpp_draws) * (sum / cpp_draws));
  const auto python = run_python(
      "-c \"import sys, numpy as np; sys.path.insert(0, '" + std::string(RLX_SOURCE_DIR) +
          "/python'); from rlx_policy import Policy; p = Policy('" + path +
          "', seed=5); a = [p.act(np.array([0.5, -0.3, 1.0, 0.2], np.float32), deterministic=False)[0] for _ in "
          "range(" + std::to_string(draws) + ")]; print(float(np.std(a)))\"",
      out);
  INFO(python.out);
  REQUIRE(python.exit_code == 0);
  const double python_sd = std::stod(python.out);
  CHECK((cpp_sd > 0.05 && cpp_sd < 1.0));
  CHECK(python_sd == Approx(cpp_sd).epsilon(0.06));  // 4000 draws: python_sd within ~1.1%; 10,000 matrices: cpp_sd ~0.7%
  std::system(("rm -rf " + out).c_str());
}

TEST_CASE("a recurrent PPO policy trained by rlx train acts as rlx evaluate in both readers, over whole episodes",
          "[cli][export][recurrent]") {
  struct Trained {
    const char* name;
    const char* options;
  };
  // CartPole without velocities: a few short iterations, so that the episodes are of some length.
  const std::vector<Trained> runs = {
      {"an LSTM per chain", "--set lstm_cell_size=16 --set stop.timesteps_total=2048"},
      {"a GRU in a shared trunk",
       "--set use_lstm=false --set use_gru=true --set vf_share_layers=true --set lstm_cell_size=16 "
       "--set stop.timesteps_total=2048"},
      {"an LSTM per chain, then a dense head of 16 per output",
       "--set lstm_cell_size=16 --set head_fcnet_hiddens=[16] --set stop.timesteps_total=2048"}};
  for (const Trained& run : runs) {
    SECTION(run.name) {
      const std::string out = test::temp_dir("recurrent_trained");
      const std::string policy = test::train_export_trace(
          out, "cartpole-novel-ppo.yaml", std::string(run.options) + " --set checkpoint_freq=1", /*episodes=*/3);
      Policy reader(policy);
      CHECK(reader.recurrent());
      CHECK(reader.env_id() == "CartPoleNoVel-v1");
      const std::vector<nlohmann::json> steps = test::trace_steps(out + "/trace.jsonl");
      int starts = 0;
      for (const nlohmann::json& step : steps) starts += step.at("step") == 0;
      CHECK(starts == 3);  // every episode whole, from its step 0
      int from_zeros = 0;  // steps acted otherwise from a zero state: the state matters to this policy
      const std::vector<float> zeros = reader.initial_state();
      for (const nlohmann::json& step : steps) {
        from_zeros += test::act_on_step(reader, step, true, &zeros).index != step.at("action").get<int64_t>();
      }
      CHECK(from_zeros > 0);
      test::check_cpp_reader(policy, steps);
      test::check_python_reader(policy, out + "/trace.jsonl", out, steps.size(), 3);
      // --record films the trace's first episode: the same seed, deterministic, the state stepped alike.
      size_t first_length = 1;
      while (first_length < steps.size() && steps[first_length].at("step") != 0) ++first_length;
      const auto recorded = test::run_rlx("evaluate " + test::last_checkpoint(out, "cartpole-novel-ppo") +
                                          " --deterministic --episodes 1 --seed 3 --record " + out + "/clip.gif");
      INFO(recorded.out << recorded.err);
      REQUIRE(recorded.exit_code == 0);
      CHECK(std::filesystem::file_size(out + "/clip.gif") > 0);
      const std::string summary = recorded.out.substr(recorded.out.rfind('{'));
      CHECK(nlohmann::json::parse(summary).at("len_mean").get<double>() == static_cast<double>(first_length));
      std::system(("rm -rf " + out).c_str());
    }
  }
}

}  // namespace
}  // namespace rlx
