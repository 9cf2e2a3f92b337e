// MinAtar games (envs/minatar/): their descriptions, determinism and exact snapshots, sticky
// actions, rendering, and agreement with the reference implementation
// (tests/data/minatar-random-policy.json, made by tests/data/minatar_reference_stats.py):
// bit-identical trajectories under rlx::Rng's stream, and random-policy statistics within 4
// standard errors. The rules of each game are shown in minatar_rules_test.cc and
// minatar_shooter_rules_test.cc.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "envs/minatar/breakout.h"
#include "tests/envs/minatar_test_util.h"

using namespace minatar_test;

// ---------------------------------------------------------------------------------------------
// The games' descriptions

TEST_CASE("MinAtar games have the reference's channels and action sets", "[envs][minatar]") {
  const std::vector<std::string> names = {"breakout", "asterix", "freeway", "seaquest", "space_invaders"};
  CHECK(rlx::minatar_game_names() == names);
  const std::vector<int> channels = {4, 4, 7, 10, 6};
  const std::vector<std::vector<int>> minimal = {{0, 1, 3}, {0, 1, 2, 3, 4}, {0, 2, 4}, {0, 1, 2, 3, 4, 5}, {0, 1, 3, 5}};
  for (size_t i = 0; i < names.size(); ++i) {
    const auto game = make(names[i]);
    INFO(names[i]);
    CHECK(game->name() == names[i]);
    CHECK(game->channels() == channels[i]);
    CHECK(game->channel_names().size() == size_t(channels[i]));
    CHECK(game->observation_size() == 100 * channels[i]);
    CHECK(game->minimal_action_set() == minimal[i]);
  }
  CHECK(make("breakout")->channel_names() == std::vector<std::string>{"paddle", "ball", "trail", "brick"});
  CHECK(make("space_invaders")->channel_names()[3] == "alien_right");
  CHECK(MinAtarGame::action_names() == std::vector<std::string>{"noop", "left", "up", "right", "down", "fire"});
}

TEST_CASE("make_minatar_game rejects an unknown name, naming the known games and a likely one", "[envs][minatar]") {
  CHECK_THROWS_WITH(rlx::make_minatar_game("spaceinvaders", {}),
                    Catch::Contains("did you mean 'space_invaders'") && Catch::Contains("breakout, asterix"));
  CHECK_THROWS_AS(rlx::make_minatar_game("pong", {}), std::invalid_argument);
  CHECK_THROWS_WITH(rlx::make_minatar_game("breakout", MinAtarOptions{1.5, true}), Catch::Contains("[0, 1]"));
}

TEST_CASE("A MinAtar game rejects an action outside the full set and a step before reset", "[envs][minatar]") {
  auto game = make("breakout");
  Rng rng(1);
  CHECK_THROWS_AS(game->step(0, rng), std::logic_error);
  game->reset(rng);
  CHECK_THROWS_AS(game->step(6, rng), std::invalid_argument);
  CHECK_THROWS_AS(game->step(-1, rng), std::invalid_argument);
}


// ---------------------------------------------------------------------------------------------
// Determinism and exact snapshots

namespace {

// Every observation, reward and terminal flag of `steps` steps of a random policy over the full
// action set (resetting after each episode), as one byte string.
std::string play(MinAtarGame& game, Rng& rng, Rng& policy, int steps) {
  std::string record;
  std::vector<uint8_t> obs(static_cast<size_t>(game.observation_size()));
  for (int t = 0; t < steps; ++t) {
    const auto outcome = game.step(static_cast<int>(policy.uniform_int(MinAtarGame::kNumActions)), rng);
    game.write_observation(obs.data());
    record.append(reinterpret_cast<const char*>(obs.data()), obs.size());
    record += std::to_string(outcome.reward) + (outcome.terminal ? "T" : "-");
    if (outcome.terminal) game.reset(rng);
  }
  return record;
}

}  // namespace

