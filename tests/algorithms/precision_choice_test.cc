// Which learners take `precision` (learner/mixed_precision.h): the native learner computes in
// float32 and refuses bf16 and fp16 by name, so learner_backend: auto hands them to LibTorch's
// learner; SAC (native only) has no such key.
#include <catch2/catch.hpp>

#include <string>

#include "algorithms/native_algorithms.h"
#include "algorithms/ppo_results.h"
#include "core/config_error.h"
#include "tests/algorithms/train_util.h"

namespace rlx {
namespace {

using test::experiment_on;

TEST_CASE("the native learner refuses precision bf16 and fp16 by name and auto picks LibTorch's", "[algorithms][precision]") {
  for (const char* precision : {"bf16", "fp16"}) {
    INFO(precision);
    Experiment cartpole = experiment_on("CartPole-v1");
    REQUIRE_FALSE(native_learner_refusal(cartpole));
    REQUIRE(uses_native_learner(cartpole));  // learner_backend: auto, fp32: the native learner
    apply_overrides(cartpole, {std::string("precision=") + precision});
    const std::optional<std::string> refusal = native_learner_refusal(cartpole);
    REQUIRE(refusal);
    CHECK_THAT(*refusal, Catch::Contains(std::string("precision is ") + precision) &&
                             Catch::Contains("learner_backend: torch"));
    CHECK_FALSE(uses_native_learner(cartpole));
    apply_overrides(cartpole, {"learner_backend=native"});
    CHECK_THROWS_WITH(make_native_algorithm(cartpole), Catch::Contains("learner_backend: native") &&
                                                           Catch::Contains(std::string("precision is ") + precision));
  }
}

TEST_CASE("SAC refuses the precision key: its learner is the native one", "[algorithms][precision]") {
  Experiment pendulum = experiment_on("Pendulum-v1", AlgorithmKind::kSAC);
  CHECK_THROWS_AS(apply_overrides(pendulum, {"precision=bf16"}), ConfigError);
  CHECK_THROWS_WITH(apply_overrides(pendulum, {"precision=bf16"}),
                    Catch::Contains("config key 'precision'") && Catch::Contains("not SAC"));
  Experiment dqn = experiment_on("CartPole-v1", AlgorithmKind::kDQN);
  CHECK_NOTHROW(apply_overrides(dqn, {"precision=bf16"}));
  CHECK(dqn.config.dqn().precision == "bf16");
}

TEST_CASE("a PPO results row carries the loss scale and skipped steps with fp16 only", "[algorithms][precision]") {
  PpoUpdateMetrics metrics;
  metrics.num_minibatch_steps = 78;
  CHECK_FALSE(ppo_learner_columns(metrics, 3).contains("loss_scale"));  // fp32, bf16: no scale
  metrics.loss_scale = 32768.0;
  metrics.skipped_steps = 2;
  const nlohmann::json columns = ppo_learner_columns(metrics, 3);
  CHECK(columns.at("loss_scale") == 32768.0);
  CHECK(columns.at("skipped_steps") == 2);
  CHECK(columns.at("num_minibatch_steps") == 78);
}

}  // namespace
}  // namespace rlx
