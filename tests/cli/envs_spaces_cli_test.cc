// `rlx envs` on envs beyond float Boxes: the MinAtar ids (uint8 grids) in list, info, rollout and
// bench, a plugin env with a Dict observation and an action mask in info, and the synthetic pixel
// env that only the benchmark commands register.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_rlx.h"

using rlx::test::run_rlx;

namespace {

std::vector<std::string> output_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The number after "key=" on a line of key=value output; fails the test when the key is missing.
double figure(const std::string& out, const std::string& key) {
  const size_t at = out.find("\n" + key + "=");
  REQUIRE(at != std::string::npos);
  return std::stod(out.substr(at + key.size() + 2));
}

}  // namespace

TEST_CASE("rlx envs list shows the MinAtar ids with their uint8 grids and action sets", "[cli][minatar]") {
  const auto r = run_rlx("envs list");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("MinAtar/Breakout-v1  observation=Box(0, 1, (10, 10, 4), uint8)  action=Discrete(3)"));
  CHECK_THAT(r.out, Catch::Contains("MinAtar/Breakout-v0  observation=Box(0, 1, (10, 10, 4), uint8)  action=Discrete(6)"));
  CHECK_THAT(r.out, Catch::Contains("MinAtar/Seaquest-v1  observation=Box(0, 1, (10, 10, 10), uint8)  action=Discrete(6)"));
  for (const char* game : {"Asterix", "Freeway", "SpaceInvaders"}) {
    for (const char* version : {"-v0", "-v1"}) CHECK_THAT(r.out, Catch::Contains(std::string("MinAtar/") + game + version + "  "));
  }
  CHECK_THAT(r.out, !Catch::Contains("Synthetic/"));  // benchmark envs stay out of the user's registry
}

TEST_CASE("rlx envs info prints a MinAtar spec with its byte storage and flat input width", "[cli][minatar]") {
  const auto r = run_rlx("envs info MinAtar/Freeway-v1");
  REQUIRE(r.exit_code == 0);
  const auto info = nlohmann::json::parse(r.out);
  CHECK(info["id"] == "MinAtar/Freeway-v1");
  CHECK(info["observation_space"] ==
        nlohmann::json({{"type", "Box"}, {"shape", {10, 10, 7}}, {"low", 0.0}, {"high", 1.0}, {"dtype", "uint8"}}));
  CHECK(info["action_space"] == nlohmann::json({{"type", "Discrete"}, {"n", 3}, {"start", 0}}));
  CHECK(info["max_episode_steps"] == 0);
  CHECK(info["reward_threshold"].is_null());
  CHECK(info["action_mask"] == false);
  const auto& layout = info["observation_layout"];
  CHECK(layout["floats"] == 0);
  CHECK(layout["bytes"] == 700);
  CHECK(layout["action_mask_bytes"] == 0);
  CHECK(layout["flat_size"] == 700);
  REQUIRE(layout["leaves"].size() == 1);
  CHECK(layout["leaves"][0] == nlohmann::json({{"path", "observation"},
                                               {"space", "Box(0, 1, (10, 10, 7), uint8)"},
                                               {"storage", "bytes"},
                                               {"offset", 0},
                                               {"size", 700},
                                               {"flat_offset", 0},
                                               {"flat_size", 700}}));
  // A float env: its floats alone, the flat input as wide.
  const auto cart_pole = nlohmann::json::parse(run_rlx("envs info CartPole-v1").out);
  CHECK(cart_pole["observation_layout"]["floats"] == 4);
  CHECK(cart_pole["observation_layout"]["bytes"] == 0);
  CHECK(cart_pole["observation_layout"]["flat_size"] == 4);
}