TEST_CASE("A MinAtar game given the same seed and actions plays the same", "[envs][minatar]") {
  for (const auto& name : rlx::minatar_game_names()) {
    INFO(name);
    std::string runs[3];
    for (int i = 0; i < 3; ++i) {
      auto game = make(name, MinAtarOptions{});
      Rng rng(i < 2 ? 11 : 12);
      Rng policy(5);
      game->reset(rng);
      runs[i] = play(*game, rng, policy, 3000);
    }
    CHECK(runs[0] == runs[1]);
    CHECK(runs[0] != runs[2]);  // another seed: other sticky draws and spawns
  }
}

TEST_CASE("restore_exact_state continues a MinAtar game exactly where exact_state left it", "[envs][minatar]") {
  for (const auto& name : rlx::minatar_game_names()) {
    INFO(name);
    auto original = make(name, MinAtarOptions{});
    Rng rng(21);
    Rng policy(22);
    original->reset(rng);
    play(*original, rng, policy, 777);
    const std::vector<double> snapshot = original->exact_state();
    const Rng::State rng_state = rng.state();
    const Rng::State policy_state = policy.state();
    const std::string expected = play(*original, rng, policy, 2000);

    auto copy = make(name, MinAtarOptions{});
    copy->restore_exact_state(snapshot);
    CHECK(copy->exact_state() == snapshot);
    rng.set_state(rng_state);
    policy.set_state(policy_state);
    CHECK(play(*copy, rng, policy, 2000) == expected);
  }
}

TEST_CASE("restore_exact_state rejects a wrong size or an impossible value and changes nothing", "[envs][minatar]") {
  auto game = make("breakout");
  Rng rng(1);
  game->reset(rng);
  const std::vector<double> before = game->exact_state();
  std::vector<double> state = before;
  state.pop_back();
  CHECK_THROWS_WITH(game->restore_exact_state(state), Catch::Contains("expected " + std::to_string(before.size())));
  state = before;
  state[3] = 12;  // ball_x
  CHECK_THROWS_WITH(game->restore_exact_state(state), Catch::Contains("ball_x") && Catch::Contains("[0, 9]"));
  state = before;
  state[2] = 2.5;  // paddle_x
  CHECK_THROWS_AS(game->restore_exact_state(state), std::invalid_argument);
  CHECK(game->exact_state() == before);

  SeaquestSetup facing_off_screen;
  facing_off_screen.sub_x = 0;
  facing_off_screen.facing_right = true;
  CHECK_THROWS_WITH(make("seaquest")->restore_exact_state(seaquest_state(facing_off_screen)),
                    Catch::Contains("back would be off screen"));
  CHECK_THROWS_AS(make("freeway")->restore_exact_state(before), std::invalid_argument);
}

TEST_CASE("MinAtar observations hold only 0 and 1 and overwrite the whole buffer", "[envs][minatar]") {
  for (const auto& name : rlx::minatar_game_names()) {
    INFO(name);
    auto game = make(name, MinAtarOptions{});
    Rng rng(31);
    game->reset(rng);
    std::vector<uint8_t> obs(static_cast<size_t>(game->observation_size()), 0xff);
    bool only_bits = true;
    for (int t = 0; t < 3000; ++t) {
      if (game->step(static_cast<int>(rng.uniform_int(6)), rng).terminal) game->reset(rng);
      game->write_observation(obs.data());
      for (uint8_t v : obs) only_bits = only_bits && v <= 1;
      std::memset(obs.data(), 0xff, obs.size());
    }
    CHECK(only_bits);
  }
}

// ---------------------------------------------------------------------------------------------
// Sticky actions

TEST_CASE("With sticky_action_prob 1 a game keeps repeating its last action, across resets", "[envs][minatar]") {
  auto game = make("breakout", MinAtarOptions{1.0, true});
  std::vector<double> state = breakout_state(4, 5, 4, +1, -1, kFullWall);
  state[0] = MinAtarGame::kRight;  // the last action
  game->restore_exact_state(state);
  Rng rng(1);
  game->step(MinAtarGame::kLeft, rng);
  CHECK(game->last_action() == MinAtarGame::kRight);
  CHECK(observe(*game).at(5, 9, rlx::Breakout::kPaddle));
  game->reset(rng);
  game->step(MinAtarGame::kLeft, rng);
  CHECK(observe(*game).at(5, 9, rlx::Breakout::kPaddle));
}

