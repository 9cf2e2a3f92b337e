// Head layers (ModelSpec::head_sizes, the key head_fcnet_hiddens): dense layers before pi_out and
// before vf_out, one stack per output after the encoder and any recurrent core; without them a
// model's layout and JSON are what they were before head layers existed. The kernel and LibTorch
// compute the same outputs through them.
#include "tests/learner/torch_catch.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "learner/policy_networks.h"
#include "models/model_spec_json.h"
#include "models/network_kernel.h"
#include "models/network_layout.h"
#include "tests/models/normal_values.h"

namespace rlx {
namespace {

using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

ModelSpec cartpole_spec() {
  ModelSpec spec;
  spec.obs_size = 4;
  spec.action_space = Space::discrete(2);
  spec.hidden_sizes = {32};
  spec.activation = "relu";
  return spec;
}

// Each parameter's name and shape, in flat order.
Shapes shapes_of(const ActorCriticLayout& layout) {
  Shapes shapes;
  for (const ParameterSpec& p : layout.parameters) shapes.emplace_back(p.name, p.shape);
  return shapes;
}

std::vector<std::string> names_of(const LayerChain& chain) {
  std::vector<std::string> names;
  for (const LayerSpec& layer : chain) names.push_back(layer.name);
  return names;
}

TEST_CASE("head layers come before each output, named and shaped per chain, with the model's activation",
          "[models][heads]") {
  ModelSpec spec = cartpole_spec();
  spec.head_sizes = {16, 8};
  const ActorCriticLayout layout = actor_critic_layout(spec);
  CHECK(shapes_of(layout) == Shapes{{"pi_0.weight", {32, 4}},       {"pi_0.bias", {32}},
                                    {"pi_head_0.weight", {16, 32}}, {"pi_head_0.bias", {16}},
                                    {"pi_head_1.weight", {8, 16}},  {"pi_head_1.bias", {8}},
                                    {"pi_out.weight", {2, 8}},      {"pi_out.bias", {2}},
                                    {"vf_0.weight", {32, 4}},       {"vf_0.bias", {32}},
                                    {"vf_head_0.weight", {16, 32}}, {"vf_head_0.bias", {16}},
                                    {"vf_head_1.weight", {8, 16}},  {"vf_head_1.bias", {8}},
                                    {"vf_out.weight", {1, 8}},      {"vf_out.bias", {1}}});
  for (const LayerChain* chain : {&layout.policy_chain, &layout.value_chain}) {
    for (const LayerSpec& layer : *chain) {
      CAPTURE(layer.name);
      const bool output = layer.name == "pi_out" || layer.name == "vf_out";
      CHECK(layer.activation == (output ? Activation::kNone : Activation::kRelu));
      if (!output) CHECK(layer.init_gain == kHiddenGain);
    }
  }
}

TEST_CASE("head layers follow the recurrent core, one stack per output with a shared trunk too", "[models][heads]") {
  ModelSpec spec = cartpole_spec();
  spec.hidden_sizes = {};
  spec.core = "lstm";
  spec.core_size = 12;
  spec.head_sizes = {16};
  const ActorCriticLayout separate = actor_critic_layout(spec);
  CHECK(names_of(separate.policy_chain) == std::vector<std::string>{"pi_lstm_0", "pi_head_0", "pi_out"});
  CHECK(names_of(separate.value_chain) == std::vector<std::string>{"vf_lstm_0", "vf_head_0", "vf_out"});
  CHECK(separate.policy_chain[1].in == 12);
  CHECK(separate.policy_chain[2].in == 16);
  CHECK(separate.state_size == 2 * 2 * 12);

  spec.shared_trunk = true;
  const ActorCriticLayout shared = actor_critic_layout(spec);
  CHECK(names_of(shared.trunk) == std::vector<std::string>{"trunk_lstm_0"});
  CHECK(names_of(shared.policy_chain) == std::vector<std::string>{"pi_head_0", "pi_out"});
  CHECK(names_of(shared.value_chain) == std::vector<std::string>{"vf_head_0", "vf_out"});
  CHECK(shared.value_chain[0].in == 12);
  CHECK(shared.value_chain[1].in == 16);
}

TEST_CASE("no head layers leave the layout and the model JSON as before them", "[models][heads]") {
  const ModelSpec spec = cartpole_spec();
  REQUIRE(spec.head_sizes.empty());
  CHECK(shapes_of(actor_critic_layout(spec)) == Shapes{{"pi_0.weight", {32, 4}}, {"pi_0.bias", {32}},
                                                       {"pi_out.weight", {2, 32}}, {"pi_out.bias", {2}},
                                                       {"vf_0.weight", {32, 4}}, {"vf_0.bias", {32}},
                                                       {"vf_out.weight", {1, 32}}, {"vf_out.bias", {1}}});
  const nlohmann::json written = model_spec_to_json(spec);
  CHECK(written.at("heads") == nlohmann::json::parse(R"({"log_std_init":0.0,"dueling":false})"));

  ModelSpec with_heads = spec;
  with_heads.head_sizes = {64};
  const nlohmann::json with = model_spec_to_json(with_heads);
  CHECK(with.at("heads").at("hidden_sizes") == nlohmann::json::array({64}));
  CHECK(model_spec_from_json(nlohmann::json::parse(with.dump())) == with_heads);
  CHECK(model_spec_from_json(written) == spec);  // a file without the key: no head layers
  CHECK_FALSE(with_heads == spec);
}

TEST_CASE("head layers are refused for other model kinds and bad widths, by name", "[models][heads]") {
  ModelSpec q_network = cartpole_spec();
  q_network.kind = ModelKind::kQNetwork;
  q_network.head_sizes = {16};
  CHECK_THROWS_WITH(q_network.validate(),
                    "head layers (head_fcnet_hiddens) are for actor_critic models (PPO, APPO), not q_network");
  ModelSpec spec = cartpole_spec();
  spec.head_sizes = {16, 0};
  CHECK_THROWS_WITH(spec.validate(), "policy model head layer width must be positive, got 0");

  nlohmann::json json = model_spec_to_json(cartpole_spec());
  json["heads"]["hidden_sizes"] = {16, -2};
  CHECK_THROWS_WITH(model_spec_from_json(json, "model"), "model.heads.hidden_sizes[1]: -2 is outside [1, 65536]");
  json["heads"]["hidden_sizes"] = "64";
  CHECK_THROWS_WITH(model_spec_from_json(json, "model"),
                    "model.heads.hidden_sizes: expected a list of integers, got \"64\"");
}

TEST_CASE("head layers start orthogonal with gain sqrt(2), or PyTorch's default without ortho_init", "[models][heads]") {
  ModelSpec spec = cartpole_spec();
  spec.head_sizes = {16};
  for (bool ortho : {true, false}) {
    CAPTURE(ortho);
    spec.ortho_init = ortho;
    const ActorCriticLayout layout = actor_critic_layout(spec);
    const std::vector<float> flat = initial_parameters(layout, 9);
    const LayerSpec& head = layout.value_chain.at(1);
    REQUIRE(head.name == "vf_head_0");
    CHECK(head.orthogonal_init == ortho);
    if (ortho) {  // 16 rows of 32: W W^T = 2 I, zero biases
      for (int64_t a = 0; a < head.out; ++a) {
        CHECK(flat[head.bias_offset() + static_cast<size_t>(a)] == 0.0f);
        for (int64_t b = 0; b < head.out; ++b) {
          double dot = 0.0;
          for (int64_t k = 0; k < head.in; ++k) {
            dot += static_cast<double>(flat[head.weight_offset() + static_cast<size_t>(a * head.in + k)]) *
                   flat[head.weight_offset() + static_cast<size_t>(b * head.in + k)];
          }
          CHECK(dot == Approx(a == b ? 2.0 : 0.0).margin(1e-5));
        }
      }
    } else {
      const double bound = 1.0 / std::sqrt(static_cast<double>(head.in));
      double largest = 0.0;
      for (int64_t i = 0; i < head.out * (head.in + 1); ++i) {
        largest = std::max(largest, static_cast<double>(std::abs(flat[head.weight_offset() + static_cast<size_t>(i)])));
      }
      CHECK(largest <= bound);
      CHECK(largest > 0.5 * bound);
    }
  }
}

TEST_CASE("the kernel and LibTorch agree through head layers, with and without a core", "[models][heads]") {
  const int64_t rows = 9;
  uint64_t seed = 40;
  for (bool recurrent : {false, true}) {
    for (bool shared : {false, true}) {
      CAPTURE(recurrent, shared);
      ModelSpec spec = cartpole_spec();
      spec.action_space = Space::box({2}, -1.0f, 1.0f);
      spec.activation = "tanh";
      spec.shared_trunk = shared;
      spec.head_sizes = {16, 8};
      if (recurrent) spec.core = "gru", spec.core_size = 6;
      ActorCritic model(spec);
      std::vector<float> flat = flat_parameters(model);
      const std::vector<float> noise = rlx_test::normal_values(flat.size(), ++seed, 0.3);
      for (size_t i = 0; i < flat.size(); ++i) flat[i] += noise[i];
      load_flat_parameters(model, flat.data(), flat.size());
      const std::vector<float> obs = rlx_test::normal_values(static_cast<size_t>(rows * spec.obs_size), ++seed, 1.5);

      const ActorCriticLayout layout = actor_critic_layout(spec);
      ActorCriticKernel kernel(layout);
      kernel.load(flat.data());
      std::vector<float> state(static_cast<size_t>(rows * layout.state_size), 0.0f);
      std::vector<float> policy(static_cast<size_t>(rows * 2)), values(rows);
      kernel.forward(obs.data(), rows, policy.data(), values.data(), recurrent ? state.data() : nullptr);

      torch::NoGradGuard no_grad;
      const torch::Tensor input = torch::tensor(obs).view({rows, spec.obs_size});
      PolicyOutput reference;
      if (recurrent) {  // one step of each of `rows` sequences from a zero state
        SequenceInput sequences;
        sequences.num_steps = 1;
        sequences.initial_state = torch::zeros({rows, layout.state_size});
        const SequenceOutput out = model.forward_sequences(input, sequences);
        reference = {out.policy, out.value};
      } else {
        reference = model.forward(input);
      }
      for (int64_t i = 0; i < rows * 2; ++i) CHECK(policy[i] == Approx(reference.policy.view({-1})[i].item<float>()).margin(1e-5));
      for (int64_t i = 0; i < rows; ++i) CHECK(values[i] == Approx(reference.value[i].item<float>()).margin(1e-5));
    }
  }
}

}  // namespace
}  // namespace rlx