TEST_CASE("rlx envs info prints a Dict observation's keys, each leaf's storage and the action mask", "[cli][plugins]") {
  const auto r = run_rlx(std::string("envs info PluginGrid-v0 --env-plugin ") + RLX_TEST_PLUGIN_STRUCTURED);
  REQUIRE(r.exit_code == 0);
  const auto info = nlohmann::json::parse(r.out);
  const auto& observation = info["observation_space"];
  CHECK(observation["type"] == "Dict");
  REQUIRE(observation["spaces"].size() == 2);
  CHECK(observation["spaces"][0]["key"] == "grid");
  CHECK(observation["spaces"][0]["space"]["dtype"] == "uint8");
  CHECK(observation["spaces"][1] == nlohmann::json({{"key", "level"}, {"space", {{"type", "Discrete"}, {"n", 3}, {"start", 1}}}}));
  CHECK(info["action_space"]["type"] == "MultiDiscrete");
  CHECK(info["action_space"]["nvec"] == nlohmann::json({3, 2}));
  CHECK(info["action_mask"] == true);
  const auto& layout = info["observation_layout"];
  CHECK(layout["floats"] == 1);             // the level
  CHECK(layout["bytes"] == 8);              // the 2x2x2 grid
  CHECK(layout["action_mask_bytes"] == 5);  // 3 + 2 actions
  CHECK(layout["flat_size"] == 8 + 3);      // the grid, then the level one-hot
  REQUIRE(layout["leaves"].size() == 2);
  CHECK(layout["leaves"][0]["path"] == "observation['grid']");
  CHECK(layout["leaves"][0]["storage"] == "bytes");
  CHECK(layout["leaves"][1]["path"] == "observation['level']");
  CHECK(layout["leaves"][1]["space"] == "Discrete(3, start=1)");
  CHECK(layout["leaves"][1]["storage"] == "floats");
  CHECK(layout["leaves"][1]["flat_offset"] == 8);
  CHECK(layout["leaves"][1]["flat_size"] == 3);
}

TEST_CASE("rlx envs rollout prints a MinAtar grid's 0/1 values as its observation", "[cli][minatar]") {
  const auto r = run_rlx("envs rollout MinAtar/Breakout-v1 --seed 4 --actions 0,2,1");
  REQUIRE(r.exit_code == 0);
  const auto lines = output_lines(r.out);
  REQUIRE(lines.size() == 4);
  for (const std::string& line : lines) {
    const auto step = nlohmann::json::parse(line);
    REQUIRE(step["obs"].size() == 400);
    int set = 0;
    for (const auto& value : step["obs"]) {
      CHECK((value == 0 || value == 1));
      set += value.get<int>();
    }
    CHECK(set > 30);  // three rows of bricks, the paddle and the ball
    CHECK_FALSE(step.contains("action_mask"));
  }
  CHECK(nlohmann::json::parse(lines[2])["action"] == 2);
  CHECK(run_rlx("envs rollout MinAtar/Breakout-v1 --seed 4 --actions 3").exit_code == 2);  // Discrete(3)
}

TEST_CASE("rlx envs rollout prints a plugin's Dict observation as floats then bytes, and its action mask",
          "[cli][plugins]") {
  const auto r = run_rlx(std::string("envs rollout PluginGrid-v0 --seed 1 --steps 0 --env-plugin ") + RLX_TEST_PLUGIN_STRUCTURED);
  REQUIRE(r.exit_code == 0);
  const auto first = nlohmann::json::parse(output_lines(r.out).at(0));
  CHECK(first["obs"] == nlohmann::json({1, 1, 0, 0, 0, 0, 0, 0, 0}));  // the level, then the grid with cell 0 lit
  CHECK(first["action_mask"] == nlohmann::json({1, 1, 1, 1, 1}));
}

TEST_CASE("rlx envs bench steps a MinAtar id and sets it beside its game alone and one env through the API",
          "[cli][minatar][bench]") {
  const auto r = run_rlx("envs bench MinAtar/Breakout-v1 --steps 2000 --repeats 1");
  REQUIRE(r.exit_code == 0);
  CHECK(figure("\n" + r.out, "env_steps_per_s") > 0.0);
  const double game = figure(r.out, "game_steps_per_s");
  const double api = figure(r.out, "env_api_steps_per_s");
  CHECK(game > 0.0);
  CHECK(api > 0.0);
  CHECK(figure(r.out, "env_api_ratio_to_bare_game") == Approx(api / game).epsilon(0.01));
  CHECK(figure(r.out, "ratio_to_bare_game") > 0.0);
}

TEST_CASE("the benchmark commands know the synthetic 84x84x4 pixel env, the other commands do not", "[cli][bench]") {
  const auto r = run_rlx("envs bench Synthetic/Pixels84-v0 --envs 2 --steps 500 --repeats 1");
  REQUIRE(r.exit_code == 0);
  CHECK(figure("\n" + r.out, "env_steps_per_s") > 0.0);
  CHECK_THAT(r.out, !Catch::Contains("game_steps_per_s"));
  const auto info = run_rlx("envs info Synthetic/Pixels84-v0");
  CHECK(info.exit_code == 2);
  CHECK_THAT(info.err, Catch::Contains("unknown environment id 'Synthetic/Pixels84-v0'"));
}
