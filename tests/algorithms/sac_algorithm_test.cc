// SacAlgorithm's loop on a synchronous sampler: uniform actions until learning_starts, then
// utd_ratio gradient steps per env step and the exploration rate 0 in the published weights; and
// the settings it refuses, naming the key and value.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "algorithms/local_sampler.h"
#include "algorithms/make_algorithm.h"
#include "algorithms/native_algorithms.h"
#include "algorithms/sac_algorithm.h"
#include "algorithms/trainer.h"
#include "core/config_error.h"
#include "core/experiment.h"
#include "native/product_threads.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;
using Catch::Contains;

Experiment sac_experiment(const std::vector<std::string>& overrides) {
  std::vector<std::string> all = {"num_workers=0", "hidden_sizes=[16, 16]", "batch_size=32"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_experiment(fs::path(RLX_SOURCE_DIR) / "experiments" / "pendulum-sac.yaml", "", all);
}

std::string config_error_of(const Experiment& experiment) {
  try {
    make_algorithm(experiment);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST_CASE("SAC acts uniformly until learning_starts, then takes utd_ratio gradient steps per env step",
          "[algorithms][sac]") {
  for (double utd : {1.0, 0.25}) {
    std::unique_ptr<Algorithm> algorithm =
        make_algorithm(sac_experiment({"learning_starts=600", "utd_ratio=" + std::to_string(utd)}));
    REQUIRE(dynamic_cast<SacAlgorithm*>(algorithm.get()) != nullptr);
    CHECK(algorithm->worker_setup().model.kind == ModelKind::kSquashedGaussian);
    CHECK(algorithm->worker_setup().epsilon == 1.0);
    CHECK(algorithm->current_weights()->epsilon == 1.0);
    LocalSampler sampler(algorithm->worker_setup());
    sampler.publish(algorithm->current_weights());
    const IterationResult first = algorithm->train_iteration(sampler, 0);
    INFO("utd_ratio " << utd << ": " << first.learner.dump());
    CHECK(first.env_steps == kSacStepsPerIteration);
    CHECK(first.learner.at("num_gradient_steps").get<int64_t>() == static_cast<int64_t>(utd * (1000 - 600)));
    CHECK(first.learner.at("buffer_size").get<int64_t>() == 1000);
    CHECK(first.learner.at("exploration_rate").get<double>() == 0.0);
    CHECK(algorithm->current_weights()->epsilon == 0.0);
    const IterationResult second = algorithm->train_iteration(sampler, 1000);
    CHECK(second.learner.at("num_gradient_steps").get<int64_t>() == static_cast<int64_t>(utd * (2000 - 600)));
    CHECK(std::isfinite(second.learner.at("critic_loss").get<double>()));
    CHECK(second.learner.at("alpha").get<double>() < 1.0);  // the temperature is learned, down from 1
  }
}

TEST_CASE("SAC trains with a worker process acting with the current weights", "[algorithms][sac][distributed]") {
  char pattern[] = "/tmp/rlx-sac-worker-XXXXXX";
  const fs::path output = ::mkdtemp(pattern);
  TrainOptions options;
  options.make_algorithm = [](const Experiment& e, const DataParallelOptions& o) { return make_algorithm(e, o); };
  options.experiment = sac_experiment({"num_workers=1", "learning_starts=500", "stop.timesteps_total=2000",
                                       "stop.episode_return_mean=null"});
  options.output_root = output;
  options.progress = false;
  options.worker_program = std::string(RLX_BINARY_DIR) + "/rlx";
  const TrainOutcome outcome = run_training(options);
  fs::remove_all(output);
  const nlohmann::json& row = outcome.final_row;
  INFO(row.dump());
  CHECK(row.at("timesteps_total").get<int64_t>() >= 2000);
  CHECK(row.at("learner").at("num_gradient_steps").get<int64_t>() >= 1000);
  CHECK(row.at("learner").at("policy_version").get<int64_t>() > 1);
  // Off-policy: fragments from older weights are learned from, not dropped.
  CHECK(row.at("sampler").at("fragments_dropped_stale").get<int64_t>() == 0);
  CHECK(row.at("sampler").at("fragments_refused").get<int64_t>() == 0);
}

TEST_CASE("SAC refuses LibTorch's learner, several learners, another device and Discrete actions", "[algorithms][sac]") {
  CHECK_THAT(config_error_of(sac_experiment({"learner_backend=torch"})), Contains("learner_backend is torch"));
  CHECK_THAT(config_error_of(sac_experiment({"num_learners=2"})), Contains("num_learners is 2"));
  CHECK_THAT(config_error_of(sac_experiment({"device=cuda"})), Contains("device is cuda"));
  CHECK_THAT(config_error_of(sac_experiment({"env=CartPole-v1"})), Contains("needs a Box action space"));
}

TEST_CASE("learner_threads sets the native learner's product threads, and 0 leaves the local workers their CPUs",
          "[algorithms][sac][threads]") {
  const int cpus = available_cpus();
  CHECK(learner_product_threads(sac_experiment({"learner_threads=3"}).config.common()) == 3);
  CHECK(learner_product_threads(sac_experiment({}).config.common()) == std::clamp(cpus, 1, kAutoLearnerThreads));
  CHECK(learner_product_threads(sac_experiment({"num_workers=1"}).config.common()) ==
        std::clamp(cpus - 1, 1, kAutoLearnerThreads));
  CHECK(learner_product_threads(sac_experiment({"num_workers=64"}).config.common()) == 1);
  const int previous = product_threads();
  make_algorithm(sac_experiment({"learner_threads=2"}));
  CHECK(product_threads() == 2);
  set_product_threads(previous);
}

}  // namespace rlx
