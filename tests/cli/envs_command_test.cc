#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_rlx.h"
#include "../core/test_util.h"
#include "core/file_read.h"

using rlx::test::run_rlx;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string join(const nlohmann::json& values) {
  std::string text;
  for (const auto& v : values) {
    std::ostringstream item;
    item.precision(17);
    item << v.get<double>();
    text += (text.empty() ? "" : ",") + item.str();
  }
  return text;
}

}  // namespace

TEST_CASE("rlx --help lists every bench, including learner", "[cli]") {
  const auto r = run_rlx("--help");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("benchmarks: transport, sampling, scale, learner"));
}

TEST_CASE("rlx --help and every subcommand's --help succeed", "[cli]") {
  for (const char* args : {"--help", "envs --help", "envs list --help", "envs info --help", "envs rollout --help",
                           "envs bench --help"}) {
    INFO(args);
    const auto r = run_rlx(args);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("usage: rlx"));
  }
}

TEST_CASE("rlx envs list shows every built-in id with its spaces", "[cli]") {
  const auto r = run_rlx("envs list");
  REQUIRE(r.exit_code == 0);
  for (const char* id : {"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1",
                         "Hopper-v4", "HalfCheetah-v4", "Walker2d-v4", "Ant-v4", "InvertedPendulum-v4",
                         "CartPoleNoVel-v1", "PendulumNoVel-v1", "MountainCarContinuousNoVel-v0"}) {
    CHECK_THAT(r.out, Catch::Contains(std::string(id) + "  observation=Box("));
  }
  CHECK_THAT(r.out, Catch::Contains("CartPole-v1  observation=Box([-4.8 -inf -0.418879 -inf], "
                                    "[4.8 inf 0.418879 inf], (4,), float32)  action=Discrete(2)"));
}

TEST_CASE("rlx envs info prints the spec as JSON", "[cli]") {
  const auto r = run_rlx("envs info Pendulum-v1");
  REQUIRE(r.exit_code == 0);
  const auto spec = nlohmann::json::parse(r.out);
  CHECK(spec["id"] == "Pendulum-v1");
  CHECK(spec["max_episode_steps"] == 200);
  CHECK(spec["action_space"]["type"] == "Box");
  CHECK(spec["action_space"]["high"] == 2.0);  // bounds every element shares are written once
  CHECK(spec["observation_space"]["shape"] == nlohmann::json::array({3}));
  const auto masked = run_rlx("envs info CartPoleNoVel-v1");
  REQUIRE(masked.exit_code == 0);
  const auto masked_spec = nlohmann::json::parse(masked.out);
  CHECK(masked_spec["id"] == "CartPoleNoVel-v1");
  CHECK(masked_spec["max_episode_steps"] == 500);
  CHECK(masked_spec["reward_threshold"] == 475.0);
}

TEST_CASE("an unknown env id is an input error that lists the known ones, suggests one and names plugins", "[cli]") {
  for (const char* args : {"envs info NoSuchEnv-v0", "envs rollout NoSuchEnv-v0 --seed 1", "envs bench NoSuchEnv-v0"}) {
    INFO(args);
    const auto r = run_rlx(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("NoSuchEnv-v0") && Catch::Contains("CartPole-v1") && Catch::Contains("--env-plugin"));
  }
  const auto r = run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --set env=CartPol-v1 -q");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("did you mean 'CartPole-v1'?"));
}

