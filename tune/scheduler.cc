// FIFO, ASHA and PBT schedulers.
#include "tune/scheduler.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/config.h"
#include "core/json_fields.h"

namespace rlx {
namespace {

class FifoScheduler : public Scheduler {
 public:
  std::optional<double> next_pause(const Trial&) const override { return std::nullopt; }
  std::vector<Decision> decide(const std::vector<Trial>& trials) override {
    std::vector<Decision> out;
    for (size_t i = 0; i < trials.size(); ++i) {
      if (trials[i].awaiting_decision) out.push_back({Decision::Action::kContinue, i, std::nullopt, "fifo"});
    }
    return out;
  }
};

class AshaScheduler : public Scheduler {
 public:
  AshaScheduler(AshaOptions options, std::string mode)
      : options_(std::move(options)), mode_(std::move(mode)), rungs_(asha_rungs(options_)) {}

  std::optional<double> next_pause(const Trial& trial) const override {
    const double now = trial.time(options_.time_attr);
    for (double rung : rungs_) {
      if (rung > now) return rung;
    }
    if (options_.max_t > now) return options_.max_t;
    return std::nullopt;
  }

  std::vector<Decision> decide(const std::vector<Trial>& trials) override {
    std::vector<Decision> out;
    for (size_t i = 0; i < trials.size(); ++i) {
      const Trial& trial = trials[i];
      if (!trial.awaiting_decision) continue;
      const double now = trial.time(options_.time_attr);
      const double score = trial_score(trial.metric, mode_);
      Decision decision{Decision::Action::kContinue, i, std::nullopt, "promoted"};
      // Ray's AsyncHyperBand: at the highest rung reached and not yet recorded, stop the trial
      // when it is below the (1 - 1/rf) quantile of the scores recorded there so far.
      for (auto rung = rungs_.rbegin(); rung != rungs_.rend(); ++rung) {
        auto& recorded = recorded_[format_double(*rung)];
        if (now < *rung || recorded.count(trial.name)) continue;
        if (!recorded.empty()) {
          std::vector<double> scores;
          for (const auto& entry : recorded) scores.push_back(entry.second);
          const double cutoff = percentile(scores, (1.0 - 1.0 / options_.reduction_factor) * 100.0);
          if (score < cutoff) {
            decision = {Decision::Action::kStop, i, std::nullopt, "asha: below rung " + format_double(*rung) + " cutoff"};
          }
        }
        recorded[trial.name] = score;
        break;
      }
      if (decision.action == Decision::Action::kContinue && now >= options_.max_t) {
        decision = {Decision::Action::kStop, i, std::nullopt, "asha: max_t"};
      }
      out.push_back(decision);
    }
    return out;
  }

  nlohmann::json state() const override {
    nlohmann::json json = nlohmann::json::object();
    for (const auto& [rung, recorded] : recorded_) {
      for (const auto& [name, score] : recorded) json[rung][name] = std::isfinite(score) ? nlohmann::json(score) : nlohmann::json();
    }
    return json;
  }
  void load_state(const nlohmann::json& state) override {
    recorded_.clear();
    if (!state.is_object()) return;
    for (const auto& [rung, recorded] : state.items()) {
      for (const auto& [name, score] : json_value_as<JsonObject>(recorded, rung).items()) {
        recorded_[rung][name] = score.is_null() ? -INFINITY : json_value_as<double>(score, json_member_path(rung, name));
      }
    }
  }

 private:
  AshaOptions options_;
  std::string mode_;
  std::vector<double> rungs_;
  std::map<std::string, std::map<std::string, double>> recorded_;  // rung -> trial -> score
};

class PbtScheduler : public Scheduler {
 public:
  PbtScheduler(PbtOptions options, std::string mode, uint64_t seed)
      : options_(std::move(options)), mode_(std::move(mode)), seed_(seed) {}

  std::optional<double> next_pause(const Trial& trial) const override {
    const double now = trial.time(options_.time_attr);
    return (std::floor(now / options_.perturbation_interval) + 1) * options_.perturbation_interval;
  }

