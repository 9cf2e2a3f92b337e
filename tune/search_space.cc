// Search-space domains: parsing against the schema, draws, grid expansion.
#include "tune/search_space.h"

#include <cmath>

#include "core/config.h"
#include "core/config_error.h"

namespace rlx {
namespace {

const char* kDomainNames[] = {"grid_search", "choice", "uniform", "loguniform", "randint", "quniform"};

std::string expected_forms() {
  return "a value or a mapping with one of grid_search: [v, ...], choice: [v, ...], uniform: [lo, hi], "
         "loguniform: [lo, hi], randint: [lo, hi], quniform: [lo, hi, q]";
}

std::vector<double> numbers(const nlohmann::json& list, size_t count, const std::string& where, const std::string& form) {
  if (!list.is_array() || list.size() != count) {
    throw ConfigError(where + ": " + form + ": got " + list.dump() + ", expected a list of " + std::to_string(count) + " numbers");
  }
  std::vector<double> out;
  for (const auto& element : list) {
    if (!element.is_number()) {
      throw ConfigError(where + ": " + form + ": got " + list.dump() + ", expected a list of " + std::to_string(count) + " numbers");
    }
    out.push_back(element.get<double>());
  }
  return out;
}

// Throws unless `value` (already of the key's type) is allowed for the key.
void check_allowed(const KeySpec& key, const nlohmann::json& value, const std::string& where, const std::string& form) {
  std::optional<nlohmann::json> coerced = coerce_to_key(key, value);
  bool ok = coerced.has_value();
  if (ok) {
    const auto converted = value_from_json(key.type, *coerced);
    ok = converted && !key.problem_with(*converted);
  }
  if (!ok) {
    const std::string hint = value.is_number() ? lone_integer_hint(key, value.dump(), ListSyntax::kFile) : "";
    throw ConfigError(where + ": " + form + ": value " + value.dump() + " is not allowed for '" + key.name + "', expected " +
                      key.expected() + hint);
  }
}

}  // namespace

std::optional<nlohmann::json> coerce_to_key(const KeySpec& key, const nlohmann::json& value) {
  if (key.type == ConfigType::kInt && value.is_number_float()) {
    const double rounded = std::round(value.get<double>());
    if (!std::isfinite(rounded)) return std::nullopt;
    return nlohmann::json(static_cast<int64_t>(rounded));
  }
  if (key.type == ConfigType::kFloat && value.is_number()) return nlohmann::json(value.get<double>());
  if (!value_from_json(key.type, value)) return std::nullopt;
  return value;
}

bool Domain::is_distribution() const {
  return kind == DomainKind::kUniform || kind == DomainKind::kLogUniform || kind == DomainKind::kRandInt ||
         kind == DomainKind::kQUniform;
}

nlohmann::json Domain::sample(Rng& rng) const {
  nlohmann::json raw;
  switch (kind) {
    case DomainKind::kConstant: return values.front();
    case DomainKind::kGridSearch:
    case DomainKind::kChoice: return values[static_cast<size_t>(rng.uniform_int(static_cast<int64_t>(values.size())))];
    case DomainKind::kUniform: raw = rng.uniform(low, high); break;
    case DomainKind::kLogUniform: raw = std::exp(rng.uniform(std::log(low), std::log(high))); break;
    case DomainKind::kRandInt:
      raw = static_cast<int64_t>(low) + rng.uniform_int(static_cast<int64_t>(high) - static_cast<int64_t>(low));
      break;
    case DomainKind::kQUniform: {
      const double steps = std::round(rng.uniform(low, high) / q);
      raw = std::min(std::max(steps * q, low), high);
      break;
    }
  }
  if (type == ConfigType::kInt) return static_cast<int64_t>(std::round(raw.get<double>()));
  return raw.get<double>();
}

nlohmann::json Domain::to_json() const {
  switch (kind) {
    case DomainKind::kConstant: return values.front();
    case DomainKind::kGridSearch: return {{"grid_search", values}};
    case DomainKind::kChoice: return {{"choice", values}};
    case DomainKind::kUniform: return {{"uniform", {low, high}}};
    case DomainKind::kLogUniform: return {{"loguniform", {low, high}}};
    case DomainKind::kRandInt: return {{"randint", {static_cast<int64_t>(low), static_cast<int64_t>(high)}}};
    case DomainKind::kQUniform: return {{"quniform", {low, high, q}}};
  }
  return nullptr;
}

Domain parse_domain(const nlohmann::json& spec, const KeySpec& key, const std::string& where) {
  Domain domain;
  domain.type = key.type;
  if (!spec.is_object()) {
    check_allowed(key, spec, where, "constant");
    domain.values.push_back(*coerce_to_key(key, spec));
    return domain;
  }
  if (spec.size() != 1) throw ConfigError(where + ": got " + spec.dump() + ", expected " + expected_forms());
  const std::string form = spec.begin().key();
  const nlohmann::json& argument = spec.begin().value();
  if (form == "grid_search" || form == "choice") {
    domain.kind = form == "grid_search" ? DomainKind::kGridSearch : DomainKind::kChoice;
    if (!argument.is_array() || argument.empty()) {
      throw ConfigError(where + ": " + form + ": got " + argument.dump() + ", expected a non-empty list of values");
    }
    for (const auto& value : argument) {
      check_allowed(key, value, where, form);
      domain.values.push_back(*coerce_to_key(key, value));
    }
    return domain;
  }
  if (key.type != ConfigType::kInt && key.type != ConfigType::kFloat) {
    throw ConfigError(where + ": " + form + " needs a numeric key, '" + key.name + "' is " + type_description(key.type) +
                      " (use choice or grid_search)");
  }
  std::vector<double> bounds;
  if (form == "uniform" || form == "loguniform" || form == "randint") {
    bounds = numbers(argument, 2, where, form);
  } else if (form == "quniform") {
    bounds = numbers(argument, 3, where, form);
  } else {
    const auto match = closest_match(form, std::vector<std::string>(std::begin(kDomainNames), std::end(kDomainNames)));
    throw ConfigError(where + ": unknown search space '" + form + "'" + (match ? " (did you mean '" + *match + "'?)" : "") +
                      ", expected " + expected_forms());
  }
  domain.low = bounds[0];
  domain.high = bounds[1];
  if (!(domain.low < domain.high) || !std::isfinite(domain.low) || !std::isfinite(domain.high)) {
    throw ConfigError(where + ": " + form + ": got " + argument.dump() + ", expected finite [lo, hi] with lo < hi");
  }
  if (form == "uniform") domain.kind = DomainKind::kUniform;
  if (form == "loguniform") {
    domain.kind = DomainKind::kLogUniform;
    if (domain.low <= 0) throw ConfigError(where + ": loguniform: got " + argument.dump() + ", expected 0 < lo < hi");
  }
  if (form == "randint") {
    domain.kind = DomainKind::kRandInt;
    if (domain.low != std::floor(domain.low) || domain.high != std::floor(domain.high)) {
      throw ConfigError(where + ": randint: got " + argument.dump() + ", expected integers [lo, hi) with lo < hi");
    }
  }
  if (form == "quniform") {
    domain.kind = DomainKind::kQUniform;
    domain.q = bounds[2];
    if (!(domain.q > 0)) throw ConfigError(where + ": quniform: got " + argument.dump() + ", expected a step q > 0");
  }
  // Both ends (randint's last value) must be allowed for the key, so every draw is.
  check_allowed(key, domain.low, where, form);
  check_allowed(key, domain.kind == DomainKind::kRandInt ? domain.high - 1 : domain.high, where, form);
  if (domain.kind == DomainKind::kUniform || domain.kind == DomainKind::kLogUniform) {
    // An open upper bound of the key (e.g. gamma < 1) still admits draws below hi.
    check_allowed(key, std::nextafter(domain.high, domain.low), where, form);
  }
  return domain;
}

std::vector<nlohmann::json> generate_trial_params(const ParamSpace& space, int64_t num_samples, uint64_t seed) {
  // Grid points: cartesian product over the grid_search keys, the first key varying slowest.
  std::vector<nlohmann::json> grid = {nlohmann::json::object()};
  for (const auto& [name, domain] : space.domains) {
    if (domain.kind != DomainKind::kGridSearch) continue;
    std::vector<nlohmann::json> expanded;
    for (const auto& point : grid) {
      for (const auto& value : domain.values) {
        nlohmann::json next = point;
        next[name] = value;
        expanded.push_back(std::move(next));
      }
    }
    grid = std::move(expanded);
  }
  Rng rng(seed);
  std::vector<nlohmann::json> trials;
  for (int64_t sample = 0; sample < num_samples; ++sample) {
    for (const auto& point : grid) {
      nlohmann::json params = point;
      for (const auto& [name, domain] : space.domains) {
        if (domain.kind != DomainKind::kGridSearch) params[name] = domain.sample(rng);
      }
      trials.push_back(std::move(params));
    }
  }
  return trials;
}

}  // namespace rlx
