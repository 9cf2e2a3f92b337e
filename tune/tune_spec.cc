// Parsing and validation of the `tune:` section.
#include "tune/tune_spec.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "core/config_error.h"

namespace rlx {
namespace {

// Messages: "FILE:LINE: experiment 'x': tune.scheduler.grace_period: ...".
struct Where {
  const Experiment& experiment;
  std::string operator()(const std::string& path) const {
    const auto it = experiment.origins.find(path);
    const std::string origin = it != experiment.origins.end() ? it->second : experiment.source;
    return origin + ": experiment '" + experiment.name + "': " + path;
  }
};

void check_keys(const nlohmann::json& object, const std::vector<std::string>& allowed, const Where& where,
                const std::string& path) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      const auto match = closest_match(key, allowed);
      std::string names;
      for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
      throw ConfigError(where(path + "." + key) + ": unknown key '" + key + "'" +
                        (match ? " (did you mean '" + *match + "'?)" : "") + ", expected one of " + names);
    }
  }
}

double number(const nlohmann::json& object, const std::string& key, double fallback, const Where& where,
              const std::string& path, bool (*ok)(double), const std::string& expected) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_number() || !ok(it->get<double>())) {
    throw ConfigError(where(path + "." + key) + ": got " + it->dump() + ", expected " + expected);
  }
  return it->get<double>();
}

int64_t integer(const nlohmann::json& object, const std::string& key, int64_t fallback, const Where& where,
                const std::string& path, int64_t min) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < min) {
    throw ConfigError(where(path + "." + key) + ": got " + it->dump() + ", expected an integer >= " + std::to_string(min));
  }
  return it->get<int64_t>();
}

std::string text(const nlohmann::json& object, const std::string& key, const std::string& fallback, const Where& where,
                 const std::string& path, const std::vector<std::string>& choices) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (it->is_string() && (choices.empty() || std::find(choices.begin(), choices.end(), it->get<std::string>()) != choices.end())) {
    return it->get<std::string>();
  }
  std::string names;
  for (const auto& name : choices) names += (names.empty() ? "" : ", ") + std::string("\"") + name + "\"";
  throw ConfigError(where(path + "." + key) + ": got " + it->dump() + ", expected " + (choices.empty() ? "a string" : "one of " + names));
}

const KeySpec& tunable_key(const Experiment& experiment, const std::string& name, const Where& where, const std::string& path) {
  const KeySpec* key = find_tunable_key(name);
  if (key && name != key->name) {  // policies.NAME.KEY: the policy must have keys of its own to tune
    try {
      Experiment probe = experiment;
      set_tunable_key(probe, name, value_to_json(key->default_value_for(experiment.algorithm)));
    } catch (const ConfigError& error) {
      throw ConfigError(where(path) + ": " + error.what());
    }
  }
  if (!key) {
    std::vector<std::string> names;
    for (const auto& spec : config_schema()) names.push_back(spec.name);
    const auto match = closest_match(name, names);
    throw ConfigError(where(path) + ": unknown config key '" + name + "'" + (match ? " (did you mean '" + *match + "'?)" : ""));
  }
  if (!key->applies_to(experiment.algorithm)) {
    throw ConfigError(where(path) + ": config key '" + name + "' does not apply to " + algorithm_name(experiment.algorithm));
  }
  return *key;
}