TEST_CASE("rlx envs rollout replays a reference trajectory", "[cli]") {
  std::ifstream in(std::string(RLX_TEST_DATA_DIR) + "/gymnasium-classic.jsonl");
  std::string line;
  bool checked_pendulum = false, checked_cartpole = false;
  while (std::getline(in, line) && !(checked_pendulum && checked_cartpole)) {
    const auto ref = nlohmann::json::parse(line);
    const std::string env = ref["env"];
    if (env != "Pendulum-v1" && env != "CartPole-v1") continue;
    if ((env == "Pendulum-v1" && checked_pendulum) || (env == "CartPole-v1" && checked_cartpole)) continue;
    nlohmann::json flat_actions = nlohmann::json::array();
    for (const auto& a : ref["actions"]) {
      if (a.is_array()) {
        for (const auto& v : a) flat_actions.push_back(v);
      } else {
        flat_actions.push_back(a);
      }
    }
    const auto r = run_rlx("envs rollout " + env + " --seed " + std::to_string(ref["seed"].get<int>()) + " --state " +
                           join(ref["state"]) + " --actions " + join(flat_actions));
    REQUIRE(r.exit_code == 0);
    const auto lines = lines_of(r.out);
    REQUIRE(lines.size() == ref["steps"].size() + 1);  // the first observation, then one line per step
    // Line 0: the observation the first action acts on, after the reset and --state.
    const auto first = nlohmann::json::parse(lines[0]);
    CHECK(first.size() == 2);
    CHECK(first["step"] == 0);
    const auto& state = ref["state"];
    const std::vector<double> state_obs =
        env == "CartPole-v1" ? state.get<std::vector<double>>()
                             : std::vector<double>{std::cos(state[0].get<double>()), std::sin(state[0].get<double>()),
                                                   state[1].get<double>()};
    REQUIRE(first["obs"].size() == state_obs.size());
    for (size_t i = 0; i < state_obs.size(); ++i) CHECK(first["obs"][i].get<double>() == Approx(state_obs[i]).margin(1e-6));
    for (size_t t = 1; t < lines.size(); ++t) {
      const auto step = nlohmann::json::parse(lines[t]);
      const auto& expected = ref["steps"][t - 1];
      REQUIRE(step["step"] == t);
      const auto& action = ref["actions"][t - 1];
      if (action.is_array()) {
        REQUIRE(step["action"].size() == action.size());
        for (size_t i = 0; i < action.size(); ++i) {
          REQUIRE(step["action"][i].get<double>() == Approx(action[i].get<double>()).margin(1e-6));
        }
      } else {
        REQUIRE(step["action"] == action);
      }
      for (size_t i = 0; i < expected["obs"].size(); ++i) {
        REQUIRE(step["obs"][i].get<double>() == Approx(expected["obs"][i].get<double>()).margin(1e-4));
      }
      REQUIRE(step["reward"].get<double>() == Approx(expected["reward"].get<double>()).margin(1e-4));
      REQUIRE(step["terminated"] == expected["terminated"]);
      REQUIRE(step["truncated"] == expected["truncated"]);
    }
    (env == "Pendulum-v1" ? checked_pendulum : checked_cartpole) = true;
  }
  CHECK(checked_pendulum);
  CHECK(checked_cartpole);
}

TEST_CASE("rlx envs rollout with random actions stops at the end of the episode", "[cli]") {
  const auto a = run_rlx("envs rollout CartPole-v1 --seed 3");
  const auto b = run_rlx("envs rollout CartPole-v1 --seed 3");
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  const auto lines = lines_of(a.out);
  REQUIRE(lines.size() >= 2);
  const auto last = nlohmann::json::parse(lines.back());
  CHECK((last["terminated"].get<bool>() || last["truncated"].get<bool>()));
  for (size_t t = 1; t < lines.size(); ++t) {
    const auto step = nlohmann::json::parse(lines[t]);
    CHECK(step["step"] == t);
    CHECK((step["action"] == 0 || step["action"] == 1));
    if (t + 1 < lines.size()) CHECK_FALSE(step["terminated"].get<bool>());
  }
  const auto limited = run_rlx("envs rollout Pendulum-v1 --seed 3 --steps 7");
  CHECK(lines_of(limited.out).size() == 8);
}