TEST_CASE("Sticky actions replace the chosen action by the previous one with probability 0.1", "[envs][minatar]") {
  auto game = make("breakout", MinAtarOptions{});
  Rng rng(41);
  game->reset(rng);
  // Alternating left and right, a step plays the other action when it sticks and the previous
  // step did not: p = 0.1 * (1 - p), so p = 1/11.
  constexpr int kSteps = 200000;
  int replaced = 0;
  for (int t = 0; t < kSteps; ++t) {
    const int action = t % 2 == 0 ? MinAtarGame::kLeft : MinAtarGame::kRight;
    const bool terminal = game->step(action, rng).terminal;
    replaced += game->last_action() != action ? 1 : 0;
    if (terminal) game->reset(rng);
  }
  CHECK(std::abs(double(replaced) / kSteps - 1.0 / 11.0) < 0.004);  // about 6 standard errors
}

// ---------------------------------------------------------------------------------------------
// Rendering

TEST_CASE("A MinAtar game renders each cell in the colour of its highest channel on black", "[envs][minatar]") {
  auto game = make("breakout");
  Rng rng(1);
  game->reset(rng);
  rlx::RgbImage image;
  game->render(image);
  REQUIRE(image.width == MinAtarGame::kRenderSize);
  REQUIRE(image.height == 160);
  const auto colour = [&image](int cell_x, int cell_y, int dx = 8, int dy = 8) {
    const uint8_t* p = image.pixel(cell_x * 16 + dx, cell_y * 16 + dy);
    return std::vector<int>{p[0], p[1], p[2]};
  };
  CHECK(colour(5, 6) == std::vector<int>{0, 0, 0});
  CHECK(colour(4, 9) != std::vector<int>{0, 0, 0});       // paddle
  CHECK(colour(0, 1) != std::vector<int>{0, 0, 0});       // brick
  CHECK(colour(0, 1) != colour(4, 9));                    // another channel, another colour
  CHECK(colour(0, 1, 0, 0) == colour(0, 1, 15, 15));      // the whole cell
  CHECK(colour(0, 1) == colour(9, 3));
}

// ---------------------------------------------------------------------------------------------
// Agreement with the reference implementation

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json data = [] {
    std::ifstream in(std::string(RLX_TEST_DATA_DIR) + "/minatar-random-policy.json");
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
  }();
  return data;
}

}  // namespace

TEST_CASE("Every MinAtar game replays the reference's trajectories bit for bit under rlx::Rng", "[envs][minatar]") {
  // The reference, its numpy generator swapped for a Python copy of rlx::Rng, recorded these runs;
  // the games draw in the reference's order, so every frame must agree.
  const auto& trajectories = reference().at("trajectories");
  const int steps = trajectories.at("steps").get<int>();
  for (const auto& name : rlx::minatar_game_names()) {
    INFO(name);
    const auto& expected = trajectories.at("games").at(name);
    auto game = make(name, MinAtarOptions{});
    Rng rng(expected.at("game_seed").get<uint64_t>());
    Rng policy(expected.at("policy_seed").get<uint64_t>());
    std::vector<uint8_t> obs(static_cast<size_t>(game->observation_size()));
    rlx::Sha256 digest;
    const auto hash_observation = [&] {
      game->write_observation(obs.data());
      digest.update(obs.data(), obs.size());
    };
    game->reset(rng);
    hash_observation();
    int episodes = 0;
    int64_t total_reward = 0;
    for (int t = 0; t < steps; ++t) {
      const auto outcome = game->step(static_cast<int>(policy.uniform_int(MinAtarGame::kNumActions)), rng);
      hash_observation();
      const auto reward = static_cast<int32_t>(outcome.reward);
      const uint8_t record[5] = {uint8_t(reward), uint8_t(reward >> 8), uint8_t(reward >> 16), uint8_t(reward >> 24),
                                 uint8_t(outcome.terminal ? 1 : 0)};
      digest.update(record, sizeof record);
      total_reward += reward;
      if (outcome.terminal) {
        ++episodes;
        game->reset(rng);
        hash_observation();
      }
    }
    CHECK(episodes == expected.at("episodes").get<int>());
    CHECK(total_reward == expected.at("total_reward").get<int64_t>());
    CHECK(digest.hex_digest() == expected.at("sha256").get<std::string>());
  }
}

