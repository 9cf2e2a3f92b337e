// The training loop end to end on tiny budgets: results files, checkpoints, resume, refusal of
// damaged checkpoints, evaluation, and config errors through `rlx train`.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/evaluation.h"
#include "algorithms/make_algorithm.h"
#include "algorithms/trainer.h"
#include "tests/algorithms/train_util.h"
#include "core/checkpoint_dir.h"
#include "core/experiment.h"
#include "core/temp_dir.h"
#include "models/network_layout.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// Evaluation of `episodes` episodes of the checkpoint, other options at their defaults.
EvaluationOptions evaluation_of(const fs::path& checkpoint, int episodes) {
  EvaluationOptions options;
  options.checkpoint = checkpoint;
  options.episodes = episodes;
  return options;
}


std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Experiment tiny(const std::string& file, const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"checkpoint_freq=2", "num_workers=0", "stop.episode_return_mean=null"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_experiment(fs::path(RLX_SOURCE_DIR) / "experiments" / file, "", all);
}

using test::train_quietly;

size_t count_lines(const fs::path& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

}  // namespace

TEST_CASE("a PPO run writes params, results rows and checkpoints, and resumes with its counters", "[algorithms][checkpoint]") {
  TempDir dir;
  const Experiment experiment = tiny("cartpole-ppo.yaml", {"stop.training_iteration=3"});
  const TrainOutcome first = train_quietly(experiment, dir.path());
  CHECK_FALSE(first.reward_reached);
  CHECK(first.stopped_by == "training_iteration");
  const fs::path trial = dir.path() / "cartpole-ppo" / "trial";
  CHECK(first.trial_dir == trial);
  CHECK(fs::exists(trial / "params.yaml"));
  CHECK(count_lines(trial / "result.jsonl") == 3);
  CHECK(count_lines(trial / "progress.csv") == 4);  // header + 3 rows
  const nlohmann::json final_result = nlohmann::json::parse(read_text(trial / "result.json"));
  CHECK(final_result["stop_reached"] == false);
  CHECK(final_result["training_iteration"] == 3);
  REQUIRE(first.last_checkpoint);
  CHECK(first.last_checkpoint->filename() == "checkpoint_000003");
  CHECK(fs::exists(trial / "checkpoints" / "checkpoint_000002"));
  for (const char* key : {"timesteps_total", "time_total_s", "episodes_total", "episode_return_mean",
                          "episode_len_mean", "env_steps_per_s"}) {
    CHECK(final_result.contains(key));
  }
  CHECK(final_result["learner"].contains("policy_loss"));

  // Resume from iteration 2 with a budget of 5: iterations 3..5 follow, row 3 is not duplicated.
  Experiment longer = experiment;
  apply_override(longer, "stop.training_iteration=5");
  const TrainOutcome resumed = train_quietly(longer, dir.path(), trial / "checkpoints" / "checkpoint_000002");
  CHECK(resumed.trial_dir == trial);
  CHECK(resumed.final_row["training_iteration"] == 5);
  const int64_t per_iteration = first.final_row["timesteps_total"].get<int64_t>() / 3;
  CHECK(resumed.final_row["timesteps_total"] == 5 * per_iteration);
  CHECK(count_lines(trial / "result.jsonl") == 5);
}

TEST_CASE("damaged checkpoints are refused with a clear error", "[algorithms][checkpoint]") {
  TempDir dir;
  const TrainOutcome outcome = train_quietly(tiny("cartpole-ppo.yaml", {"stop.training_iteration=1"}), dir.path());
  REQUIRE(outcome.last_checkpoint);
  const fs::path checkpoint = *outcome.last_checkpoint;
  const fs::path model = checkpoint / "ppo_learner.bin";
  REQUIRE(fs::exists(model));
  std::string bytes = read_text(model);
  SECTION("a flipped byte") {
    bytes[bytes.size() / 2] ^= 0x5a;
    std::ofstream(model, std::ios::binary | std::ios::trunc) << bytes;
    CHECK_THROWS_WITH(evaluate_checkpoint(evaluation_of(checkpoint, 1)), Catch::Contains("SHA-256"));
  }
  SECTION("a truncated file") {
    std::ofstream(model, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
    CHECK_THROWS_WITH(evaluate_checkpoint(evaluation_of(checkpoint, 1)), Catch::Contains("truncated"));
  }
  SECTION("a missing manifest") {
    fs::remove(checkpoint / "checkpoint.json");
    CHECK_THROWS_WITH(evaluate_checkpoint(evaluation_of(checkpoint, 1)), Catch::Contains("checkpoint.json"));
  }
  SECTION("another env's spaces") {
    EvaluationOptions options = evaluation_of(checkpoint, 1);
    options.env_id = "Acrobot-v1";
    CHECK_THROWS_WITH(evaluate_checkpoint(options), Catch::Contains("other spaces"));
  }
}

TEST_CASE("a DQN run checkpoints and evaluates", "[algorithms][checkpoint]") {
  TempDir dir;
  const TrainOutcome outcome =
      train_quietly(tiny("cartpole-dqn.yaml", {"stop.training_iteration=2", "learning_starts=500"}), dir.path());
  REQUIRE(outcome.last_checkpoint);
  CHECK(outcome.final_row["learner"]["num_gradient_steps"].get<int64_t>() > 0);
  EvaluationOptions options = evaluation_of(*outcome.last_checkpoint, 3);
  options.deterministic = true;
  const EvaluationResult result = evaluate_checkpoint(options);
  CHECK(result.returns.size() == 3);
  CHECK(result.return_min >= 1.0);
  CHECK(result.algorithm == "DQN");
}

}  // namespace rlx

