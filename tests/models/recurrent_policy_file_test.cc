// Recurrent policies in .rlxp files (models/policy_file.h) and rlx::Policy (models/policy.h): the
// model and each layer's state travel, the reader takes and returns the state explicitly and acts
// over episodes as the workers' ActorCriticPolicy does, and the stateless act() is refused.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "models/network_layout.h"
#include "models/policy.h"
#include "models/policy_file.h"
#include "models/rollout_policy.h"

namespace fs = std::filesystem;

namespace {

struct Core {
  const char* name;
  const char* kind;     // "lstm" or "gru"
  bool shared;          // one core in the trunk, or one per chain
  int64_t layers;
  rlx::Space actions;
};

std::vector<Core> cores() {
  return {{"an LSTM per chain, Discrete actions", "lstm", false, 1, rlx::Space::discrete(4)},
          {"two stacked GRUs in a shared trunk, Box actions", "gru", true, 2,
           rlx::Space::box({2}, std::vector<float>{-1.0f, 0.0f}, std::vector<float>{2.0f, 0.5f})}};
}

// A file of a recurrent actor-critic over 5 floats, its weights drawn large enough (N(0, 4 /
// fan_in), biases N(0, 0.01)) that both the observation and the state move the actions.
rlx::PolicyFile recurrent_file(const Core& core) {
  rlx::PolicyFile file;
  file.model.obs_size = 5;
  file.model.action_space = core.actions;
  file.model.hidden_sizes = {16};
  file.model.activation = "tanh";
  file.model.shared_trunk = core.shared;
  file.model.core = core.kind;
  file.model.core_size = 8;
  file.model.core_layers = core.layers;
  file.model.log_std_init = -0.5;
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(file.model);
  file.parameters.assign(layout.num_parameters, 0.0f);
  rlx::Rng rng(7);
  for (const rlx::ParameterSpec& p : layout.parameters) {
    const double scale = p.shape.size() == 1 ? 0.1 : 2 / std::sqrt(static_cast<double>(p.shape.at(1)));
    for (size_t i = 0; i < p.size; ++i) file.parameters[p.offset + i] = static_cast<float>(rng.normal() * scale);
  }
  file.obs_mean = {0.5f, -1.0f, 2.0f, 0.0f, 0.25f};
  file.obs_var = {4.0f, 0.25f, 1.0f, 9.0f, 0.5f};
  file.obs_count = 100;
  file.algorithm = "PPO";
  file.env_id = "Test-v0";
  return file;
}

// The file written to this process's temporary directory (removed when the process exits).
std::string written(const rlx::PolicyFile& file, const std::string& name) {
  struct RemovedAtExit {
    fs::path dir = fs::temp_directory_path() / ("rlx_recurrent_policy_" + std::to_string(::getpid()));
    ~RemovedAtExit() {
      std::error_code ignored;  // best effort: a leftover temporary directory is no test failure
      fs::remove_all(dir, ignored);
    }
  };
  static const RemovedAtExit scratch;
  fs::create_directories(scratch.dir);
  const std::string path = (scratch.dir / name).string();
  std::ofstream(path, std::ios::binary) << rlx::encode_policy_file(file);
  return path;
}

// The JSON header of encoded file bytes.
nlohmann::json header_of(const std::string& bytes) {
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[12 + i])) << (8 * i);
  return nlohmann::json::parse(bytes.substr(16, length));
}

}  // namespace

TEST_CASE("a recurrent policy file keeps its core, and spells out where each recurrent layer's state lies",
          "[models][export][recurrent]") {
  for (const Core& core : cores()) {
    SECTION(core.name) {
      const rlx::PolicyFile file = recurrent_file(core);
      const std::string bytes = rlx::encode_policy_file(file);
      const rlx::PolicyFile back = rlx::decode_policy_file(bytes, "p.rlxp");
      CHECK(back.model == file.model);
      CHECK(back.model.core == core.kind);
      CHECK(back.model.core_layers == core.layers);
      CHECK(back.parameters == file.parameters);

      const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(file.model);
      const nlohmann::json header = header_of(bytes);
      CHECK(header.at("model").at("core") == nlohmann::json({{"kind", core.kind}, {"size", 8}, {"layers", core.layers}}));
      CHECK(header.at("state_size") == layout.state_size);
      int recurrent_layers = 0;
      for (const auto& [chain, layers] : header.at("chains").items()) {
        for (const nlohmann::json& layer : layers) {
          if (layer.value("kind", "dense") != core.kind) {
            CHECK_FALSE(layer.contains("state_offset"));
            continue;
          }
          ++recurrent_layers;
          CHECK(layer.at("attributes") == nlohmann::json({{"hidden", 8}}));
          CHECK(layer.at("state_offset").get<int64_t>() < layout.state_size);
        }
      }
      CHECK(recurrent_layers == (core.shared ? 1 : 2) * core.layers);
    }
  }
}

TEST_CASE("a memoryless policy file's header has no state, as before recurrent cores", "[models][export][recurrent]") {
  rlx::PolicyFile file = recurrent_file(cores()[0]);
  file.model.core = "";
  file.parameters = rlx::initial_parameters(rlx::actor_critic_layout(file.model), 3);
  const nlohmann::json header = header_of(rlx::encode_policy_file(file));
  CHECK_FALSE(header.contains("state_size"));
  CHECK_FALSE(header.at("model").contains("core"));
}

