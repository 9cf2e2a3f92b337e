// What a checkpoint promises: a synchronous run stopped and resumed continues bit for bit like a
// straight run (envs mid-episode, action sampling, learner, replay buffer, normalizers); a
// finished run resumes to nothing; a checkpoint of non-finite weights is never written.
#include "tests/learner/torch_catch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/dqn_algorithm.h"
#include "algorithms/make_algorithm.h"
#include "algorithms/sac_algorithm.h"
#include "algorithms/trainer.h"
#include "tests/algorithms/train_util.h"
#include "algorithms/training_checkpoint.h"
#include "core/checkpoint_dir.h"
#include "core/experiment.h"
#include "core/temp_dir.h"
#include "envs/registry.h"
#include "learner/dqn_learner.h"
#include "learner/non_finite.h"
#include "learner/policy_networks.h"
#include "tests/learner/learner_test_configs.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;
using test::train_quietly;

// result.jsonl's rows without the wall-clock columns and the attempt (a resumed run is the
// trial's second).
std::vector<nlohmann::json> rows_without_times(const fs::path& trial) {
  std::ifstream in(trial / "result.jsonl");
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json row = nlohmann::json::parse(line);
    for (const char* key : {"time_total_s", "time_this_iter_s", "env_steps_per_s", "attempt"}) row.erase(key);
    rows.push_back(row);
  }
  return rows;
}

// A checkpoint's manifest without its times, attempt and file hashes (torch archives name
// optimizer state by tensor addresses, so their bytes differ between processes).
nlohmann::json manifest_without_files(const Checkpoint& checkpoint) {
  nlohmann::json manifest = checkpoint.manifest;
  manifest.erase("created_at");
  manifest.erase("files");
  manifest["counters"].erase("time_total_s");
  manifest["counters"].erase("attempt");
  // Replay segments are cut where each run checkpointed, and named apart: the buffers are
  // compared by content (checkpoint_replay).
  if (manifest.contains("replay")) manifest["replay"].erase("segments");
  return manifest;
}

// A SAC or DQN checkpoint's whole replay buffer as its segments restore it ("" for other algorithms).
std::string checkpoint_replay(const Checkpoint& checkpoint) {
  const Experiment experiment = experiment_from_json(checkpoint.manifest.at("experiment"), "checkpoint");
  std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment);
  algorithm->restore(checkpoint);
  if (auto* sac = dynamic_cast<SacAlgorithm*>(algorithm.get())) return sac->learner().save_replay();
  if (auto* dqn = dynamic_cast<DqnAlgorithm*>(algorithm.get())) return dqn->learner().save_replay();
  return std::string();
}

// The flat weights a checkpoint's learner hands its workers.
std::vector<float> checkpoint_weights(const Checkpoint& checkpoint) {
  const Experiment experiment = experiment_from_json(checkpoint.manifest.at("experiment"), "checkpoint");
  std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment);
  algorithm->restore(checkpoint);
  return algorithm->current_weights()->params;
}

Experiment experiment_from(const std::string& file, const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"num_workers=0", "stop.episode_return_mean=null"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_experiment(fs::path(RLX_SOURCE_DIR) / "experiments" / file, "", all);
}

