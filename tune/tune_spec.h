// The `tune:` section of an experiment file: search space, sampling, metric, concurrency,
// retries and the scheduler (fifo, asha, pbt) with its options, validated with messages that
// name the file, line, key, value and what was expected.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/experiment.h"
#include "tune/search_space.h"

namespace rlx {

enum class SchedulerKind { kFifo, kAsha, kPbt };

// ASHA (asynchronous successive halving, Li et al. 2018; Ray's AsyncHyperBandScheduler).
struct AshaOptions {
  std::string time_attr = "training_iteration";
  double grace_period = 1;      // the first rung, in time_attr units
  double reduction_factor = 4;  // keep the top 1/reduction_factor at each rung
  double max_t = 0;             // trials stop here; from the stop criterion on time_attr when 0
};

// How PBT explores one key: a list moves to a neighbour (or is resampled), a distribution is
// multiplied by a perturbation factor (or resampled).
struct Mutation {
  std::vector<nlohmann::json> values;  // the list form (values of the key's type)
  std::optional<Domain> domain;        // the distribution form
};

// Population-based training (Jaderberg et al. 2017; Ray's PopulationBasedTraining defaults).
struct PbtOptions {
  std::string time_attr = "training_iteration";
  double perturbation_interval = 0;
  double quantile_fraction = 0.25;
  double resample_probability = 0.25;
  std::vector<double> perturbation_factors = {0.8, 1.2};
  std::map<std::string, Mutation> hyperparam_mutations;
  bool synch = false;  // all trials pause at each interval before any exploits
};

struct TuneSpec {
  ParamSpace param_space;
  int64_t num_samples = 1;
  std::string metric = "episode_return_mean";  // a result column; "a/b" reaches nested values
  std::string mode = "max";
  int64_t max_concurrent_trials = 0;  // 0: the machine's cores / (1 + num_workers)
  int64_t max_failures = 0;           // retries of a crashed trial, from its last checkpoint
  uint64_t seed = 0;                  // search-space draws and PBT decisions
  SchedulerKind scheduler = SchedulerKind::kFifo;
  AshaOptions asha;
  PbtOptions pbt;

  // The time_attr of the scheduler ("training_iteration" for FIFO).
  const std::string& time_attr() const;
};

// The time attributes a scheduler may count in.
const std::vector<std::string>& tune_time_attrs();

// Reads and checks experiment.tune against the experiment (keys exist for its algorithm, values
// fit, ASHA's max_t known, PBT's interval set...). ConfigError naming file:line, the key, the
// value and what was expected; also when there is no tune: section.
TuneSpec parse_tune_spec(const Experiment& experiment);

// The trials' starting params: the search space expanded (generate_trial_params), then for
// PBT every mutated key the space lacks drawn from its mutation (Ray Tune's behaviour).
std::vector<nlohmann::json> initial_trial_params(const TuneSpec& spec);

// The default concurrency for an experiment on this machine.
int64_t default_max_concurrent_trials(const Experiment& experiment);

}  // namespace rlx