TEST_CASE("a recurrent file whose state_size differs from its model's is refused by name", "[models][export][recurrent]") {
  std::string bytes = rlx::encode_policy_file(recurrent_file(cores()[0]));
  const size_t at = bytes.find("\"state_size\":32");
  REQUIRE(at != std::string::npos);  // an LSTM of 8 per chain: [h, c] of 8 twice
  bytes.replace(at, 15, "\"state_size\":30");
  const uint32_t crc = rlx::crc32_ieee(std::string_view(bytes).substr(0, bytes.size() - 4));
  for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xffu);
  CHECK_THROWS_WITH(rlx::decode_policy_file(bytes, "p.rlxp"),
                    Catch::StartsWith("p.rlxp: its \"state_size\" differ from the network rlx builds") &&
                        Catch::EndsWith("file 30, expected 32"));
}

TEST_CASE("rlx::Policy steps a recurrent policy's state as the workers' policy does, over whole episodes",
          "[models][export][recurrent]") {
  for (const Core& core : cores()) {
    SECTION(core.name) {
      const rlx::PolicyFile file = recurrent_file(core);
      rlx::Policy policy(written(file, std::string(core.kind) + ".rlxp"));
      rlx::ActorCriticPolicy worker(file.model, 1, /*deterministic=*/true, /*values=*/false);
      worker.load_weights(file.parameters.data(), file.parameters.size(), 1);
      worker.set_obs_normalizer(file.obs_mean, file.obs_var, file.obs_count);
      REQUIRE(policy.recurrent());
      REQUIRE(policy.state_size() == worker.state_size());
      CHECK(policy.initial_state() == std::vector<float>(static_cast<size_t>(policy.state_size()), 0.0f));

      rlx::Rng rng(3);
      std::vector<float> state;
      int different_states = 0;  // steps whose state moved the action (the same observation from zeros acts otherwise)
      for (int episode = 0; episode < 3; ++episode) {
        state = policy.initial_state();
        worker.reset_state(0);
        for (int step = 0; step < 40; ++step) {
          INFO("episode " << episode << " step " << step);
          std::vector<float> obs(5);
          for (float& x : obs) x = static_cast<float>(2.0 * rng.normal());
          const std::vector<float> before = state;
          const rlx::PolicyAction action = policy.act(obs, state);
          CHECK(state == before);  // the caller's state is read, not written
          int64_t index = 0;
          std::vector<float> values(core.actions.is_box() ? 2 : 0);
          float log_prob = 0;
          worker.act(obs.data(), 1, {&index, values.data(), &log_prob, nullptr});
          REQUIRE(action.state == worker.states());
          if (core.actions.is_discrete()) {
            REQUIRE(action.index == index);
          } else {
            for (size_t j = 0; j < 2; ++j) {
              REQUIRE(action.values[j] == std::clamp(values[j], core.actions.low[j], core.actions.high[j]));
            }
          }
          const rlx::PolicyAction fresh = policy.act(obs, policy.initial_state());
          different_states += core.actions.is_discrete() ? fresh.index != action.index : fresh.values != action.values;
          state = action.state;
        }
      }
      CHECK(different_states > 5);  // the state matters: the comparison over sequences means something
    }
  }
}

TEST_CASE("rlx::Policy refuses the stateless act on a recurrent policy and a state of the wrong size, by name",
          "[models][export][recurrent]") {
  rlx::Policy recurrent(written(recurrent_file(cores()[0]), "refused.rlxp"));
  const std::vector<float> obs(5, 0.5f);
  CHECK_THROWS_WITH(recurrent.act(obs),
                    "Policy::act: this policy is recurrent (its lstm core carries 32 floats of state from step to "
                    "step): call act(observation, state), with initial_state() at an episode's start and the previous "
                    "action.state after");
  CHECK_THROWS_AS(recurrent.act(obs.data(), obs.size()), std::invalid_argument);
  CHECK_THROWS_WITH(recurrent.act(obs, std::vector<float>(3)),
                    "Policy::act needs a state of 32 floats, got 3 (initial_state() at an episode's start, then the "
                    "previous step's action.state)");

  rlx::PolicyFile plain = recurrent_file(cores()[0]);
  plain.model.core = "";
  plain.parameters = rlx::initial_parameters(rlx::actor_critic_layout(plain.model), 3);
  rlx::Policy memoryless(written(plain, "memoryless.rlxp"));
  CHECK_FALSE(memoryless.recurrent());
  CHECK(memoryless.state_size() == 0);
  CHECK(memoryless.initial_state().empty());
  const rlx::PolicyAction with_state = memoryless.act(obs, memoryless.initial_state());
  CHECK(with_state.index == memoryless.act(obs).index);
  CHECK(with_state.state.empty());
  CHECK_THROWS_WITH(memoryless.act(obs, std::vector<float>(2)),
                    "Policy::act needs a state of 0 floats, got 2 (this policy is memoryless: its state, "
                    "initial_state(), is empty)");
}