namespace rlx {

TEST_CASE("Every example in experiments/ loads and builds its algorithm", "[algorithms][examples]") {
  int examples = 0;
  for (const std::filesystem::directory_entry& entry :
       std::filesystem::directory_iterator(std::filesystem::path(RLX_SOURCE_DIR) / "experiments")) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().filename().string();
    // Tuning specs hold search spaces (`grid_search`, `tune:`) that only `rlx tune` resolves.
    if (name.rfind("pbt-", 0) == 0 || name.rfind("asha-", 0) == 0) continue;
    INFO(name);
    const Experiment experiment = load_experiment(entry.path(), "", {});
    CHECK(make_algorithm(experiment) != nullptr);
    ++examples;
  }
  CHECK(examples >= 15);
}

TEST_CASE("ortho_init reaches the initial weights of both PPO back ends", "[algorithms][model]") {
  for (const char* backend : {"native", "torch"}) {
    for (const bool ortho : {true, false}) {
      INFO(backend << " ortho_init " << ortho);
      const Experiment experiment = tiny("pendulum-ppo.yaml", {std::string("learner_backend=") + backend,
                                                               std::string("ortho_init=") + (ortho ? "true" : "false")});
      const std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment);
      const std::vector<float> params = algorithm->current_weights()->params;
      ModelSpec pendulum;
      pendulum.obs_size = 3;
      pendulum.action_space = Space::box({1}, -2.0f, 2.0f);
      const ActorCriticLayout layout = actor_critic_layout(pendulum);
      REQUIRE(params.size() == layout.num_parameters);
      // The orthogonal init zeroes every bias; PyTorch's default draws them in +-1/sqrt(fan_in).
      const LayerSpec& first = layout.policy_chain.front();
      double largest_bias = 0.0;
      for (int64_t o = 0; o < first.out; ++o) {
        largest_bias = std::max(largest_bias, std::abs(static_cast<double>(params[first.bias_offset() + static_cast<size_t>(o)])));
      }
      if (ortho) {
        CHECK(largest_bias == 0.0);
      } else {
        CHECK(largest_bias > 0.5 / std::sqrt(3.0));
        CHECK(largest_bias <= 1.0 / std::sqrt(3.0));
      }
    }
  }
}

TEST_CASE("obs_stats_after_update: the update sees the observations as the workers normalised them", "[algorithms][normalization]") {
  for (const char* backend : {"native", "torch"}) {
    for (const bool after : {true, false}) {
      INFO(backend << " obs_stats_after_update " << after);
      TempDir dir;
      // One epoch of one minibatch: its ratios are those of the update's start, pi over the workers'
      // mu. A narrow policy (std e^-2, outputs not scaled down) makes the ratios feel the statistics.
      const Experiment experiment =
          tiny("pendulum-ppo.yaml", {std::string("learner_backend=") + backend, "rollout_fragment_length=256",
                                     "num_epochs=1", "minibatch_size=1024", "stop.training_iteration=4", "log_std_init=-2", "ortho_init=false",
                                     std::string("obs_stats_after_update=") + (after ? "true" : "false")});
      train_quietly(experiment, dir.path());
      std::ifstream rows(dir.path() / "pendulum-ppo" / "trial" / "result.jsonl");
      double largest_clip_fraction = 0.0, largest_kl = 0.0;
      int count = 0;
      for (std::string line; std::getline(rows, line);) {
        const nlohmann::json learner = nlohmann::json::parse(line).at("learner");
        largest_clip_fraction = std::max(largest_clip_fraction, learner.at("clip_fraction").get<double>());
        largest_kl = std::max(largest_kl, std::abs(learner.at("approx_kl").get<double>()));
        ++count;
      }
      REQUIRE(count == 4);
      if (after) {
        // The learner's log-probs are the workers' to the bit: no ratio starts away from 1.
        CHECK(largest_clip_fraction == 0.0);
        CHECK(largest_kl < 1e-6);
      } else {
        // Statistics that moved with the batch shift the ratios before any step (0.56 and 0.66
        // of the samples outside the clip here, most in the first update, whose workers had no
        // statistics yet).
        CHECK(largest_clip_fraction > 0.1);
      }
    }
  }
}

}  // namespace rlx
