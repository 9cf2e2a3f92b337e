// The recurrent core (models/recurrent_layers.h): its layout and state, the torch-free kernel's
// steps against LibTorch's lstm_cell / gru_cell over sequences with episode starts, its JSON and
// the refusals of a spec it cannot build.
#include "tests/learner/torch_catch.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "learner/policy_networks.h"
#include "models/model_spec_json.h"
#include "models/network_kernel.h"
#include "models/network_layout.h"
#include "models/recurrent_layers.h"
#include "models/rollout_policy.h"
#include "tests/models/normal_values.h"

namespace {

rlx::ModelSpec recurrent_spec(const std::string& core, bool shared, bool discrete, int64_t layers = 1) {
  rlx::ModelSpec spec;
  spec.obs_size = 5;
  spec.action_space = discrete ? rlx::Space::discrete(3) : rlx::Space::box({2}, -1.0f, 1.0f);
  spec.hidden_sizes = {16};
  spec.activation = "relu";
  spec.shared_trunk = shared;
  spec.core = core;
  spec.core_size = 12;
  spec.core_layers = layers;
  return spec;
}

using rlx_test::normal_values;

}  // namespace

TEST_CASE("a recurrent core's layers, parameters and state follow the encoder in each chain", "[models][recurrent]") {
  const rlx::ActorCriticLayout separate = rlx::actor_critic_layout(recurrent_spec("lstm", false, true));
  REQUIRE(separate.policy_chain.size() == 3);
  CHECK(separate.policy_chain[1].name == "pi_lstm_0");
  CHECK(separate.policy_chain[1].kind == rlx::kLstmLayer);
  CHECK(separate.policy_chain[1].in == 16);
  CHECK(separate.policy_chain[1].out == 12);
  CHECK(separate.policy_chain[2].in == 12);
  CHECK(separate.value_chain[1].name == "vf_lstm_0");
  CHECK(separate.policy_chain[1].state_offset == 0);
  CHECK(separate.value_chain[1].state_offset == 24);  // after the policy core's [h, c]
  CHECK(separate.state_size == 48);
  std::vector<std::string> names;
  for (const rlx::ParameterSpec& p : separate.policy_chain[1].parameters) names.push_back(p.name);
  CHECK(names == std::vector<std::string>{"pi_lstm_0.weight_ih", "pi_lstm_0.weight_hh", "pi_lstm_0.bias_ih",
                                          "pi_lstm_0.bias_hh"});
  CHECK(separate.policy_chain[1].parameters[0].shape == std::vector<int64_t>{48, 16});

  const rlx::ActorCriticLayout shared = rlx::actor_critic_layout(recurrent_spec("gru", true, true, 2));
  REQUIRE(shared.trunk.size() == 3);
  CHECK(shared.trunk[1].name == "trunk_gru_0");
  CHECK(shared.trunk[2].name == "trunk_gru_1");
  CHECK(shared.trunk[2].state_offset == 12);
  CHECK(shared.state_size == 24);
  CHECK(shared.trunk[1].parameters[0].shape == std::vector<int64_t>{36, 16});

  rlx::ModelSpec memoryless = recurrent_spec("", false, true);
  CHECK(rlx::actor_critic_layout(memoryless).state_size == 0);
}

TEST_CASE("the kernel steps LSTM and GRU cores as LibTorch does, episode starts included", "[models][recurrent]") {
  for (const std::string core : {"lstm", "gru"}) {
    for (bool shared : {false, true}) {
      for (bool ortho : {true, false}) {
        DYNAMIC_SECTION(core << (shared ? " shared" : " separate") << (ortho ? " orthogonal" : " torch_default")) {
          rlx::ModelSpec spec = recurrent_spec(core, shared, !shared, shared ? 2 : 1);
          spec.ortho_init = ortho;
          const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(spec);
          std::vector<float> flat = rlx::initial_parameters(layout, 7);
          const std::vector<float> noise = normal_values(flat.size(), 8, 0.05);
          for (size_t i = 0; i < flat.size(); ++i) flat[i] += noise[i];  // biases away from zero too

          constexpr int64_t kEnvs = 3, kSteps = 6;
          const std::vector<float> obs = normal_values(static_cast<size_t>(kEnvs * kSteps * spec.obs_size), 9, 1.0);
          // resets[b, t]: env 1 starts an episode at step 2, env 2 at steps 3 and 5.
          std::vector<float> resets(kEnvs * kSteps, 0.0f);
          resets[1 * kSteps + 2] = resets[2 * kSteps + 3] = resets[2 * kSteps + 5] = 1.0f;
          const std::vector<float> start = normal_values(static_cast<size_t>(kEnvs * layout.state_size), 10, 0.5);

          rlx::ActorCritic model(spec);
          model.load_flat_parameters(flat.data(), flat.size());
          rlx::SequenceInput input;
          input.num_steps = kSteps;
          input.initial_state = torch::from_blob(const_cast<float*>(start.data()), {kEnvs, layout.state_size}).clone();
          input.resets = torch::from_blob(resets.data(), {kEnvs, kSteps}).clone();
          input.record_states = true;
          const rlx::SequenceOutput torch_out =
              model.forward_sequences(torch::from_blob(const_cast<float*>(obs.data()), {kEnvs * kSteps, spec.obs_size}), input);

          rlx::ActorCriticKernel kernel(layout);
          kernel.load(flat.data());
          std::vector<float> state = start, step_obs(static_cast<size_t>(kEnvs * spec.obs_size));
          std::vector<float> policy(static_cast<size_t>(kEnvs * layout.policy_outputs)), values(kEnvs);
          float worst = 0.0f;
          for (int64_t t = 0; t < kSteps; ++t) {
            for (int64_t b = 0; b < kEnvs; ++b) {
              if (resets[b * kSteps + t] != 0.0f) {
                std::fill(state.begin() + b * layout.state_size, state.begin() + (b + 1) * layout.state_size, 0.0f);
              }
              std::copy_n(obs.begin() + (b * kSteps + t) * spec.obs_size, spec.obs_size, step_obs.begin() + b * spec.obs_size);
            }
            kernel.forward(step_obs.data(), kEnvs, policy.data(), values.data(), state.data());
            for (int64_t b = 0; b < kEnvs; ++b) {
              const int64_t row = b * kSteps + t;
              for (int64_t j = 0; j < layout.policy_outputs; ++j) {
                worst = std::max(worst, std::abs(policy[b * layout.policy_outputs + j] - torch_out.policy[row][j].item<float>()));
              }
              worst = std::max(worst, std::abs(values[b] - torch_out.value[row].item<float>()));
              for (int64_t j = 0; j < layout.state_size; ++j) {
                worst = std::max(worst, std::abs(state[b * layout.state_size + j] - torch_out.states_after[row][j].item<float>()));
              }
            }
          }
          CHECK(worst < 1e-5);
          const torch::Tensor final_state = torch_out.final_state.contiguous();
          for (int64_t i = 0; i < kEnvs * layout.state_size; ++i) CHECK(std::abs(state[i] - final_state.data_ptr<float>()[i]) < 1e-5);
        }
      }
    }
  }
}

