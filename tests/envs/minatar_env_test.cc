// MinAtar games as registered envs (envs/minatar/minatar_env.h): the reference's Gymnasium ids and
// spaces, observations that are the game's own, its action sets, the time limit, exact snapshots
// and pictures.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/minatar/minatar_env.h"
#include "envs/registry.h"

namespace {

using rlx::MinAtarActions;

// The game names and their ids' stems, as minatar/gym.py spells them.
const std::vector<std::pair<std::string, std::string>> kGames = {{"breakout", "Breakout"},
                                                                 {"asterix", "Asterix"},
                                                                 {"freeway", "Freeway"},
                                                                 {"seaquest", "Seaquest"},
                                                                 {"space_invaders", "SpaceInvaders"}};

// One env's observation parts, written by its reset and steps.
struct Row {
  std::vector<float> floats;
  std::vector<uint8_t> bytes;
  explicit Row(const rlx::Env& env)
      : floats(static_cast<size_t>(env.observation_layout().float_slots)),
        bytes(static_cast<size_t>(env.observation_layout().byte_slots)) {}
  rlx::ObsRow row() { return rlx::ObsRow(floats.data(), bytes.data()); }
};

// Every observation, reward and flag of `steps` random steps (actions from `policy`), resetting
// where episodes end, as one byte string.
std::string play(rlx::Env& env, Row& obs, rlx::Rng& policy, int steps) {
  std::string record;
  for (int t = 0; t < steps; ++t) {
    rlx::Action action;
    action.index = policy.uniform_int(env.spec().action_space.n);
    const rlx::StepResult result = env.step(action, obs.row());
    record.append(obs.bytes.begin(), obs.bytes.end());
    record += std::to_string(result.reward) + (result.terminated ? "T" : "-") + (result.truncated ? "T" : "-");
    if (result.terminated || result.truncated) env.reset(std::nullopt, obs.row());
  }
  return record;
}

}  // namespace