  std::vector<Decision> decide(const std::vector<Trial>& trials) override {
    std::vector<size_t> awaiting;
    bool all_at_barrier = true;
    for (size_t i = 0; i < trials.size(); ++i) {
      if (trials[i].awaiting_decision) awaiting.push_back(i);
      else if (!trials[i].finished()) all_at_barrier = false;
    }
    if (awaiting.empty() || (options_.synch && !all_at_barrier)) return {};

    // Rank by the metric at each trial's latest checkpoint: only trials with a checkpoint can
    // be donors, and a donor's score must describe the weights it would hand over.
    std::vector<size_t> ranked;
    for (size_t i = 0; i < trials.size(); ++i) {
      if (trials[i].status != TrialStatus::kError && trials[i].checkpoint && trials[i].checkpoint_metric) ranked.push_back(i);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
      return trial_score(trials[a].checkpoint_metric, mode_) < trial_score(trials[b].checkpoint_metric, mode_);
    });
    size_t quantile = static_cast<size_t>(std::ceil(ranked.size() * options_.quantile_fraction));
    quantile = std::min(quantile, ranked.size() / 2);
    const std::vector<size_t> bottom(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(quantile));
    const std::vector<size_t> top(ranked.end() - static_cast<std::ptrdiff_t>(quantile), ranked.end());

    std::vector<Decision> out;
    for (size_t i : awaiting) {
      Decision decision{Decision::Action::kContinue, i, std::nullopt, "pbt: continue"};
      if (std::find(bottom.begin(), bottom.end(), i) != bottom.end() && !top.empty()) {
        Rng rng = decision_rng(seed_, i, trials[i].decisions);
        decision.action = Decision::Action::kExploit;
        decision.donor = top[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(top.size())))];
        decision.reason = "pbt: exploit " + trials[*decision.donor].name;
      }
      out.push_back(decision);
    }
    return out;
  }

 private:
  PbtOptions options_;
  std::string mode_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Scheduler> make_scheduler(const TuneSpec& spec) {
  switch (spec.scheduler) {
    case SchedulerKind::kAsha: return std::make_unique<AshaScheduler>(spec.asha, spec.mode);
    case SchedulerKind::kPbt: return std::make_unique<PbtScheduler>(spec.pbt, spec.mode, spec.seed);
    default: return std::make_unique<FifoScheduler>();
  }
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const double position = q / 100.0 * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  if (fraction == 0 || !std::isfinite(values[above] - values[below])) return values[below];
  return values[below] + (values[above] - values[below]) * fraction;
}

std::vector<double> asha_rungs(const AshaOptions& options) {
  std::vector<double> rungs;
  for (double rung = options.grace_period; rung < options.max_t; rung *= options.reduction_factor) rungs.push_back(rung);
  return rungs;
}

Rng decision_rng(uint64_t seed, size_t index, int64_t decision) {
  uint64_t mixed = seed * 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(index) + 1) * 0xBF58476D1CE4E5B9ULL ^
                   (static_cast<uint64_t>(decision) + 1) * 0x94D049BB133111EBULL;
  return Rng(mixed);
}

nlohmann::json pbt_explore(const nlohmann::json& params, const PbtOptions& options, Rng& rng) {
  nlohmann::json out = params;
  for (const auto& [name, mutation] : options.hyperparam_mutations) {
    const KeySpec* key = find_tunable_key(name);
    const bool resample = rng.uniform() < options.resample_probability;
    if (!mutation.domain) {
      const auto& values = mutation.values;
      const auto current = params.contains(name) ? std::find(values.begin(), values.end(), params.at(name)) : values.end();
      if (resample || current == values.end()) {
        out[name] = values[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(values.size())))];
      } else {
        const int64_t index = current - values.begin();
        const int64_t shift = rng.uniform() < 0.5 ? -1 : 1;
        out[name] = values[static_cast<size_t>(std::clamp<int64_t>(index + shift, 0, static_cast<int64_t>(values.size()) - 1))];
      }
      continue;
    }
    const Domain& domain = *mutation.domain;
    if (resample || !params.contains(name) || !params.at(name).is_number()) {
      out[name] = domain.sample(rng);
      continue;
    }
    const double factor = options.perturbation_factors[rng.uniform() < 0.5 ? 0 : 1];
    const nlohmann::json perturbed = params.at(name).get<double>() * factor;
    const auto coerced = key ? coerce_to_key(*key, perturbed) : std::optional<nlohmann::json>(perturbed);
    std::optional<ConfigValue> value;
    if (coerced && key) value = value_from_json(key->type, *coerced);
    if (coerced && (!key || (value && !key->problem_with(*value)))) {
      out[name] = *coerced;
    } else {
      out[name] = domain.sample(rng);  // the key refuses the perturbed value
    }
  }
  return out;
}

}  // namespace rlx
