// Search spaces and the tune: section: draws within bounds, log scale, grid expansion,
// reproducible draws, and errors that name file, line, key, value and what was expected.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "core/config_error.h"
#include "core/experiment.h"
#include "tests/core/test_util.h"
#include "tune/search_space.h"
#include "tune/tune_spec.h"

namespace rlx {
namespace {

Experiment experiment_with_tune(const std::string& tune_yaml) {
  const std::string text =
      "exp:\n"
      "  env: CartPole-v1\n"
      "  algorithm: PPO\n"
      "  stop: {timesteps_total: 10000}\n"
      "  config: {num_workers: 0}\n"
      "  tune:\n" + tune_yaml;
  return parse_experiments(text, "t.yaml", ".").front();
}

std::string tune_error(const std::string& tune_yaml) {
  return test::error_of<ConfigError>([&] { parse_tune_spec(experiment_with_tune(tune_yaml)); });
}

}  // namespace

TEST_CASE("Distribution draws stay in bounds and keep key types", "[tune]") {
  const TuneSpec spec = parse_tune_spec(experiment_with_tune(
      "    num_samples: 400\n"
      "    param_space:\n"
      "      lr: {loguniform: [1.0e-5, 1.0e-1]}\n"
      "      clip_param: {uniform: [0.1, 0.3]}\n"
      "      num_epochs: {randint: [3, 6]}\n"
      "      entropy_coeff: {quniform: [0.0, 0.05, 0.01]}\n"));
  const auto trials = generate_trial_params(spec.param_space, spec.num_samples, 7);
  REQUIRE(trials.size() == 400);
  std::set<int64_t> epochs;
  int below_1e3 = 0;
  for (const auto& params : trials) {
    const double lr = params.at("lr").get<double>();
    CHECK(lr >= 1e-5);
    CHECK(lr < 1e-1);
    if (lr < 1e-3) ++below_1e3;
    CHECK(params.at("clip_param").get<double>() >= 0.1);
    CHECK(params.at("clip_param").get<double>() < 0.3);
    REQUIRE(params.at("num_epochs").is_number_integer());
    epochs.insert(params.at("num_epochs").get<int64_t>());
    const double entropy = params.at("entropy_coeff").get<double>();
    CHECK(std::abs(entropy / 0.01 - std::round(entropy / 0.01)) < 1e-9);
  }
  CHECK(epochs == std::set<int64_t>{3, 4, 5});  // randint's upper bound is exclusive, as in Ray Tune
  // Log scale: half of the decades lie below 1e-3, so about half the draws (a uniform draw gives ~1%).
  CHECK(below_1e3 > 150);
  CHECK(below_1e3 < 250);
}

TEST_CASE("grid_search expands to the cartesian product, repeated num_samples times", "[tune]") {
  const TuneSpec spec = parse_tune_spec(experiment_with_tune(
      "    num_samples: 2\n"
      "    param_space:\n"
      "      lr: {grid_search: [0.001, 0.0001]}\n"
      "      minibatch_size: {grid_search: [32, 64, 128]}\n"
      "      clip_param: {uniform: [0.1, 0.3]}\n"
      "      gamma: 0.95\n"));
  const auto trials = generate_trial_params(spec.param_space, spec.num_samples, 0);
  REQUIRE(trials.size() == 12);
  std::set<std::pair<double, int64_t>> points;
  std::set<double> clips;
  for (const auto& params : trials) {
    points.insert({params.at("lr").get<double>(), params.at("minibatch_size").get<int64_t>()});
    clips.insert(params.at("clip_param").get<double>());
    CHECK(params.at("gamma").get<double>() == 0.95);
  }
  CHECK(points.size() == 6);
  CHECK(clips.size() == 12);  // drawn afresh for every trial
}

TEST_CASE("the same seed gives the same draws, another seed others", "[tune]") {
  const TuneSpec spec = parse_tune_spec(experiment_with_tune(
      "    num_samples: 5\n"
      "    param_space:\n"
      "      lr: {loguniform: [1.0e-5, 1.0e-1]}\n"
      "      minibatch_size: {choice: [32, 64, 128]}\n"));
  CHECK(generate_trial_params(spec.param_space, 5, 3) == generate_trial_params(spec.param_space, 5, 3));
  CHECK(generate_trial_params(spec.param_space, 5, 3) != generate_trial_params(spec.param_space, 5, 4));
}

TEST_CASE("bad search spaces and scheduler options are ConfigErrors naming file, line, key, value", "[tune]") {
  std::string error = tune_error("    param_space:\n      lr: {loguniform: [0, 0.1]}\n");
  CHECK_THAT(error, Catch::Contains("t.yaml:8") && Catch::Contains("tune.param_space.lr") && Catch::Contains("0 < lo < hi"));
  error = tune_error("    param_space:\n      lrr: {uniform: [0.1, 0.2]}\n");
  CHECK_THAT(error, Catch::Contains("unknown config key 'lrr'") && Catch::Contains("did you mean 'lr'"));
  error = tune_error("    param_space:\n      gamma: {uniform: [0.9, 2.5]}\n");
  CHECK_THAT(error, Catch::Contains("tune.param_space.gamma") && Catch::Contains("2.5") && Catch::Contains("expected"));
  error = tune_error("    param_space:\n      lr: {uniformm: [0.1, 0.2]}\n");
  CHECK_THAT(error, Catch::Contains("unknown search space 'uniformm'") && Catch::Contains("did you mean 'uniform'"));
  error = tune_error("    param_space:\n      lr_schedule: {uniform: [0.1, 0.2]}\n");
  CHECK_THAT(error, Catch::Contains("needs a numeric key"));
  error = tune_error("    scheduler: {type: pbt, hyperparam_mutations: {lr: [0.001]}}\n");
  CHECK_THAT(error, Catch::Contains("perturbation_interval"));
  error = tune_error("    scheduler: {type: pbt, perturbation_interval: 100, quantile_fraction: 0.7, hyperparam_mutations: {lr: [0.001]}}\n");
  CHECK_THAT(error, Catch::Contains("tune.scheduler.quantile_fraction") && Catch::Contains("0.7") && Catch::Contains("(0, 0.5]"));
  error = tune_error("    scheduler: {type: hyperband}\n");
  CHECK_THAT(error, Catch::Contains("tune.scheduler.type") && Catch::Contains("\"hyperband\"") && Catch::Contains("\"pbt\""));
  error = tune_error("    scheduler: {type: asha, time_attr: time_total_s}\n");
  CHECK_THAT(error, Catch::Contains("max_t"));
  error = tune_error("    num_sample: 3\n");
  CHECK_THAT(error, Catch::Contains("tune.num_sample") && Catch::Contains("did you mean 'num_samples'"));
  error = tune_error("    mode: maximum\n");
  CHECK_THAT(error, Catch::Contains("tune.mode") && Catch::Contains("\"max\""));
}

TEST_CASE("a list key's search space holds lists: a lone integer is refused with the list to write", "[tune]") {
  const TuneSpec spec = parse_tune_spec(experiment_with_tune("    param_space:\n      hidden_sizes: {grid_search: [[64], [64, 64]]}\n"));
  const auto trials = generate_trial_params(spec.param_space, 1, 0);
  REQUIRE(trials.size() == 2);
  CHECK(trials[0].at("hidden_sizes") == nlohmann::json::array({64}));
  for (const char* space : {"hidden_sizes: {grid_search: [64, 128]}", "hidden_sizes: 64"}) {
    const std::string error = tune_error(std::string("    param_space:\n      ") + space + "\n");
    CHECK_THAT(error, Catch::Contains("t.yaml:8") && Catch::Contains("tune.param_space.hidden_sizes") &&
                          Catch::Contains("value 64 is not allowed for 'hidden_sizes', expected a list of integers") &&
                          Catch::Contains("[64] for a list of one, [64, 64] for a list of two"));
  }
}

TEST_CASE("ASHA takes max_t from the stop criterion, and PBT fills mutated keys the space lacks", "[tune]") {
  const TuneSpec asha = parse_tune_spec(experiment_with_tune(
      "    scheduler: {type: asha, time_attr: timesteps_total, grace_period: 1000, reduction_factor: 3}\n"));
  CHECK(asha.asha.max_t == 10000);
  const TuneSpec pbt = parse_tune_spec(experiment_with_tune(
      "    num_samples: 4\n"
      "    param_space: {clip_param: {choice: [0.1, 0.2]}}\n"
      "    scheduler:\n"
      "      type: pbt\n"
      "      perturbation_interval: 2\n"
      "      hyperparam_mutations:\n"
      "        lr: {loguniform: [1.0e-4, 1.0e-2]}\n"
      "        num_epochs: [2, 4, 8]\n"));
  const auto trials = initial_trial_params(pbt);
  REQUIRE(trials.size() == 4);
  for (const auto& params : trials) {
    CHECK(params.at("lr").get<double>() >= 1e-4);
    CHECK(params.at("lr").get<double>() < 1e-2);
    CHECK(params.at("num_epochs").is_number_integer());
    CHECK(params.contains("clip_param"));
  }
}

TEST_CASE("rlx train's experiment loading accepts (and ignores) a tune: section", "[tune]") {
  const Experiment e = experiment_with_tune("    param_space: {lr: {uniform: [0.1, 0.2]}}\n");
  CHECK(e.tune.contains("param_space"));
  CHECK_NOTHROW(validate_experiment(e));
}

}  // namespace rlx

namespace rlx {

TEST_CASE("the example tune files in experiments/ parse and expand", "[tune]") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(RLX_SOURCE_DIR) + "/experiments")) {
    for (const Experiment& e : load_experiments(entry.path())) {
      if (e.tune.is_null()) continue;
      INFO(entry.path());
      validate_experiment(e);
      const TuneSpec spec = parse_tune_spec(e);
      CHECK(initial_trial_params(spec).size() >= 8);
      ++files;
    }
  }
  CHECK(files >= 3);
}

}  // namespace rlx
