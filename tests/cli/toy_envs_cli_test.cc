// `rlx envs list` and `rlx envs info` on the toy envs (envs/toy/) and their Python twins
// (examples/python_env/): the twins print the same spaces and storage as the built-ins.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_rlx.h"

using rlx::test::run_rlx;

namespace {

// `rlx envs info ARGS` parsed; fails the test unless it exits 0.
nlohmann::json env_info(const std::string& args) {
  const auto r = run_rlx("envs info " + args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

// Everything of `rlx envs info` but the id.
nlohmann::json without_id(nlohmann::json info) {
  info.erase("id");
  return info;
}

const std::string kTwinPath = std::string(" --python-path ") + RLX_SOURCE_DIR + "/examples/python_env";

}  // namespace

TEST_CASE("rlx envs list shows the toy envs with their structured spaces", "[cli][envs][toy]") {
  const auto r = run_rlx("envs list");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Toy/IllegalMoves-v0  observation=Box(0, 1, (9,), float32)  action=Discrete(9)"));
  CHECK_THAT(r.out, Catch::Contains("Toy/DictSensors-v0  observation=Dict('goal': Discrete(4), 'grid': Box(0, 1, (3, 3, 1), uint8), "
                                    "'position': Box(-1, 1, (2,), float32))  action=MultiDiscrete([4 3])"));
}

TEST_CASE("rlx envs info prints the toy envs' masks and layouts", "[cli][envs][toy]") {
  const nlohmann::json moves = env_info("Toy/IllegalMoves-v0");
  CHECK(moves["action_mask"] == true);
  CHECK(moves["max_episode_steps"] == 10);
  CHECK(moves["reward_threshold"] == 7.5);
  CHECK(moves["observation_layout"]["floats"] == 9);
  CHECK(moves["observation_layout"]["bytes"] == 0);
  CHECK(moves["observation_layout"]["action_mask_bytes"] == 9);

  const nlohmann::json sensors = env_info("Toy/DictSensors-v0");
  CHECK(sensors["action_mask"] == false);
  CHECK(sensors["max_episode_steps"] == 8);
  CHECK(sensors["action_space"]["type"] == "MultiDiscrete");
  const nlohmann::json& layout = sensors["observation_layout"];
  CHECK(layout["floats"] == 3);
  CHECK(layout["bytes"] == 9);
  CHECK(layout["flat_size"] == 15);
  REQUIRE(layout["leaves"].size() == 3);
  CHECK(layout["leaves"][0]["path"] == "observation['goal']");
  CHECK(layout["leaves"][1]["path"] == "observation['grid']");
  CHECK(layout["leaves"][1]["storage"] == "bytes");
  CHECK(layout["leaves"][2]["path"] == "observation['position']");
}

TEST_CASE("rlx envs info prints the same spaces for the toy envs' Python twins", "[cli][envs][toy][python]") {
  CHECK(without_id(env_info("python:illegal_moves:IllegalMovesEnv" + kTwinPath)) == without_id(env_info("Toy/IllegalMoves-v0")));
  CHECK(without_id(env_info("python:dict_sensors:DictSensorsEnv" + kTwinPath)) == without_id(env_info("Toy/DictSensors-v0")));
}

TEST_CASE("rlx envs rollout steps the toy envs with legal random actions and given MultiDiscrete ones", "[cli][envs][toy]") {
  const auto moves = run_rlx("envs rollout Toy/IllegalMoves-v0 --seed 1");
  REQUIRE(moves.exit_code == 0);
  std::istringstream lines(moves.out);
  std::vector<nlohmann::json> steps;
  for (std::string line; std::getline(lines, line);) steps.push_back(nlohmann::json::parse(line));
  REQUIRE(steps.size() == 11);  // the reset and 10 legal moves, the last truncated
  for (size_t t = 1; t < steps.size(); ++t) {
    const int cell = steps[t]["action"];
    CHECK(steps[t - 1]["action_mask"][static_cast<size_t>(cell)] == 1);  // the random action was legal
    CHECK(steps[t]["terminated"] == false);
  }
  CHECK(steps.back()["truncated"] == true);

  const auto sensors = run_rlx("envs rollout Toy/DictSensors-v0 --seed 1 --actions 3,2,0,1");
  REQUIRE(sensors.exit_code == 0);
  CHECK_THAT(sensors.out, Catch::Contains("\"step\": 1, \"action\": [3, 2]"));
  CHECK_THAT(sensors.out, Catch::Contains("\"step\": 2, \"action\": [0, 1]"));
  const auto random = run_rlx("envs rollout Toy/DictSensors-v0 --seed 1");
  CHECK(random.exit_code == 0);
  CHECK(std::count(random.out.begin(), random.out.end(), '\n') == 9);
  const auto wrong = run_rlx("envs rollout Toy/DictSensors-v0 --seed 1 --actions 4,0");
  CHECK(wrong.exit_code == 2);
  CHECK_THAT(wrong.err, Catch::Contains("is not a value of element 0 of MultiDiscrete([4 3])"));
}