TEST_CASE("rlx envs rollout prints the first observation, then each step's number and action", "[cli]") {
  const auto r = run_rlx("envs rollout Pendulum-v1 --seed 0 --state 0.1,0.2 --actions 0.5,-2,1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  const auto first = nlohmann::json::parse(lines[0]);
  CHECK(first.size() == 2);  // step and obs only: no action has been taken yet
  CHECK(first["step"] == 0);
  REQUIRE(first["obs"].size() == 3);
  CHECK(first["obs"][0].get<double>() == Approx(std::cos(0.1)).margin(1e-6));
  CHECK(first["obs"][1].get<double>() == Approx(std::sin(0.1)).margin(1e-6));
  CHECK(first["obs"][2].get<double>() == Approx(0.2).margin(1e-6));
  const double actions[] = {0.5, -2, 1};
  for (size_t t = 1; t < lines.size(); ++t) {
    const auto step = nlohmann::json::parse(lines[t]);
    CHECK(step["step"] == t);
    CHECK(step["action"] == nlohmann::json::array({actions[t - 1]}));  // a Box action: an array
    for (const char* key : {"obs", "reward", "terminated", "truncated"}) CHECK(step.contains(key));
  }
  const auto discrete = run_rlx("envs rollout CartPole-v1 --seed 1 --actions 1,0");
  REQUIRE(discrete.exit_code == 0);
  CHECK(nlohmann::json::parse(lines_of(discrete.out).at(1))["action"] == 1);  // a Discrete action: an integer
  CHECK(nlohmann::json::parse(lines_of(discrete.out).at(2))["action"] == 0);
}

TEST_CASE("rlx envs rollout names bad input", "[cli]") {
  auto r = run_rlx("envs rollout CartPole-v1 --seed 1 --actions 0,1,2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--actions: item 3") && Catch::Contains("Discrete(2)"));
  r = run_rlx("envs rollout CartPole-v1 --seed 1 --actions 0,x");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("item 2 'x' is not a number"));
  r = run_rlx("envs rollout CartPole-v1 --seed 1 --state 0.1,0.2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("state of 4 values, got 2"));
  r = run_rlx("envs rollout CartPole-v1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--seed"));
  r = run_rlx("envs rollout CartPole-v1 --seed 1 --bogus 3");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bogus"));
}

TEST_CASE("rlx envs bench prints a final machine-readable figure", "[cli]") {
  const auto r = run_rlx("envs bench CartPole-v1 --envs 4 --steps 2000 --repeats 3");
  REQUIRE(r.exit_code == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  REQUIRE(lines.back().rfind("env_steps_per_s=", 0) == 0);
  CHECK(std::stod(lines.back().substr(16)) > 0.0);
  CHECK(run_rlx("envs bench CartPole-v1 --envs 0").exit_code == 2);
}

TEST_CASE("unknown commands and missing plugins are clear errors", "[cli]") {
  auto r = run_rlx("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown command 'frobnicate'"));
  r = run_rlx("envs list --env-plugin /nonexistent/libnothing.so");
  CHECK(r.exit_code == 2);  // bad input, as in every command (exit_status_test.cc)
  CHECK_THAT(r.err, Catch::Contains("/nonexistent/libnothing.so"));
}

TEST_CASE("rlx bench sampling prints raw, local and pipeline figures side by side", "[cli][bench]") {
  const auto r = run_rlx("bench sampling --env CartPole-v1 --workers 1 --envs-per-worker 2 --seconds 0.5");
  REQUIRE(r.exit_code == 0);
  for (const char* key : {"raw_env_steps_per_s=", "local_steps_per_s=", "pipeline_env_steps_per_s=", "pipeline_ratio=", "local_over_raw="}) {
    const size_t at = r.out.find(std::string("\n") + key);
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(r.out.substr(at + 1 + std::string(key).size())) > 0.0);
  }
  CHECK(run_rlx("bench sampling --env CartPole-v1 --workers 0").exit_code == 2);
  CHECK(run_rlx("bench sampling").exit_code == 2);
}