TEST_CASE("a recurrent policy remembers: the same observation after different histories acts differently",
          "[models][recurrent]") {
  rlx::ActorCriticPolicy policy(recurrent_spec("lstm", false, false), 3, /*deterministic=*/true);
  REQUIRE(policy.state_size() == 48);
  std::vector<float> obs_a(10, 0.0f), obs_b(10, 0.0f), actions(4), log_probs(2), values(2);
  for (int i = 0; i < 5; ++i) obs_a[i] = 2.0f;  // env 0 sees something, env 1 zeros
  rlx::ActOutput out;
  out.action_values = actions.data();
  out.log_probs = log_probs.data();
  out.values = values.data();
  policy.act(obs_a.data(), 2, out);
  CHECK(policy.states().size() == 96);
  policy.act(obs_b.data(), 2, out);  // both now see zeros, after different pasts
  CHECK(actions[0] != actions[2]);
  CHECK(values[0] != values[1]);
  policy.reset_state(0);
  policy.reset_state(1);
  CHECK(std::all_of(policy.states().begin(), policy.states().end(), [](float v) { return v == 0.0f; }));
  policy.act(obs_b.data(), 2, out);
  CHECK(actions[0] == actions[2]);
  CHECK(values[0] == values[1]);
  CHECK_THROWS_WITH(policy.set_states(std::vector<float>(5), 2), Catch::Contains("expected 2 envs x 48"));
}

TEST_CASE("a recurrent spec travels in JSON, and one that cannot be built is refused by name", "[models][recurrent]") {
  const rlx::ModelSpec spec = recurrent_spec("gru", false, true, 2);
  const nlohmann::json json = rlx::model_spec_to_json(spec);
  CHECK(json.at("core") == nlohmann::json{{"kind", "gru"}, {"size", 12}, {"layers", 2}});
  CHECK(rlx::model_spec_from_json(json) == spec);
  CHECK_FALSE(rlx::model_spec_to_json(recurrent_spec("", false, true)).contains("core"));
  nlohmann::json bad = json;
  bad["core"]["kind"] = "rnn";
  CHECK_THROWS_WITH(rlx::model_spec_from_json(bad), Catch::Contains("model.core.kind") && Catch::Contains("rnn"));
  bad = json;
  bad["core"]["size"] = 0;
  CHECK_THROWS_WITH(rlx::model_spec_from_json(bad), Catch::Contains("model.core.size"));

  rlx::ModelSpec q = recurrent_spec("lstm", false, true);
  q.kind = rlx::ModelKind::kQNetwork;
  CHECK_THROWS_WITH(q.validate(), Catch::Contains("recurrent core is for actor_critic"));
  rlx::ModelSpec unknown = recurrent_spec("rnn", false, true);
  CHECK_THROWS_WITH(unknown.validate(), Catch::Contains("unknown recurrent core 'rnn'"));
  rlx::LayerSpec layer;
  layer.kind = rlx::kLstmLayer;
  layer.name = "x_lstm_0";
  layer.in = 4;
  layer.attributes = {{"hidden", 8}, {"stride", 2}};
  CHECK_THROWS_WITH(rlx::recurrent_hidden(layer), Catch::Contains("x_lstm_0") && Catch::Contains("unknown attribute 'stride'"));
}
