// The model spec an experiment trains is built once from its config, travels in checkpoints,
// and files of the rlx before model specs still load: a checkpoint its `rlx train` wrote
// (tests/data/before-model-spec/, made by that build: see its README) evaluates to the actions
// that build traced, and its version-1 .rlxp acts as the new export of the same checkpoint.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/algorithm.h"
#include "algorithms/evaluation.h"
#include "algorithms/model_from_config.h"
#include "algorithms/policy_export.h"
#include "core/checkpoint_dir.h"
#include "core/config_error.h"
#include "core/temp_dir.h"
#include "envs/registry.h"
#include "models/model_spec_json.h"
#include "models/policy.h"
#include "models/policy_file.h"
#include "tests/algorithms/train_util.h"

namespace rlx {
namespace {

const std::string kOldData = std::string(RLX_TEST_DATA_DIR) + "/before-model-spec";

Experiment experiment_of(AlgorithmKind algorithm, const std::string& env) { return test::experiment_on(env, algorithm); }

TEST_CASE("model_from_config takes structured observations for PPO and DQN and refuses what no learner trains on yet",
          "[algorithms][model_spec]") {
  EnvSpec board;
  board.id = "Board-v0";
  board.observation_space = Space::dict({{"grid", Space::box({3, 3}, 0, 1, ScalarType::kUint8)}, {"turn", Space::discrete(2)}});
  board.action_space = Space::discrete(9);
  const ModelSpec ppo = model_from_config(experiment_of(AlgorithmKind::kPPO, "Board-v0"), board);
  CHECK(ppo.obs_size == 9 + 2);
  CHECK(ppo.observation_space == board.observation_space);
  EnvSpec masked = board;
  masked.action_mask = true;
  // DQN trains on them too, masked or not: its Q-network reads the same flattened input.
  for (const EnvSpec& env : {board, masked}) {
    const ModelSpec q_network = model_from_config(experiment_of(AlgorithmKind::kDQN, "Board-v0"), env);
    CHECK(q_network.kind == ModelKind::kQNetwork);
    CHECK(q_network.obs_size == 9 + 2);
    CHECK(q_network.action_mask == env.action_mask);
  }
  // Its actions stay Discrete: a MultiDiscrete board is refused.
  EnvSpec multi = board;
  multi.action_space = Space::multi_discrete({3, 3}, {0, 0});
  CHECK_THROWS_WITH(model_from_config(experiment_of(AlgorithmKind::kDQN, "Board-v0"), multi),
                    Catch::Contains("algorithm DQN needs a Discrete action space, but env Board-v0 has MultiDiscrete("));
  // PPO and APPO train on masked and MultiDiscrete actions: the spec carries the mask and the categories.
  EnvSpec masked_multi = masked;
  masked_multi.action_space = Space::multi_discrete({3, 3}, {0, 0});
  for (const AlgorithmKind algorithm : {AlgorithmKind::kPPO, AlgorithmKind::kAPPO}) {
    const ModelSpec masked_ppo = model_from_config(experiment_of(algorithm, "Board-v0"), masked);
    CHECK(masked_ppo.action_mask);
    CHECK(masked_ppo.action_categories() == std::vector<int64_t>{9});
    const ModelSpec multi_ppo = model_from_config(experiment_of(algorithm, "Board-v0"), masked_multi);
    CHECK(multi_ppo.action_mask);
    CHECK(multi_ppo.action_categories() == std::vector<int64_t>{3, 3});
    CHECK(multi_ppo.policy_output_size() == 6);
  }
  Experiment normalized = experiment_of(AlgorithmKind::kPPO, "Board-v0");
  normalized.config.set("normalize_observations", true);
  CHECK_THROWS_WITH(model_from_config(normalized, board), Catch::Contains("normalize_observations needs float32 Box observations"));
}

TEST_CASE("model_from_config builds each algorithm's model from the config's network keys", "[algorithms][model_spec]") {
  Experiment ppo = experiment_of(AlgorithmKind::kPPO, "Pendulum-v1");
  ppo.config.set("hidden_sizes", std::vector<int64_t>{32, 16});
  ppo.config.set("activation", std::string("relu"));
  ppo.config.set("vf_share_layers", true);
  ppo.config.set("log_std_init", -1.0);
  ppo.config.set("ortho_init", false);
  ppo.config.set("head_fcnet_hiddens", std::vector<int64_t>{24});
  const ModelSpec actor_critic = model_from_config(ppo, global_env_registry().spec("Pendulum-v1"));
  CHECK(actor_critic.kind == ModelKind::kActorCritic);
  CHECK(actor_critic.obs_size == 3);
  CHECK(actor_critic.hidden_sizes == std::vector<int64_t>{32, 16});
  CHECK(actor_critic.activation == "relu");
  CHECK(actor_critic.shared_trunk);
  CHECK(actor_critic.log_std_init == -1.0);
  CHECK_FALSE(actor_critic.ortho_init);
  CHECK(actor_critic.head_sizes == std::vector<int64_t>{24});
  Experiment appo = experiment_of(AlgorithmKind::kAPPO, "CartPole-v1");
  appo.config.set("head_fcnet_hiddens", std::vector<int64_t>{8, 8});
  CHECK(model_from_config(appo, global_env_registry().spec("CartPole-v1")).head_sizes == std::vector<int64_t>{8, 8});
  CHECK(model_from_config(experiment_of(AlgorithmKind::kPPO, "CartPole-v1"), global_env_registry().spec("CartPole-v1"))
            .head_sizes.empty());

  Experiment dqn = experiment_of(AlgorithmKind::kDQN, "CartPole-v1");
  dqn.config.set("dueling", true);
  const ModelSpec q_network = model_from_config(dqn, global_env_registry().spec("CartPole-v1"));
  CHECK(q_network.kind == ModelKind::kQNetwork);
  CHECK(q_network.dueling);
  CHECK(model_from_config(experiment_of(AlgorithmKind::kSAC, "Pendulum-v1"), global_env_registry().spec("Pendulum-v1"))
            .kind == ModelKind::kSquashedGaussian);
  CHECK_THROWS_MATCHES(model_from_config(experiment_of(AlgorithmKind::kSAC, "CartPole-v1"),
                                         global_env_registry().spec("CartPole-v1")),
                       ConfigError, Catch::Message("test.yaml: algorithm SAC needs a Box action space, but env "
                                                   "CartPole-v1 has Discrete(2) (use DQN or PPO for Discrete actions)"));
}

// The trace's steps: observation and action.
std::vector<std::pair<std::vector<float>, std::vector<float>>> read_trace(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::vector<std::pair<std::vector<float>, std::vector<float>>> steps;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json step = nlohmann::json::parse(line);
    steps.emplace_back(step.at("obs").get<std::vector<float>>(), step.at("action").get<std::vector<float>>());
  }
  return steps;
}

TEST_CASE("a checkpoint of the rlx before model specs evaluates to the actions that build traced",
          "[algorithms][model_spec][compat]") {
  const auto traced = read_trace(kOldData + "/pendulum-ppo-trace.jsonl");
  REQUIRE(traced.size() == 200);
  EvaluationOptions options;
  options.checkpoint = kOldData + "/pendulum-ppo-checkpoint";
  options.episodes = 1;
  options.deterministic = true;
  options.seed = 5;  // as the trace was taken
  std::vector<std::vector<float>> actions;
  options.on_action = [&](int, int64_t, const Env&, const ObsRow&, const Action& action) {
    actions.push_back({action.values[0]});  // Pendulum: one torque
  };
  const EvaluationResult result = evaluate_checkpoint(options);
  REQUIRE(actions.size() == traced.size());
  // The first steps before rounding (FMA or not) can build up in the pendulum's dynamics.
  for (size_t t = 0; t < 20; ++t) CHECK(actions[t].at(0) == Approx(traced[t].second.at(0)).margin(1e-5));
  CHECK(result.return_mean == Approx(-1144.1807931718722).epsilon(1e-3));
}

TEST_CASE("a version-1 .rlxp acts as the new export of the same checkpoint", "[algorithms][model_spec][compat]") {
  const RestoredAlgorithm restored = restore_algorithm(kOldData + "/pendulum-ppo-checkpoint", {});
  const PolicyFile exported = export_policy(restored);
  const PolicyFile old = read_policy_file(kOldData + "/pendulum-ppo-v1.rlxp");
  CHECK(old.model == exported.model);
  CHECK(old.parameters == exported.parameters);
  CHECK(old.obs_mean == exported.obs_mean);

  TempDir dir("rlx-model-spec-");
  const std::string path = (dir.path() / "new.rlxp").string();
  std::ofstream(path, std::ios::binary) << encode_policy_file(exported);
  Policy from_old(kOldData + "/pendulum-ppo-v1.rlxp"), from_new(path);
  for (const auto& [obs, action] : read_trace(kOldData + "/pendulum-ppo-trace.jsonl")) {
    CHECK(from_new.act(obs).values == from_old.act(obs).values);
  }
}

TEST_CASE("a checkpoint records its model, and one whose model the config no longer builds is refused",
          "[algorithms][model_spec][compat]") {
  Checkpoint old = read_checkpoint_dir(kOldData + "/pendulum-ppo-checkpoint");
  const RestoredAlgorithm restored = restore_algorithm(old.path, {});
  const ModelSpec built = restored.algorithm->worker_setup().model;
  CHECK(built.hidden_sizes == std::vector<int64_t>{8});
  check_checkpoint_model(old, built);  // none recorded: an rlx before model specs

  TempDir dir("rlx-model-spec-");
  nlohmann::json manifest = old.manifest;
  for (const char* key : {"format_version", "created_at", "files"}) manifest.erase(key);
  manifest["model"] = model_spec_to_json(built);
  manifest["model"]["encoder"]["hidden_sizes"] = {16};
  std::vector<CheckpointFile> files;
  for (const auto& [name, bytes] : old.files) files.push_back({name, bytes});
  write_checkpoint_dir(dir.path() / "checkpoint_000002", manifest, files);
  CHECK_THROWS_MATCHES(restore_algorithm(dir.path() / "checkpoint_000002", {}), CheckpointRefused,
                       Catch::Predicate<CheckpointRefused>([](const CheckpointRefused& error) {
                         const std::string what = error.what();
                         return what.find("\"hidden_sizes\":[16]") != std::string::npos &&
                                what.find("differs from the one its config builds") != std::string::npos;
                       }));
  manifest["model"]["encoder"]["hidden_sizes"] = {8};
  write_checkpoint_dir(dir.path() / "checkpoint_000002", manifest, files);
  CHECK(restore_algorithm(dir.path() / "checkpoint_000002", {}).algorithm->worker_setup().model == built);
}

}  // namespace
}  // namespace rlx
