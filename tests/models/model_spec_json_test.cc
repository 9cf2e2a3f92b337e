// The model spec's one serialised form: every kind survives it whole, and a damaged or foreign
// spec from the network or a file is refused with the key path and what was expected.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "models/model_spec_json.h"

namespace rlx {
namespace {

ModelSpec box_actor_critic() {
  ModelSpec spec;
  spec.obs_size = 11;
  spec.action_space = Space::box({3}, -1.0f, 1.0f);
  spec.hidden_sizes = {256, 128};
  spec.activation = "relu";
  spec.shared_trunk = true;
  spec.log_std_init = -0.5;
  spec.ortho_init = false;
  return spec;
}

TEST_CASE("every model kind survives its JSON form whole", "[models][model_spec]") {
  ModelSpec q_network;
  q_network.kind = ModelKind::kQNetwork;
  q_network.obs_size = 4;
  q_network.action_space = Space::discrete(2);
  q_network.hidden_sizes = {};
  q_network.dueling = true;
  ModelSpec sac = box_actor_critic();
  sac.kind = ModelKind::kSquashedGaussian;
  sac.action_space = Space::box({2}, std::vector<float>{-2.0f, -1.0f}, std::vector<float>{2.0f, 1.0f});
  for (const ModelSpec& spec : {box_actor_critic(), q_network, sac}) {
    const nlohmann::json text = nlohmann::json::parse(model_spec_to_json(spec).dump());
    CHECK(model_spec_from_json(text) == spec);
  }
  const nlohmann::json written = model_spec_to_json(box_actor_critic());
  CHECK(written.at("encoder") == nlohmann::json::parse(
                                     R"({"kind":"mlp","hidden_sizes":[256,128],"activation":"relu","shared":true})"));
  CHECK(written.at("init") == "torch_default");
  CHECK(written.at("version") == kModelSpecVersion);
}

TEST_CASE("a damaged or foreign model spec is refused with its key path", "[models][model_spec]") {
  const nlohmann::json good = model_spec_to_json(box_actor_critic());
  const auto refusal = [](const nlohmann::json& value) -> std::string {
    try {
      model_spec_from_json(value, "model");
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "";
  };
  REQUIRE(refusal(good).empty());

  nlohmann::json spec = good;
  spec["encoder"]["hidden_sizes"] = {64, -1};
  CHECK(refusal(spec) == "model.encoder.hidden_sizes[1]: -1 is outside [1, 65536]");
  spec = good;
  spec["encoder"]["hidden_sizes"] = nlohmann::json::array();
  for (int i = 0; i < 17; ++i) spec["encoder"]["hidden_sizes"].push_back(8);
  CHECK(refusal(spec) == "model.encoder.hidden_sizes: 17 layers, at most 16");
  spec = good;
  spec["encoder"]["activation"] = "gelu";
  CHECK(refusal(spec) == "model.encoder.activation: expected one of relu, tanh, got \"gelu\"");
  spec = good;
  spec["encoder"]["kind"] = "resnet";
  CHECK(refusal(spec) == "model.encoder.kind: expected one of cnn, mlp, got \"resnet\"");
  spec["encoder"]["kind"] = "cnn";  // known, but this model's observation is no image
  CHECK(refusal(spec) == "model: the cnn encoder reads images, Boxes of rank 3 (height, width, channels) at least 4x4, "
                         "alone or inside a Dict or Tuple, but the observation space is Box(-inf, inf, (11,), float32)");
  spec = good;
  spec["attention"] = {{"heads", 4}};
  CHECK(refusal(spec) == "model.attention: unknown key (a newer rlx's model? this one reads model version 2)");
  spec = good;
  spec["core"] = {{"kind", "lstm"}};  // a recurrent core needs all of its keys
  CHECK(refusal(spec) == "model.core.layers: missing");
  spec = good;
  spec["version"] = 3;
  CHECK(refusal(spec) == "model.version: model version 3, this rlx reads versions 1 to 2");
  spec = good;
  spec["observation_space"]["spaces"] = {{{"key", "g"}, {"space", {{"type", "Graph"}}}}};
  spec["observation_space"]["type"] = "Dict";
  CHECK_THAT(refusal(spec), Catch::StartsWith("model.observation_space['g']: space type must be"));
  spec = good;
  spec["action_mask"] = true;  // a Box action space takes no mask
  CHECK_THAT(refusal(spec), Catch::Contains("an action mask needs a Discrete or MultiDiscrete action space"));
  spec = good;
  spec.erase("heads");
  CHECK(refusal(spec) == "model.heads: missing");
  spec = good;
  spec["observation_size"] = "11";
  CHECK(refusal(spec) == "model.observation_size: expected an integer, got \"11\"");
  spec = good;
  spec["action_space"]["shape"] = {1 << 20, 1 << 20};
  CHECK_THAT(refusal(spec), Catch::StartsWith("model.action_space.shape[]: 1048576 is outside"));
  spec = good;
  spec["heads"]["log_std_init"] = 40;
  CHECK(refusal(spec) == "model.heads.log_std_init: expected a number in [-20, 5], got 40");
  spec = good;
  spec["kind"] = "q_network";  // Box actions
  CHECK_THAT(refusal(spec), Catch::StartsWith("model: a q_network model needs a Discrete action space"));
  CHECK(refusal(nlohmann::json::array()) == "model: expected a JSON object, got []");
}

}  // namespace

TEST_CASE("A version-1 model (rlx before every space) reads as a float32 Box of its size, no mask", "[models]") {
  nlohmann::json v1 = model_spec_to_json(box_actor_critic());
  v1["version"] = 1;
  v1.erase("observation_space");
  v1.erase("action_mask");
  const ModelSpec spec = model_spec_from_json(v1, "model");
  CHECK(spec == box_actor_critic());
  CHECK(spec.input_space() == rlx::Space::box({spec.obs_size}, -rlx::kInf, rlx::kInf));
  CHECK_FALSE(spec.action_mask);
  v1["action_mask"] = false;  // a version-2 key in a version-1 model
  CHECK_THROWS_WITH(model_spec_from_json(v1, "model"), Catch::Contains("model.action_mask: unknown key"));
}

TEST_CASE("A model of a Dict observation with a masked MultiDiscrete action survives JSON", "[models]") {
  using rlx::Space;
  rlx::EnvSpec env;
  env.id = "Board-v0";
  env.observation_space = Space::dict({{"board", Space::box({3, 3, 2}, 0, 1, rlx::ScalarType::kUint8)},
                                       {"turn", Space::discrete(2)}});
  env.action_space = Space::multi_discrete({3, 3});
  env.action_mask = true;
  const ModelSpec spec = ModelSpec::for_env(env);
  CHECK(spec.obs_size == 18 + 2);
  CHECK(spec.policy_output_size() == 6);
  CHECK(model_spec_from_json(model_spec_to_json(spec), "model") == spec);
  CHECK_NOTHROW(spec.check_env(env, "a worker's"));
  env.action_mask = false;
  CHECK_THROWS_WITH(spec.check_env(env, "a worker's"), Catch::Contains("masks no actions, the model expects a mask"));
}

}  // namespace rlx