namespace {

struct RandomPolicyStats {
  int episodes = 0;
  double return_mean = 0, return_std = 0, length_mean = 0, length_std = 0;
  double reward_per_step = 0, reward_per_step_stderr = 0;
};

// A uniformly random policy over the minimal action set, sticky actions and ramping on.
RandomPolicyStats random_policy_stats(const std::string& name, int episodes, uint64_t seed) {
  auto game = make(name, MinAtarOptions{});
  const std::vector<int> actions = game->minimal_action_set();
  Rng rng(seed);
  Rng policy(seed + 1);
  std::vector<double> returns, lengths;
  for (int e = 0; e < episodes; ++e) {
    game->reset(rng);
    double total = 0;
    int length = 0;
    for (bool done = false; !done; ++length) {
      const auto outcome = game->step(actions[size_t(policy.uniform_int(int64_t(actions.size())))], rng);
      total += outcome.reward;
      done = outcome.terminal;
    }
    returns.push_back(total);
    lengths.push_back(length);
  }
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / double(v.size());
  };
  const auto std_dev = [](const std::vector<double>& v, double m) {
    double sum = 0;
    for (double x : v) sum += (x - m) * (x - m);
    return std::sqrt(sum / double(v.size() - 1));
  };
  RandomPolicyStats stats;
  stats.episodes = episodes;
  stats.return_mean = mean(returns);
  stats.return_std = std_dev(returns, stats.return_mean);
  stats.length_mean = mean(lengths);
  stats.length_std = std_dev(lengths, stats.length_mean);
  stats.reward_per_step = stats.return_mean / stats.length_mean;
  std::vector<double> residuals;  // the ratio's standard error by the delta method
  for (size_t i = 0; i < returns.size(); ++i) residuals.push_back(returns[i] - stats.reward_per_step * lengths[i]);
  stats.reward_per_step_stderr = std_dev(residuals, 0.0) / (stats.length_mean * std::sqrt(double(episodes)));
  return stats;
}

}  // namespace

TEST_CASE("A random policy's returns, lengths and reward rate match the reference's within 4 standard errors",
          "[envs][minatar]") {
  // Episodes per game here: enough for standard errors near the reference's, in about a second.
  const std::vector<std::pair<std::string, int>> runs = {
      {"breakout", 100000}, {"asterix", 50000}, {"freeway", 4000}, {"seaquest", 100000}, {"space_invaders", 50000}};
  for (const auto& [name, episodes] : runs) {
    const auto& ref = reference().at("games").at(name);
    const RandomPolicyStats mine = random_policy_stats(name, episodes, 2024);
    const double n_ref = ref.at("episodes").get<double>();
    const auto check_mean = [&](const char* what, double mean, double std_dev, const char* mean_key, const char* std_key) {
      const double ref_mean = ref.at(mean_key).get<double>();
      const double ref_std = ref.at(std_key).get<double>();
      const double margin = 4.0 * std::sqrt(ref_std * ref_std / n_ref + std_dev * std_dev / episodes);
      INFO(name << " " << what << ": rlx " << mean << " (sd " << std_dev << ", " << episodes << " episodes), reference "
                << ref_mean << " (sd " << ref_std << ", " << n_ref << " episodes), allowed difference " << margin);
      CHECK(std::abs(mean - ref_mean) <= margin);
    };
    check_mean("episode return", mine.return_mean, mine.return_std, "return_mean", "return_std");
    check_mean("episode length", mine.length_mean, mine.length_std, "length_mean", "length_std");
    const double ref_rate = ref.at("reward_per_step").get<double>();
    const double ref_rate_se = ref.at("reward_per_step_stderr").get<double>();
    const double margin = 4.0 * std::hypot(ref_rate_se, mine.reward_per_step_stderr);
    INFO(name << " reward per step: rlx " << mine.reward_per_step << ", reference " << ref_rate << ", allowed "
              << margin);
    CHECK(std::abs(mine.reward_per_step - ref_rate) <= margin);
  }
}
