// The MinAtar side-by-side figures of `rlx envs bench` (bench/minatar_benchmark.h): both run for a
// MinAtar env and report nothing for any other.
#include <catch2/catch.hpp>

#include <memory>

#include "bench/minatar_benchmark.h"
#include "envs/registry.h"

TEST_CASE("The MinAtar benchmarks time the game alone and the env through the API, and skip other envs",
          "[bench][minatar]") {
  const std::unique_ptr<rlx::Env> breakout = rlx::global_env_registry().make("MinAtar/Breakout-v1");
  const std::optional<double> game = rlx::measure_minatar_game_steps_per_s(*breakout, 0.05, 1);
  const std::optional<double> api = rlx::measure_minatar_env_api_steps_per_s(*breakout, 0.05, 1);
  REQUIRE(game);
  REQUIRE(api);
  CHECK(*game > 0.0);
  CHECK(*api > 0.0);
  const std::unique_ptr<rlx::Env> cart_pole = rlx::global_env_registry().make("CartPole-v1");
  CHECK_FALSE(rlx::measure_minatar_game_steps_per_s(*cart_pole, 0.05, 1));
  CHECK_FALSE(rlx::measure_minatar_env_api_steps_per_s(*cart_pole, 0.05, 1));
}
