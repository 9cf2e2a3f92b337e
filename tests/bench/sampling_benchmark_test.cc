// Local sampling speed (bench/sampling_benchmark.h): what one measurement counts (figures are
// printed by `rlx bench sampling`, never asserted).
#include <catch2/catch.hpp>

#include "bench/sampling_benchmark.h"
#include "envs/registry.h"
#include "models/model_spec.h"

TEST_CASE("measure_local_sampling counts one fragment at zero seconds", "[bench]") {
  rlx::ModelSpec config;
  config.hidden_sizes = {8};
  const auto result = rlx::measure_local_sampling("CartPole-v1", 3, 10, config, 0.0, 1);
  CHECK(result.fragments == 1);
  CHECK(result.env_steps == 30);
  CHECK(result.inference_calls == 10);
  CHECK(result.num_parameters == (4 * 8 + 8) + (8 * 2 + 2) + (4 * 8 + 8) + (8 + 1));
  CHECK(result.seconds > 0.0);
  CHECK_THROWS_AS(rlx::measure_local_sampling("NoSuchEnv-v0", 3, 10, config, 0.0, 1), rlx::UnknownEnvError);
}
