// Where a new layer kind goes (models/layer_kinds.h): this test adds one, "toy_scale" (y = x *
// scale + shift, elementwise), and an encoder kind that ends with it. It touches the spec (the
// kind's parameters, width and initialisation, with its torch-free forward) and the LibTorch
// back end (learner/torch_layers.h), one place each. Every consumer then builds the model: the
// layout and its JSON, the learner's ActorCritic (trained by autograd: the hand-written backward
// is for dense layers), the workers' kernel, the .rlxp file and rlx::Policy; the native
// learners refuse it by name.
#include "tests/learner/torch_catch.h"

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/temp_dir.h"
#include "learner/actor_critic_backprop.h"
#include "learner/policy_networks.h"
#include "learner/ppo_learner.h"
#include "learner/torch_layers.h"
#include "models/layer_kinds.h"
#include "models/model_spec_json.h"
#include "models/network_kernel.h"
#include "models/policy.h"
#include "models/policy_file.h"
#include "native/native_ppo_learner.h"
#include "tests/learner/learner_test_configs.h"
#include "tests/learner/ppo_test_util.h"

namespace rlx {
namespace {

constexpr const char* kToyLayer = "toy_scale";
constexpr const char* kToyEncoder = "mlp_toy_scale";

void register_toy_kinds() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The spec and the torch-free forward.
    LayerKind toy;
    toy.output_size = [](const LayerSpec& layer) { return layer.in; };
    toy.parameters = [](const LayerSpec& layer) {
      return std::vector<std::pair<std::string, std::vector<int64_t>>>{{"scale", {layer.in}}, {"shift", {layer.in}}};
    };
    toy.initialize = [](const LayerSpec& layer, float* const* params, Rng& rng) {
      for (int64_t i = 0; i < layer.in; ++i) {
        params[0][i] = static_cast<float>(rng.uniform(0.5, 1.5));
        params[1][i] = static_cast<float>(rng.uniform(-0.1, 0.1));
      }
    };
    toy.forward = [](const LayerSpec& layer, const float* const* params, const float* x, int64_t rows, float* y) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < layer.in; ++i) y[r * layer.in + i] = x[r * layer.in + i] * params[0][i] + params[1][i];
      }
    };
    register_layer_kind(kToyLayer, toy);
    register_encoder_kind(kToyEncoder, [](const ModelSpec& spec) {
      std::vector<EncoderLayer> layers;
      for (int64_t width : spec.hidden_sizes) layers.push_back({kDenseLayer, width, parse_activation(spec.activation)});
      layers.push_back({kToyLayer, 0, Activation::kTanh});
      return layers;
    });
    // The LibTorch forward.
    register_torch_layer(kToyLayer, [](const LayerSpec&, const std::vector<torch::Tensor>& params,
                                       const torch::Tensor& x) { return x * params[0] + params[1]; });
  });
}

ModelSpec toy_model() {
  register_toy_kinds();
  ModelSpec spec = rlx_test::model_config_for("CartPole-v1", {16});
  spec.encoder = kToyEncoder;
  return spec;
}