TEST_CASE("rlx keys makes a learner key pair and authorized worker keys", "[cli][auth]") {
  const std::string dir = std::string(RLX_BINARY_DIR) + "/tests/keys_" + std::to_string(::getpid());
  std::system(("rm -rf " + dir).c_str());
  auto r = run_rlx("keys add-worker " + dir + " w1");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("server.pub"));
  REQUIRE(run_rlx("keys init " + dir).exit_code == 0);
  r = run_rlx("keys init " + dir);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("refusing to replace"));
  REQUIRE(run_rlx("keys add-worker " + dir + " w1").exit_code == 0);
  const std::string client_pub = rlx::test::read_text_file(dir + "/workers/w1/client.pub");
  CHECK(client_pub.size() >= 40);
  CHECK(rlx::test::read_text_file(dir + "/clients/w1.pub") == client_pub);
  CHECK(rlx::test::read_text_file(dir + "/workers/w1/server.pub") == rlx::test::read_text_file(dir + "/server.pub"));
  CHECK(rlx::test::read_text_file(dir + "/clients/w1.key").empty());  // no secret beside the learner
  CHECK(run_rlx("keys add-worker " + dir + " w1").exit_code == 1);
  CHECK(run_rlx("keys add-worker " + dir + " ../evil").exit_code == 2);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("plugins given with --env-plugin are usable by the CLI and its worker processes", "[cli][plugins]") {
  const std::string plugin = RLX_TEST_PLUGIN_GOOD;
  auto r = run_rlx("envs list --env-plugin " + plugin);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("PluginCounter-v0  observation=Box("));
  r = run_rlx("envs rollout PluginCounter-v0 --seed 1 --steps 3 --env-plugin " + plugin);
  CHECK(r.exit_code == 0);
  r = run_rlx("bench sampling --env PluginCounter-v0 --workers 1 --envs-per-worker 2 --seconds 0.3 --env-plugin " + plugin);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("pipeline_ratio="));
  CHECK(run_rlx("envs info PluginCounter-v0").exit_code == 2);  // not loaded without the flag
}

TEST_CASE("rlx envs list and info show a multi-agent env's agents and their spaces", "[cli][multi_agent]") {
  const auto list = run_rlx(std::string("envs list --env-plugin ") + RLX_TEST_PLUGIN_MULTI_AGENT);
  REQUIRE(list.exit_code == 0);
  CHECK_THAT(list.out, Catch::Contains("MultiAgentCartPole-v0  multi-agent  agents=agent_0,agent_1,agent_2,agent_3  observation=Box("));
  CHECK_THAT(list.out, Catch::Contains("PluginTurns-v0  multi-agent  agents=first,second  observation=Box(0, 100, (1,), float32)  action=Discrete(2)"));

  const auto info = run_rlx("envs info MultiAgentCartPole-v0");
  REQUIRE(info.exit_code == 0);
  const nlohmann::json spec = nlohmann::json::parse(info.out);
  CHECK(spec["multi_agent"] == true);
  CHECK(spec["reward_threshold"] == 1900.0);
  REQUIRE(spec["agents"].size() == 4);
  CHECK(spec["agents"][3]["id"] == "agent_3");
  CHECK(spec["agents"][3]["action_space"]["n"] == 2);
  CHECK(spec["agents"][3]["observation_layout"]["flat_size"] == 4);

  // A command that takes a single-agent env says what the id is, with exit status 2.
  const auto record = run_rlx("envs bench MultiAgentCartPole-v0");
  CHECK(record.exit_code == 2);
  CHECK_THAT(record.err, Catch::Contains("environment 'MultiAgentCartPole-v0' is multi-agent, not single-agent as this needs"));
}

TEST_CASE("A single-agent experiment file trains on a multi-agent env, every agent sharing one policy", "[cli][multi_agent]") {
  rlx::test::TempDir tmp;
  const std::string file = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --set env=MultiAgentCartPole-v0 -q";
  // As the file says (worker processes), and in this process (--workers 0).
  const auto with_workers = run_rlx("train " + file + " --set stop.training_iteration=2 --output " + (tmp / "workers").string());
  INFO(with_workers.out << with_workers.err);
  CHECK(with_workers.exit_code == 3);
  const auto train = run_rlx("train " + file + " --workers 0 --set stop.training_iteration=2 --output " + tmp.path().string());
  REQUIRE(train.exit_code == 3);  // the iteration budget, not the reward, ended it
  const auto trials = std::filesystem::directory_iterator(tmp.path() / "cartpole-ppo");
  const std::filesystem::path trial = trials->path();
  const std::string header = rlx::read_file(trial / "progress.csv").substr(0, 4000);
  CHECK_THAT(header, Catch::Contains("policy/default_policy/episode_return_mean") &&
                         Catch::Contains("agent/agent_3/episode_return_mean") &&
                         Catch::Contains("policy/default_policy/learner/policy_loss") &&
                         Catch::Contains("num_agent_steps_sampled"));
}
