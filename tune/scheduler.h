// Trial schedulers: when a trial's segment pauses (next_pause) and what happens to a paused
// trial (decide): FIFO never pauses; ASHA stops or promotes at rungs; PBT exploits and explores
// at each perturbation interval. Pure decisions on trial states, so tests can hand-make them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/rng.h"
#include "tune/trial.h"
#include "tune/tune_spec.h"

namespace rlx {

struct Decision {
  enum class Action { kContinue, kStop, kExploit };
  Action action = Action::kContinue;
  size_t trial = 0;                  // index into the trials vector
  std::optional<size_t> donor;       // kExploit: the trial whose checkpoint to copy
  std::string reason;                // for the log and the table
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // The time_attr value at which the trial's next segment pauses; nullopt: it runs until a
  // stop criterion ends it.
  virtual std::optional<double> next_pause(const Trial& trial) const = 0;
  // Decisions for the trials awaiting one that can be decided now (sync PBT waits until every
  // live trial reached the boundary); the caller applies them and clears awaiting_decision.
  virtual std::vector<Decision> decide(const std::vector<Trial>& trials) = 0;
  // What must survive a tuner restart (ASHA's rung records), and its reload (JsonFieldError
  // naming the member of a malformed state).
  virtual nlohmann::json state() const { return nullptr; }
  virtual void load_state(const nlohmann::json& /*state*/) {}
};

std::unique_ptr<Scheduler> make_scheduler(const TuneSpec& spec);

// The q-th percentile (0..100) of `values` with linear interpolation (numpy's default).
double percentile(std::vector<double> values, double q);

// ASHA's rungs: grace_period * reduction_factor^k below max_t, ascending.
std::vector<double> asha_rungs(const AshaOptions& options);

// PBT's explore step: `params` with every mutated key perturbed (x factor, or a list
// neighbour) or, with resample_probability, resampled; ints stay ints, and a perturbed value
// the key refuses is resampled instead. Other keys are unchanged.
nlohmann::json pbt_explore(const nlohmann::json& params, const PbtOptions& options, Rng& rng);

// The generator for decision number `decision` of trial `index`: the same draws after a resume.
Rng decision_rng(uint64_t seed, size_t index, int64_t decision);

}  // namespace rlx