// Trains `iterations` straight, and again stopped at `middle` and resumed; both must agree
// row for row and file for file.
void check_resume_is_exact(const Experiment& experiment, int middle, int iterations) {
  TempDir straight_dir, stopped_dir;
  Experiment full = experiment;
  apply_override(full, "stop.training_iteration=" + std::to_string(iterations));
  apply_override(full, "checkpoint_freq=" + std::to_string(middle));
  const TrainOutcome straight = train_quietly(full, straight_dir.path());
  REQUIRE(straight.last_checkpoint);

  Experiment first_part = full;
  apply_override(first_part, "stop.training_iteration=" + std::to_string(middle));
  const TrainOutcome stopped = train_quietly(first_part, stopped_dir.path());
  REQUIRE(stopped.last_checkpoint);
  const TrainOutcome resumed = train_quietly(full, stopped_dir.path(), *stopped.last_checkpoint);
  REQUIRE(resumed.last_checkpoint);

  const std::vector<nlohmann::json> a = rows_without_times(straight.trial_dir), b = rows_without_times(resumed.trial_dir);
  REQUIRE(a.size() == static_cast<size_t>(iterations));
  REQUIRE(b.size() == a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("iteration " << i + 1);
    CHECK(a[i].dump() == b[i].dump());
  }
  const Checkpoint x = read_checkpoint_dir(*straight.last_checkpoint), y = read_checkpoint_dir(*resumed.last_checkpoint);
  CHECK(manifest_without_files(x).dump() == manifest_without_files(y).dump());
  CHECK(checkpoint_weights(x) == checkpoint_weights(y));
  CHECK(checkpoint_replay(x) == checkpoint_replay(y));
  for (const auto& [name, bytes] : x.files) {
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0) continue;
    CHECK(bytes == y.files.at(name));  // e.g. the replay buffer, byte for byte
  }
}

}  // namespace

TEST_CASE("A synchronous PPO run stopped and resumed is bit-exact with a straight run", "[algorithms][resume]") {
  // Observation normalisation and reward scaling carry running statistics across the resume.
  check_resume_is_exact(experiment_from("cartpole-ppo.yaml", {"normalize_observations=true", "scale_rewards=true"}), 3, 6);
}

TEST_CASE("A synchronous recurrent PPO run resumes bit-exact, the envs' LSTM states included",
          "[algorithms][resume][recurrent]") {
  // Episodes run across the stop (CartPoleNoVel's last longer than a few fragments), so the
  // states the policy carries into the resumed run are not zeros.
  check_resume_is_exact(experiment_from("cartpole-novel-ppo.yaml", {"lstm_cell_size=16"}), 3, 6);
}

TEST_CASE("A synchronous gSDE PPO run resumes bit-exact, its exploration matrices redrawn alike",
          "[algorithms][resume][sde]") {
  // A sample frequency that does not divide the fragment: each fragment redraws at its start.
  check_resume_is_exact(experiment_from("pendulum-novel-ppo.yaml", {"use_sde=true", "sde_sample_freq=3",
                                                                    "rollout_fragment_length=64", "lstm_cell_size=16",
                                                                    "minibatch_size=64", "num_epochs=2"}),
                        3, 6);
}

TEST_CASE("A synchronous DQN run stopped and resumed is bit-exact with a straight run", "[algorithms][resume]") {
  // Prioritized 3-step replay: the buffer, its windows and priorities travel in the checkpoint.
  check_resume_is_exact(
      experiment_from("cartpole-dqn.yaml", {"hidden_sizes=[32, 32]", "learning_starts=500", "gradient_steps=16"}), 2, 4);
}

TEST_CASE("A synchronous SAC run stopped and resumed is bit-exact with a straight run", "[algorithms][resume][sac]") {
  // The uniform warm-up ends inside the first part; the replay, optimisers and log alpha travel.
  check_resume_is_exact(experiment_from("pendulum-sac.yaml", {"hidden_sizes=[32, 32]", "learning_starts=500", "batch_size=64"}),
                        2, 4);
}

TEST_CASE("A MuJoCo PPO run resumes exactly mid-episode", "[algorithms][resume]") {
  check_resume_is_exact(experiment_from("hopper-ppo.yaml", {"num_envs_per_worker=2", "rollout_fragment_length=128",
                                                            "train_batch_size=256", "minibatch_size=128", "num_epochs=1"}),
                        2, 4);
}

