// Which encoder an experiment's model gets (algorithms/model_from_config.h): the CNN preset for an
// image under encoder: auto, every choice overridable, and the native learner handing CNNs to LibTorch.
#include <catch2/catch.hpp>

#include <string>

#include "algorithms/model_from_config.h"
#include "algorithms/native_algorithms.h"
#include "core/config_error.h"
#include "envs/registry.h"
#include "models/cnn_encoder.h"
#include "models/network_layout.h"
#include "tests/algorithms/train_util.h"

namespace rlx {
namespace {

using test::experiment_on;

ModelSpec model_of(Experiment experiment, const std::vector<std::string>& overrides = {}) {
  apply_overrides(experiment, overrides);
  return model_from_config(experiment, global_env_registry().spec(experiment.env));
}

TEST_CASE("encoder auto gives an image the CNN preset for its size and anything else the MLP", "[algorithms][cnn]") {
  const ModelSpec minatar = model_of(experiment_on("MinAtar/Breakout-v1"));
  CHECK(minatar.encoder == kCnnEncoder);
  CHECK(conv_filters_text(minatar.conv_filters) == "16:3:1");
  CHECK(minatar.hidden_sizes == std::vector<int64_t>{128});
  CHECK(minatar.activation == "relu");
  const ModelSpec dqn = model_of(experiment_on("MinAtar/SpaceInvaders-v1", AlgorithmKind::kDQN));
  CHECK(dqn.encoder == kCnnEncoder);
  const ModelSpec cartpole = model_of(experiment_on("CartPole-v1"));
  CHECK(cartpole.encoder == "mlp");
  CHECK(cartpole.conv_filters.empty());
  CHECK(cartpole.hidden_sizes == std::vector<int64_t>{64, 64});
  // A Dict's 3x3 grid is no image (under 4x4): flattened for the MLP with the other keys.
  CHECK(model_of(experiment_on("Toy/DictSensors-v0")).encoder == "mlp");
}

TEST_CASE("encoder auto gives a Dict with an image key the CNN over it, the other keys carried to the dense layers",
          "[algorithms][cnn]") {
  EnvSpec env = global_env_registry().spec("CartPole-v1");
  env.id = "Robot-v0";
  env.observation_space = Space::dict({{"camera", Space::box({10, 10, 3}, 0, 255, ScalarType::kUint8)},
                                       {"speed", Space::box({1}, -5, 5)}});
  const ModelSpec model = model_from_config(experiment_on("CartPole-v1"), env);
  CHECK(model.encoder == kCnnEncoder);
  CHECK(conv_filters_text(model.conv_filters) == "16:3:1");
  CHECK(model.hidden_sizes == std::vector<int64_t>{128});
  const ActorCriticLayout layout = actor_critic_layout(model);
  CHECK(layout.policy_chain[0].attributes.at("passthrough") == 1);
  CHECK(layout.policy_chain[1].in == 8 * 8 * 16 + 1);
}

TEST_CASE("every encoder choice can be overridden", "[algorithms][cnn]") {
  const Experiment breakout = experiment_on("MinAtar/Breakout-v1");
  // encoder: cnn reads conv_filters, hidden_sizes and activation.
  const ModelSpec custom = model_of(breakout, {"encoder=cnn", "conv_filters=32:3:1,32:3:2", "hidden_sizes=[256]"});
  CHECK(conv_filters_text(custom.conv_filters) == "32:3:1,32:3:2");
  CHECK(custom.hidden_sizes == std::vector<int64_t>{256});
  CHECK(custom.activation == "tanh");
  // encoder: cnn with conv_filters auto takes the preset's filters and the config's dense layers.
  const ModelSpec preset_filters = model_of(breakout, {"encoder=cnn"});
  CHECK(conv_filters_text(preset_filters.conv_filters) == "16:3:1");
  CHECK(preset_filters.hidden_sizes == std::vector<int64_t>{64, 64});
  // encoder: mlp flattens the image, as gymnax-blines' MinAtar baselines do.
  const ModelSpec mlp = model_of(breakout, {"encoder=mlp", "hidden_sizes=256,256"});
  CHECK(mlp.encoder == "mlp");
  CHECK(mlp.obs_size == 400);
}

TEST_CASE("cnn choices that cannot work are refused naming the key, env and space", "[algorithms][cnn]") {
  CHECK_THROWS_AS(model_of(experiment_on("CartPole-v1"), {"encoder=cnn"}), ConfigError);
  CHECK_THROWS_WITH(model_of(experiment_on("CartPole-v1"), {"encoder=cnn"}),
                    Catch::Contains("encoder cnn reads images") && Catch::Contains("env CartPole-v1 observes Box("));
  CHECK_THROWS_WITH(model_of(experiment_on("CartPole-v1"), {"conv_filters=16:3:1"}),
                    Catch::Contains("conv_filters 16:3:1 are for the cnn encoder"));
  CHECK_THROWS_WITH(model_of(experiment_on("MinAtar/Breakout-v1"), {"conv_filters=16:3:1,16:9:1"}),
                    Catch::Contains("the model for env MinAtar/Breakout-v1") &&
                        Catch::Contains("conv filter 1 (16:9:1) does not fit the 8x8x16 image"));
  Experiment bad_text = experiment_on("MinAtar/Breakout-v1");
  CHECK_THROWS_WITH(apply_overrides(bad_text, {"conv_filters=16:3"}), Catch::Contains("conv_filters"));
}

TEST_CASE("learner_backend auto hands CNN models to LibTorch's learner", "[algorithms][cnn]") {
  Experiment breakout = experiment_on("MinAtar/Breakout-v1");
  const std::optional<std::string> refusal = native_learner_refusal(breakout);
  REQUIRE(refusal);
  CHECK_THAT(*refusal, Catch::Contains("encoder is cnn"));
  CHECK_FALSE(uses_native_learner(breakout));
  apply_overrides(breakout, {"encoder=mlp"});
  CHECK_FALSE(native_learner_refusal(breakout));
}

}  // namespace
}  // namespace rlx
