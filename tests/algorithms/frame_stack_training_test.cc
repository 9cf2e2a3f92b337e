// frame_stack end to end: a PPO experiment on MinAtar/Breakout-v1 with 4 stacked frames builds its
// CNN over (10, 10, 16), trains an iteration synchronously and with a worker process, and `rlx
// evaluate`'s loop acts on stacked observations from its checkpoint.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "algorithms/evaluation.h"
#include "algorithms/make_algorithm.h"
#include "algorithms/trainer.h"
#include "core/config_error.h"
#include "core/experiment.h"
#include "envs/experiment_envs.h"
#include "tests/algorithms/train_util.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

Experiment stacked_breakout(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"frame_stack=4",        "encoder=auto",      "num_envs_per_worker=2",
                                  "rollout_fragment_length=32", "minibatch_size=32", "num_epochs=1",
                                  "stop.training_iteration=1", "stop.episode_return_mean=null",
                                  "stop.timesteps_total=null", "checkpoint_freq=1", "tensorboard=false"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_experiment(fs::path(RLX_SOURCE_DIR) / "experiments" / "minatar-breakout-ppo.yaml", "", all);
}


}  // namespace

TEST_CASE("frame_stack 4 on MinAtar Breakout builds the model over (10, 10, 16) and trains with and without workers",
          "[algorithms][frame_stack]") {
  const Experiment synchronous = stacked_breakout({"num_workers=0"});
  const std::unique_ptr<Algorithm> algorithm = make_algorithm(synchronous);
  const ModelSpec& model = algorithm->worker_setup().model;
  CHECK(model.observation_space.shape == std::vector<int64_t>{10, 10, 16});
  CHECK(model.obs_size == 1600);
  CHECK(algorithm->worker_setup().frame_stack == 4);
  CHECK(experiment_env_spec(synchronous).observation_space.shape == std::vector<int64_t>{10, 10, 16});

  char pattern[] = "/tmp/rlx-frame-stack-XXXXXX";
  const fs::path output = ::mkdtemp(pattern);
  for (const char* workers : {"num_workers=0", "num_workers=1"}) {
    INFO(workers);
    const TrainOutcome outcome = test::train_quietly(stacked_breakout({workers}), output / workers);
    const nlohmann::json& row = outcome.final_row;
    INFO(row.dump());
    CHECK(row.at("training_iteration").get<int64_t>() == 1);
    CHECK(row.at("timesteps_total").get<int64_t>() >= 64);
    if (std::string(workers) == "num_workers=1") {  // the worker's stacked fragments fit the learner's env
      CHECK(row.at("sampler").at("workers_joined").get<int64_t>() == 1);
      CHECK(row.at("sampler").at("fragments_consumed").get<int64_t>() >= 1);
      CHECK(row.at("sampler").at("fragments_refused").get<int64_t>() == 0);
    }
    REQUIRE(outcome.last_checkpoint);

    // rlx evaluate takes frame_stack from the checkpoint's experiment: its env observes the stack.
    EvaluationOptions evaluation;
    evaluation.checkpoint = *outcome.last_checkpoint;
    evaluation.episodes = 1;
    int64_t checked = 0;
    evaluation.on_action = [&](int, int64_t, const Env& env, const ObsRow&, const Action&) {
      if (checked++ == 0) CHECK(env.spec().observation_space.shape == std::vector<int64_t>{10, 10, 16});
    };
    evaluation.on_state = [&](int, const Env& env) {  // what --record draws: the raw env
      CHECK(env.spec().observation_space.shape == std::vector<int64_t>{10, 10, 4});
    };
    const EvaluationResult result = evaluate_checkpoint(evaluation);
    CHECK(result.lengths.at(0) > 0);
    CHECK(checked == result.lengths.at(0));
  }
  fs::remove_all(output);
}

TEST_CASE("frame_stack on an env whose observations cannot be stacked is refused naming the env and space",
          "[algorithms][frame_stack]") {
  Experiment dict = stacked_breakout({"num_workers=0", "env=Toy/DictSensors-v0", "encoder=mlp"});
  CHECK_THROWS_AS(make_algorithm(dict), ConfigError);
  CHECK_THROWS_WITH(make_algorithm(dict), Catch::Contains("frame_stack") && Catch::Contains("Toy/DictSensors-v0") &&
                                              Catch::Contains("Dict("));
}

}  // namespace rlx