TEST_CASE("Resuming a run that met its stop criterion trains nothing more", "[algorithms][resume]") {
  TempDir dir;
  const Experiment experiment = experiment_from("cartpole-ppo.yaml", {"stop.training_iteration=2"});
  const TrainOutcome done = train_quietly(experiment, dir.path());
  REQUIRE(done.last_checkpoint);
  const TrainOutcome again = train_quietly(experiment, dir.path(), *done.last_checkpoint);
  CHECK(again.stopped_by == "training_iteration");
  CHECK(again.final_row["training_iteration"] == 2);
  CHECK(again.last_checkpoint == done.last_checkpoint);
  CHECK(rows_without_times(done.trial_dir).size() == 2);
  CHECK_FALSE(fs::exists(done.trial_dir / "checkpoints" / "checkpoint_000003"));
}

TEST_CASE("A checkpoint of non-finite weights is never written, and the error names the last good one",
          "[algorithms][checkpoint][nonfinite]") {
  TempDir dir;
  Weights weights;
  weights.params = {0.5f, -1.0f, 2.0f};
  const fs::path good = dir.path() / "checkpoint_000001", next = dir.path() / "checkpoint_000002";
  write_training_checkpoint(good, nlohmann::json::object(), {{"model.pt", "bytes"}}, non_finite_weight(weights), std::nullopt);
  CHECK(fs::exists(good / "checkpoint.json"));
  weights.params[1] = std::numeric_limits<float>::quiet_NaN();
  try {
    write_training_checkpoint(next, nlohmann::json::object(), {{"model.pt", "bytes"}}, non_finite_weight(weights), good);
    FAIL("no error");
  } catch (const NonFiniteLearnerError& error) {
    CHECK_THAT(error.what(), Catch::Contains("parameter 1 = nan") && Catch::Contains("checkpoint_000002 was not written") &&
                                 Catch::Contains("the last good checkpoint is " + good.string()));
  }
  CHECK_FALSE(fs::exists(next));
  weights.params[1] = 1.0f;
  weights.obs_mean = {0.0, 1.0};
  weights.obs_var = {1.0, std::numeric_limits<double>::infinity()};
  CHECK_THROWS_WITH(write_training_checkpoint(next, nlohmann::json::object(), {}, non_finite_weight(weights), good),
                    Catch::Contains("observation statistic 1"));
}

TEST_CASE("A checkpoint that holds non-finite weights is refused on resume", "[algorithms][checkpoint][nonfinite]") {
  TempDir dir;
  const Experiment experiment = experiment_from(
      "cartpole-dqn.yaml", {"stop.training_iteration=1", "checkpoint_freq=1", "learning_starts=100000", "hidden_sizes=[8]"});
  const TrainOutcome first = train_quietly(experiment, dir.path());
  REQUIRE(first.last_checkpoint);

  // The same checkpoint with NaN weights, as a diverged learner of another program might leave them.
  const Checkpoint good = read_checkpoint_dir(*first.last_checkpoint);
  ModelSpec model = ModelSpec::for_env(global_env_registry().spec("CartPole-v1"));
  model.hidden_sizes = {8};
  model.activation = "relu";
  model.dueling = true;
  DqnLearner learner(model, rlx::test::dqn_test_config(), 0);
  std::istringstream archive(good.files.at("q_networks_and_optimizer.pt"));
  learner.load(archive);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : learner.online().parameters()) p.fill_(std::numeric_limits<float>::quiet_NaN());
  }
  std::ostringstream poisoned;
  learner.save(poisoned);
  nlohmann::json manifest = good.manifest;
  for (const char* key : {"format_version", "created_at", "files"}) manifest.erase(key);
  std::vector<CheckpointFile> files;
  for (const auto& [name, bytes] : good.files) files.push_back({name, name == "q_networks_and_optimizer.pt" ? poisoned.str() : bytes});
  const fs::path bad = first.trial_dir / "checkpoints" / "checkpoint_000009";
  write_checkpoint_dir(bad, manifest, files);

  Experiment longer = experiment;
  apply_override(longer, "stop.training_iteration=3");
  CHECK_THROWS_WITH(train_quietly(longer, dir.path(), bad), Catch::Contains(bad.string() + " holds non-finite weights (parameter 0 = nan)"));
}

}  // namespace rlx