std::optional<double> stop_value(const StopCriteria& stop, const std::string& attr) {
  if (attr == "training_iteration" && stop.training_iteration) return static_cast<double>(*stop.training_iteration);
  if (attr == "timesteps_total" && stop.timesteps_total) return static_cast<double>(*stop.timesteps_total);
  if (attr == "time_total_s" && stop.time_total_s) return *stop.time_total_s;
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& tune_time_attrs() {
  static const std::vector<std::string> names = {"training_iteration", "timesteps_total", "time_total_s"};
  return names;
}

const std::string& TuneSpec::time_attr() const {
  static const std::string kIteration = "training_iteration";
  if (scheduler == SchedulerKind::kAsha) return asha.time_attr;
  if (scheduler == SchedulerKind::kPbt) return pbt.time_attr;
  return kIteration;
}

int64_t default_max_concurrent_trials(const Experiment& experiment) {
  const int64_t cores = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  return std::max<int64_t>(1, cores / (1 + experiment.config.common().num_workers));
}

TuneSpec parse_tune_spec(const Experiment& experiment) {
  const Where where{experiment};
  const nlohmann::json& tune = experiment.tune;
  if (tune.is_null()) throw ConfigError(experiment.source + ": experiment '" + experiment.name + "' has no tune: section");
  if (!tune.is_object()) throw ConfigError(where("tune") + ": got " + tune.dump() + ", expected a mapping");
  check_keys(tune, {"param_space", "num_samples", "metric", "mode", "max_concurrent_trials", "max_failures", "seed", "scheduler"},
             where, "tune");
  TuneSpec spec;
  if (const auto space = tune.find("param_space"); space != tune.end() && !space->is_null()) {
    if (!space->is_object()) throw ConfigError(where("tune.param_space") + ": got " + space->dump() + ", expected a mapping of config keys to search spaces");
    for (const auto& [name, domain] : space->items()) {
      const std::string path = "tune.param_space." + name;
      spec.param_space.domains[name] = parse_domain(domain, tunable_key(experiment, name, where, path), where(path));
    }
  }
  spec.num_samples = integer(tune, "num_samples", 1, where, "tune", 1);
  spec.metric = text(tune, "metric", spec.metric, where, "tune", {});
  spec.mode = text(tune, "mode", spec.mode, where, "tune", {"max", "min"});
  spec.max_concurrent_trials = integer(tune, "max_concurrent_trials", 0, where, "tune", 0);
  spec.max_failures = integer(tune, "max_failures", 0, where, "tune", 0);
  spec.seed = static_cast<uint64_t>(integer(tune, "seed", 0, where, "tune", 0));

  const auto scheduler = tune.find("scheduler");
  if (scheduler == tune.end() || scheduler->is_null()) return spec;
  nlohmann::json options = *scheduler;
  if (options.is_string()) options = {{"type", options}};
  if (!options.is_object()) throw ConfigError(where("tune.scheduler") + ": got " + options.dump() + ", expected a mapping with type: fifo, asha or pbt");
  const std::string type = text(options, "type", "fifo", where, "tune.scheduler", {"fifo", "asha", "pbt"});
  const std::string path = "tune.scheduler";
  const auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (type == "fifo") {
    spec.scheduler = SchedulerKind::kFifo;
    check_keys(options, {"type"}, where, path);
  } else if (type == "asha") {
    spec.scheduler = SchedulerKind::kAsha;
    check_keys(options, {"type", "time_attr", "grace_period", "reduction_factor", "max_t"}, where, path);
    AshaOptions& asha = spec.asha;
    asha.time_attr = text(options, "time_attr", asha.time_attr, where, path, tune_time_attrs());
    asha.grace_period = number(options, "grace_period", asha.grace_period, where, path, positive, "a number > 0");
    asha.reduction_factor = number(options, "reduction_factor", asha.reduction_factor, where, path,
                                   [](double v) { return v > 1 && std::isfinite(v); }, "a number > 1");
    asha.max_t = number(options, "max_t", 0, where, path, positive, "a number > 0");
    if (asha.max_t == 0) {
      const auto from_stop = stop_value(experiment.stop, asha.time_attr);
      if (!from_stop) {
        throw ConfigError(where(path) + ": asha needs max_t, or stop." + asha.time_attr + " to take it from");
      }
      asha.max_t = *from_stop;
    }
    if (asha.grace_period > asha.max_t) {
      throw ConfigError(where(path + ".grace_period") + ": got " + format_double(asha.grace_period) +
                        ", expected at most max_t (" + format_double(asha.max_t) + ")");
    }
  } else {
    spec.scheduler = SchedulerKind::kPbt;
    check_keys(options, {"type", "time_attr", "perturbation_interval", "quantile_fraction", "resample_probability",
                         "perturbation_factors", "hyperparam_mutations", "synch"},
               where, path);
    PbtOptions& pbt = spec.pbt;
    pbt.time_attr = text(options, "time_attr", pbt.time_attr, where, path, tune_time_attrs());
    if (!options.contains("perturbation_interval")) throw ConfigError(where(path) + ": pbt needs perturbation_interval (in " + pbt.time_attr + ")");
    pbt.perturbation_interval = number(options, "perturbation_interval", 0, where, path, positive, "a number > 0");
    pbt.quantile_fraction = number(options, "quantile_fraction", pbt.quantile_fraction, where, path,
                                   [](double v) { return v > 0 && v <= 0.5; }, "a fraction in (0, 0.5]");
    pbt.resample_probability = number(options, "resample_probability", pbt.resample_probability, where, path,
                                      [](double v) { return v >= 0 && v <= 1; }, "a probability in [0, 1]");
    if (const auto factors = options.find("perturbation_factors"); factors != options.end()) {
      bool ok = factors->is_array() && factors->size() == 2;
      for (const auto& f : *factors) ok = ok && f.is_number() && f.get<double>() > 0;
      if (!ok) throw ConfigError(where(path + ".perturbation_factors") + ": got " + factors->dump() + ", expected two numbers > 0, e.g. [0.8, 1.2]");
      pbt.perturbation_factors = {(*factors)[0].get<double>(), (*factors)[1].get<double>()};
    }
    if (const auto synch = options.find("synch"); synch != options.end()) {
      if (!synch->is_boolean()) throw ConfigError(where(path + ".synch") + ": got " + synch->dump() + ", expected true or false");
      pbt.synch = synch->get<bool>();
    }
    const auto mutations = options.find("hyperparam_mutations");
    if (mutations == options.end() || !mutations->is_object() || mutations->empty()) {
      throw ConfigError(where(path + ".hyperparam_mutations") + ": got " + (mutations == options.end() ? std::string("nothing") : mutations->dump()) +
                        ", expected a mapping of config keys to a list of values or a distribution");
    }
    for (const auto& [name, value] : mutations->items()) {
      const std::string key_path = path + ".hyperparam_mutations." + name;
      const KeySpec& key = tunable_key(experiment, name, where, key_path);
      Mutation mutation;
      if (value.is_array()) {
        const Domain choices = parse_domain({{"choice", value}}, key, where(key_path));
        mutation.values = choices.values;
      } else if (value.is_object()) {
        Domain domain = parse_domain(value, key, where(key_path));
        if (domain.kind == DomainKind::kGridSearch) throw ConfigError(where(key_path) + ": grid_search cannot be mutated, use a list");
        if (domain.kind == DomainKind::kChoice) {
          mutation.values = domain.values;
        } else {
          mutation.domain = std::move(domain);
        }
      } else {
        throw ConfigError(where(key_path) + ": got " + value.dump() + ", expected a list of values or a distribution such as {loguniform: [1e-4, 1e-2]}");
      }
      pbt.hyperparam_mutations[name] = std::move(mutation);
    }
  }
  return spec;
}

std::vector<nlohmann::json> initial_trial_params(const TuneSpec& spec) {
  std::vector<nlohmann::json> trials = generate_trial_params(spec.param_space, spec.num_samples, spec.seed);
  if (spec.scheduler != SchedulerKind::kPbt) return trials;
  Rng rng(spec.seed ^ 0x5bd1e995ULL);
  for (auto& params : trials) {
    for (const auto& [name, mutation] : spec.pbt.hyperparam_mutations) {
      if (params.contains(name)) continue;
      if (mutation.domain) {
        params[name] = mutation.domain->sample(rng);
      } else {
        params[name] = mutation.values[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(mutation.values.size())))];
      }
    }
  }
  return trials;
}

}  // namespace rlx