TEST_CASE("The MinAtar ids carry the reference's spaces, the v1 ids its minimal action sets, and no time limit",
          "[envs][minatar]") {
  const rlx::EnvRegistry& registry = rlx::global_env_registry();
  const std::vector<int> channels = {4, 4, 7, 10, 6};
  const std::vector<int64_t> minimal = {3, 5, 3, 6, 4};
  for (size_t g = 0; g < kGames.size(); ++g) {
    for (const char* version : {"-v0", "-v1"}) {
      const std::string id = "MinAtar/" + kGames[g].second + version;
      INFO(id);
      REQUIRE(registry.contains(id));
      const rlx::EnvSpec& spec = registry.spec(id);
      CHECK(spec.observation_space == rlx::Space::box({10, 10, channels[g]}, 0, 1, rlx::ScalarType::kUint8));
      CHECK(spec.action_space == rlx::Space::discrete(std::string(version) == "-v0" ? 6 : minimal[g]));
      CHECK(spec.max_episode_steps == 0);  // minatar/gym.py registers no max_episode_steps
      CHECK_FALSE(spec.reward_threshold);
      CHECK_FALSE(spec.action_mask);
      const std::unique_ptr<rlx::Env> env = registry.make(id);
      CHECK(env->observation_layout().float_slots == 0);
      CHECK(env->observation_layout().byte_slots == 100 * channels[g]);
    }
    CHECK(rlx::minatar_env_id(kGames[g].first, MinAtarActions::kMinimal) == "MinAtar/" + kGames[g].second + "-v1");
  }
  CHECK_THROWS_WITH(rlx::minatar_env_id("pong", MinAtarActions::kFull), Catch::Contains("unknown MinAtar game 'pong'"));
  CHECK(rlx::MinAtarEnv("space_invaders", MinAtarActions::kMinimal).action_set() == std::vector<int>{0, 1, 3, 5});
  CHECK(rlx::MinAtarEnv("space_invaders", MinAtarActions::kFull).action_set() == std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("A MinAtar env's observations, rewards and ends are its game's for the same seed and actions",
          "[envs][minatar]") {
  for (const auto& [name, stem] : kGames) {
    for (const MinAtarActions actions : {MinAtarActions::kFull, MinAtarActions::kMinimal}) {
      const std::string id = rlx::minatar_env_id(name, actions);
      INFO(id);
      const std::unique_ptr<rlx::Env> env = rlx::global_env_registry().make(id);
      const std::unique_ptr<rlx::MinAtarGame> game = rlx::make_minatar_game(name);
      const std::vector<int> action_set =
          actions == MinAtarActions::kMinimal ? game->minimal_action_set() : std::vector<int>{0, 1, 2, 3, 4, 5};
      Row obs(*env);
      std::vector<uint8_t> expected(static_cast<size_t>(game->observation_size()));
      rlx::Rng game_rng(17), policy(4);
      env->reset(17, obs.row());  // the env's generator starts where Rng(17) does
      game->reset(game_rng);
      game->write_observation(expected.data());
      REQUIRE(obs.bytes == expected);
      int episodes = 0;
      for (int t = 0; t < 3000; ++t) {
        const int64_t index = policy.uniform_int(static_cast<int64_t>(action_set.size()));
        rlx::Action action;
        action.index = index;
        const rlx::StepResult result = env->step(action, obs.row());
        const rlx::StepOutcome outcome = game->step(action_set[static_cast<size_t>(index)], game_rng);
        game->write_observation(expected.data());
        INFO("step " << t);
        REQUIRE(obs.bytes == expected);
        REQUIRE(result.reward == outcome.reward);
        REQUIRE(result.terminated == outcome.terminal);
        REQUIRE_FALSE(result.truncated);
        if (result.terminated) {
          ++episodes;
          env->reset(std::nullopt, obs.row());  // the next episode continues the stream
          game->reset(game_rng);
          game->write_observation(expected.data());
          REQUIRE(obs.bytes == expected);
        }
      }
      CHECK(episodes > 0);
    }
  }
}

TEST_CASE("A MinAtar env rejects an action outside its action space, naming the id and the range", "[envs][minatar]") {
  const std::unique_ptr<rlx::Env> env = rlx::global_env_registry().make("MinAtar/Breakout-v1");
  Row obs(*env);
  env->reset(0, obs.row());
  for (const int64_t index : {int64_t{3}, int64_t{-1}}) {
    rlx::Action action;
    action.index = index;
    CHECK_THROWS_WITH(env->step(action, obs.row()),
                      Catch::Contains("MinAtar/Breakout-v1 action must be in [0, 2], got " + std::to_string(index)));
  }
}

TEST_CASE("A MinAtar env given a time limit truncates there, and the registered Freeway ends itself at 2,501 frames",
          "[envs][minatar]") {
  rlx::MinAtarEnv limited("freeway", MinAtarActions::kMinimal, {}, 50);
  CHECK(limited.spec().max_episode_steps == 50);
  Row obs(limited);
  limited.reset(1, obs.row());
  rlx::Action noop;
  for (int t = 1; t < 50; ++t) CHECK_FALSE(limited.step(noop, obs.row()).truncated);
  const rlx::StepResult last = limited.step(noop, obs.row());
  CHECK(last.truncated);
  CHECK_FALSE(last.terminated);

  const std::unique_ptr<rlx::Env> freeway = rlx::global_env_registry().make("MinAtar/Freeway-v1");
  Row row(*freeway);
  freeway->reset(1, row.row());
  int length = 0;
  rlx::StepResult result;
  while (!result.terminated && length < 3000) {
    result = freeway->step(noop, row.row());
    ++length;
    CHECK_FALSE(result.truncated);
  }
  CHECK(length == 2501);
  CHECK(result.terminated);
}

TEST_CASE("A MinAtar env restored from a snapshot continues bit for bit, across episode ends", "[envs][minatar][snapshot]") {
  const rlx::EnvRegistry& registry = rlx::global_env_registry();
  for (const auto& [name, stem] : kGames) {
    const std::string id = "MinAtar/" + stem + "-v1";
    INFO(id);
    const std::unique_ptr<rlx::Env> original = registry.make(id);
    Row obs(*original);
    rlx::Rng policy(9);
    original->reset(5, obs.row());
    play(*original, obs, policy, 700);
    const std::optional<rlx::EnvSnapshot> snapshot = original->snapshot();
    REQUIRE(snapshot);
    const rlx::Rng::State policy_state = policy.state();
    const std::string expected = play(*original, obs, policy, 3000);

    const std::unique_ptr<rlx::Env> restored = registry.make(id);
    restored->restore(*snapshot);
    policy.set_state(policy_state);
    CHECK(play(*restored, obs, policy, 3000) == expected);
    CHECK(restored->snapshot()->exact_state == original->snapshot()->exact_state);
  }
  // Another game's state is refused, naming the game.
  const std::unique_ptr<rlx::Env> breakout = registry.make("MinAtar/Breakout-v1");
  Row obs(*breakout);
  breakout->reset(0, obs.row());
  const std::unique_ptr<rlx::Env> seaquest = registry.make("MinAtar/Seaquest-v1");
  CHECK_THROWS_WITH(seaquest->restore(*breakout->snapshot()), Catch::Contains("MinAtar seaquest: exact state has"));
}

TEST_CASE("A MinAtar env draws its game's picture, 160 x 160, for videos at 20 frames a second", "[envs][minatar]") {
  const std::unique_ptr<rlx::Env> env = rlx::global_env_registry().make("MinAtar/SpaceInvaders-v1");
  Row obs(*env);
  env->reset(2, obs.row());
  rlx::Rng policy(3);
  play(*env, obs, policy, 10);
  const std::optional<rlx::RgbImage> image = env->render();
  REQUIRE(image);
  CHECK(image->width == 160);
  CHECK(image->height == 160);
  rlx::RgbImage expected;
  dynamic_cast<const rlx::MinAtarEnv&>(*env).game().render(expected);
  CHECK(image->rgb == expected.rgb);
  CHECK(env->render_fps() == 20.0);
}