TEST_CASE("a toy layer kind, added in the spec and LibTorch, reaches every consumer", "[learner][model_spec]") {
  const ModelSpec spec = toy_model();
  const ActorCriticLayout layout = actor_critic_layout(spec);
  REQUIRE(layout.policy_chain.size() == 3);  // pi_0 (dense), pi_1 (toy_scale), pi_out
  CHECK(layout.policy_chain[1].kind == kToyLayer);
  CHECK(layout.policy_chain[1].parameters.at(0).name == "pi_1.scale");
  CHECK(layout.value_chain[1].kind == kToyLayer);
  CHECK(model_spec_from_json(model_spec_to_json(spec)) == spec);

  // LibTorch: the layer's parameters sit in the layout's flat order.
  torch::manual_seed(3);
  ActorCritic model(spec);
  std::vector<std::string> names;
  for (const ParameterSpec& p : layout.parameters) names.push_back(p.name);
  CHECK(flat_parameter_names(model) == names);
  CHECK_FALSE(ActorCriticBackprop::supports(model));

  // The workers' kernel computes what LibTorch does.
  const std::vector<float> flat = model.flat_parameters();
  const torch::Tensor obs = torch::randn({5, 4});
  const PolicyOutput expected = model.forward(obs);
  ActorCriticKernel kernel(layout);
  kernel.load(flat.data());
  std::vector<float> logits(5 * 2), values(5);
  kernel.forward(obs.contiguous().data_ptr<float>(), 5, logits.data(), values.data());
  for (int64_t r = 0; r < 5; ++r) {
    CHECK(values[r] == Approx(expected.value[r].item<float>()).margin(1e-5));
    for (int64_t a = 0; a < 2; ++a) CHECK(logits[r * 2 + a] == Approx(expected.policy[r][a].item<float>()).margin(1e-5));
  }

  // Trained by autograd: the toy parameters move.
  PpoConfig ppo = test::ppo_test_config();
  ppo.num_epochs = 2;
  PpoLearner learner(spec, ppo, 1);
  rlx_test::Sampler sampler("CartPole-v1", spec, 2, 64, 2);
  const std::vector<float> before = learner.model().flat_parameters();
  CHECK(learner.update(sampler.collect(1), 0).grad_norm > 0.0);
  const std::vector<float> after = learner.model().flat_parameters();
  const ParameterSpec& scale = layout.policy_chain[1].parameters[0];
  CHECK(std::vector<float>(after.begin() + scale.offset, after.begin() + scale.offset + scale.size) !=
        std::vector<float>(before.begin() + scale.offset, before.begin() + scale.offset + scale.size));

  // Exported: the file spells the layer out, and rlx::Policy acts as the kernel does.
  PolicyFile file;
  file.model = spec;
  file.parameters = after;
  file.algorithm = "PPO";
  file.env_id = "CartPole-v1";
  const std::string bytes = encode_policy_file(file);
  CHECK(bytes.find("\"kind\":\"toy_scale\"") != std::string::npos);
  TempDir dir("rlx-toy-layer-");
  const std::string path = (dir.path() / "toy.rlxp").string();
  std::ofstream(path, std::ios::binary) << bytes;
  Policy policy(path);
  kernel.load(after.data());
  const std::vector<float> row = {0.02f, -0.3f, 0.05f, 0.4f};
  kernel.forward(row.data(), 1, logits.data(), nullptr);
  CHECK(policy.act(row).index == (logits[1] > logits[0] ? 1 : 0));

  // The native learner's hand-written backward is for dense layers only.
  CHECK_THROWS_WITH(NativePpoLearner(spec, ppo, 1), Catch::Contains("layer 'pi_1' of kind 'toy_scale'"));
}

TEST_CASE("a model of an unregistered layer or encoder kind is refused by name", "[learner][model_spec]") {
  ModelSpec spec = rlx_test::model_config_for("CartPole-v1", {16});
  spec.encoder = "no_such_encoder";
  CHECK_THROWS_WITH(actor_critic_layout(spec), Catch::Contains("unknown encoder kind 'no_such_encoder' (known: cnn, mlp"));
  nlohmann::json text = model_spec_to_json(rlx_test::model_config_for("CartPole-v1", {16}));
  text["encoder"]["kind"] = "no_such_encoder";
  CHECK_THROWS_WITH(model_spec_from_json(text), Catch::Contains("model.encoder.kind: expected one of cnn, mlp"));
  CHECK_THROWS_WITH(find_layer_kind("no_such_layer"), Catch::Contains("unknown layer kind 'no_such_layer' (known: dense"));
  CHECK_THROWS_WITH(find_torch_layer("no_such_layer"), Catch::Contains("has no LibTorch forward"));
}

}  // namespace
}  // namespace rlx
