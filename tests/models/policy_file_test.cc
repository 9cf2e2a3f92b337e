// Exported policy files (models/policy_file.h) and rlx::Policy (models/policy.h): the round trip,
// the same actions as the worker policies they describe, and refusal of damaged files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/network_layout.h"
#include "models/policy.h"
#include "models/policy_file.h"
#include "models/rollout_policy.h"

namespace fs = std::filesystem;
using rlx::PolicyFile;
using rlx::ModelKind;

namespace {

// A policy file of the kind with freshly initialised weights (seeded), optionally with
// observation statistics, for an env of obs_size floats and the given actions.
PolicyFile make_file(ModelKind kind, const rlx::Space& actions, bool normalized, bool dueling = false) {
  PolicyFile file;
  file.model.kind = kind;
  file.model.obs_size = 5;
  file.model.action_space = actions;
  file.model.hidden_sizes = {16, 8};
  file.model.activation = kind == ModelKind::kActorCritic ? "tanh" : "relu";
  file.model.dueling = dueling;
  file.model.log_std_init = -0.5;
  switch (kind) {
    case ModelKind::kActorCritic: file.parameters = initial_parameters(actor_critic_layout(file.model), 7); break;
    case ModelKind::kQNetwork: file.parameters = initial_parameters(q_network_layout(file.model), 7); break;
    case ModelKind::kSquashedGaussian:
      file.parameters = initial_parameters(squashed_gaussian_layout(file.model), 7);
      break;
  }
  // Output layers start near zero; larger weights make the actions depend on the observation.
  for (float& w : file.parameters) w *= 3.0f;
  if (normalized) {
    file.obs_mean = {0.5f, -1.0f, 2.0f, 0.0f, 0.25f};
    file.obs_var = {4.0f, 0.25f, 1.0f, 9.0f, 0.5f};
    file.obs_count = 1234;
  }
  file.epsilon = 0.05;
  file.algorithm = "PPO";
  file.env_id = "Test-v0";
  file.source = {{"checkpoint", "/x/checkpoint_000003"}};
  return file;
}

// The worker policy a file describes, loaded with its weights and statistics.
std::unique_ptr<rlx::RolloutPolicy> worker_policy(const PolicyFile& file) {
  std::unique_ptr<rlx::RolloutPolicy> policy;
  if (file.model.kind == ModelKind::kActorCritic) policy = std::make_unique<rlx::ActorCriticPolicy>(file.model, 1, true, /*values=*/false);
  if (file.model.kind == ModelKind::kQNetwork) policy = std::make_unique<rlx::EpsilonGreedyQPolicy>(file.model, 0.0, 1);
  if (file.model.kind == ModelKind::kSquashedGaussian) {
    policy = std::make_unique<rlx::SquashedGaussianPolicy>(file.model, 0.0, 1, true);
  }
  policy->load_weights(file.parameters.data(), file.parameters.size(), 1);
  if (!file.obs_mean.empty()) policy->set_obs_normalizer(file.obs_mean, file.obs_var, file.obs_count);
  return policy;
}

// A path in this process's temporary directory, which is removed when the process exits.
std::string temp_file(const std::string& name) {
  struct RemovedAtExit {
    fs::path dir = fs::temp_directory_path() / ("rlx_policy_file_" + std::to_string(::getpid()));
    ~RemovedAtExit() {
      std::error_code ignored;  // best effort: a leftover temporary directory is no test failure
      fs::remove_all(dir, ignored);
    }
  };
  static const RemovedAtExit scratch;
  fs::create_directories(scratch.dir);
  return (scratch.dir / name).string();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The PolicyFileError message decoding bytes gives ("" when it decodes).
std::string refusal(const std::string& bytes) {
  try {
    rlx::decode_policy_file(bytes, "p.rlxp");
  } catch (const rlx::PolicyFileError& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST_CASE("CRC-32 is zlib's", "[models][export]") {
  CHECK(rlx::crc32_ieee("123456789") == 0xCBF43926u);
  CHECK(rlx::crc32_ieee("") == 0u);
}

TEST_CASE("a policy file reads back to the policy that was written", "[models][export]") {
  for (const bool normalized : {false, true}) {
    const PolicyFile file = make_file(ModelKind::kQNetwork, rlx::Space::discrete(3), normalized, /*dueling=*/true);
    const PolicyFile back = rlx::decode_policy_file(rlx::encode_policy_file(file), "p.rlxp");
    CHECK(back.model.kind == ModelKind::kQNetwork);
    CHECK(back.model.obs_size == 5);
    CHECK(back.model.action_space == file.model.action_space);
    CHECK(back.model.hidden_sizes == file.model.hidden_sizes);
    CHECK(back.model.activation == "relu");
    CHECK(back.model.dueling);
    CHECK(back.parameters == file.parameters);
    CHECK(back.obs_mean == file.obs_mean);
    CHECK(back.obs_var == file.obs_var);
    CHECK(back.obs_count == (normalized ? 1234 : 0));
    CHECK(back.epsilon == 0.05);
    CHECK(back.algorithm == "PPO");
    CHECK(back.env_id == "Test-v0");
    CHECK(back.source.at("checkpoint") == "/x/checkpoint_000003");
  }
}

TEST_CASE("rlx::Policy acts as the worker policy the file describes, on raw observations", "[models][export]") {
  const rlx::Space box = rlx::Space::box({2}, std::vector<float>{-1.0f, 0.0f}, std::vector<float>{2.0f, 0.5f});
  struct Case {
    const char* name;
    ModelKind kind;
    rlx::Space actions;
  };
  const std::vector<Case> cases = {{"actor-critic, Discrete", ModelKind::kActorCritic, rlx::Space::discrete(4)},
                                   {"actor-critic, Box", ModelKind::kActorCritic, box},
                                   {"Q-network", ModelKind::kQNetwork, rlx::Space::discrete(3)},
                                   {"squashed Gaussian", ModelKind::kSquashedGaussian, box}};
  for (const Case& c : cases) {
    SECTION(c.name) {
      const PolicyFile file = make_file(c.kind, c.actions, /*normalized=*/true);
      const std::string path = temp_file(std::string(rlx::model_kind_name(c.kind)) + ".rlxp");
      write_bytes(path, rlx::encode_policy_file(file));
      rlx::Policy policy(path);
      std::unique_ptr<rlx::RolloutPolicy> worker = worker_policy(file);
      CHECK(policy.observation_size() == 5);
      CHECK(policy.discrete_actions() == c.actions.is_discrete());
      CHECK(policy.env_id() == "Test-v0");
      rlx::Rng rng(3);
      int changes = 0;  // of the action from one observation to the next
      int64_t last_index = -1;
      float last_value = 0;
      for (int i = 0; i < 50; ++i) {
        std::vector<float> obs(5);
        for (float& x : obs) x = static_cast<float>(4.0 * rng.normal());
        const rlx::PolicyAction action = policy.act(obs, true);
        int64_t index = 0;
        std::vector<float> values(c.actions.is_box() ? 2 : 0), clipped(values.size());
        float log_prob = 0;
        worker->act(obs.data(), 1, {&index, values.data(), worker->has_policy_outputs() ? &log_prob : nullptr, nullptr});
        if (c.actions.is_discrete()) {
          CHECK(action.index == index);
          changes += action.index != last_index;
          last_index = action.index;
        } else {
          REQUIRE(action.values.size() == 2);
          for (size_t j = 0; j < 2; ++j) {
            CHECK(action.values[j] == std::clamp(values[j], box.low[j], box.high[j]));
            CHECK(action.values[j] >= box.low[j]);
            CHECK(action.values[j] <= box.high[j]);
          }
          changes += action.values[0] != last_value;
          last_value = action.values[0];
        }
      }
      CHECK(changes > 2);  // the actions follow the observations
      CHECK_THROWS_AS(policy.act(std::vector<float>(4)), std::invalid_argument);
    }
  }
}

TEST_CASE("stochastic rlx::Policy actions are draws that a seed fixes", "[models][export]") {
  const PolicyFile file = make_file(ModelKind::kActorCritic, rlx::Space::discrete(4), false);
  const std::string path = temp_file("stochastic.rlxp");
  write_bytes(path, rlx::encode_policy_file(file));
  rlx::Policy a(path, 11), b(path, 11);
  const std::vector<float> obs = {0.1f, 0.2f, -0.3f, 0.0f, 0.5f};
  std::vector<int64_t> seen(4, 0);
  for (int i = 0; i < 400; ++i) {
    const int64_t action = a.act(obs, false).index;
    CHECK(b.act(obs, false).index == action);
    ++seen.at(static_cast<size_t>(action));
  }
  int used = 0;
  for (int64_t count : seen) used += count > 0;
  CHECK(used >= 2);  // sampling, not argmax
}

TEST_CASE("damaged, truncated or foreign policy files are refused with the reason", "[models][export]") {
  const std::string bytes = rlx::encode_policy_file(make_file(ModelKind::kActorCritic, rlx::Space::discrete(2), true));
  REQUIRE(refusal(bytes).empty());

  SECTION("any flipped byte") {
    for (size_t at : {size_t{20}, bytes.size() / 2, bytes.size() - 10, bytes.size() - 1}) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
      const std::string why = refusal(damaged);
      CHECK_THAT(why, Catch::StartsWith("p.rlxp: ") && (Catch::Contains("damaged") || Catch::Contains("truncated")));
    }
  }
  SECTION("a truncated file") {
    for (size_t length : {size_t{0}, size_t{10}, size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
      CHECK_THAT(refusal(bytes.substr(0, length)), Catch::Contains("truncated") || Catch::Contains("not an rlx policy"));
    }
    CHECK_THAT(refusal(bytes + "x"), Catch::Contains("trailing bytes"));
  }
  SECTION("another format or version") {
    CHECK_THAT(refusal("PK\x03\x04 some zip file, long enough to hold a header"), Catch::Contains("not an rlx policy file"));
    std::string newer = bytes;
    newer[8] = 3;
    CHECK_THAT(refusal(newer), Catch::Contains("format version 3, this rlx reads versions 1 and 2 (export it again"));
  }
  SECTION("a header whose layers are not the network rlx builds, checksum intact") {
    const size_t header_at = 16;
    std::string edited = bytes;
    const size_t at = edited.find("\"pi_out\"", header_at);
    REQUIRE(at != std::string::npos);
    edited.replace(at, 8, "\"pi_0ut\"");  // same length, so every offset still holds
    const uint32_t crc = rlx::crc32_ieee(std::string_view(edited).substr(0, edited.size() - 4));
    for (int i = 0; i < 4; ++i) edited[edited.size() - 4 + i] = static_cast<char>((crc >> (8 * i)) & 0xffu);
    CHECK_THAT(refusal(edited), Catch::Contains("\"chains\" differ from the network"));
  }
  SECTION("a missing file, and a directory, with the reason") {
    CHECK_THROWS_WITH(rlx::Policy("/nonexistent/policy.rlxp"),
                      Catch::Equals("/nonexistent/policy.rlxp: cannot read the policy file: no such file"));
    const std::string dir = std::filesystem::temp_directory_path().string();
    CHECK_THROWS_WITH(rlx::Policy(dir), Catch::Equals(dir + ": cannot read the policy file: it is a directory"));
  }
}
