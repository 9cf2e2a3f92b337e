// JSON views of spaces and env specs (infinite bounds are written as "inf" / "-inf").
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/env_spec.h"

namespace rlx {

// A bound as JSON: a number, or the string "inf" / "-inf".
inline nlohmann::json bound_to_json(float value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return static_cast<double>(value);
}

// {"type": "Box", "shape": [...], "low": [...], "high": [...], "dtype": "float32"} or
// {"type": "Discrete", "n": N}.
inline nlohmann::json space_to_json(const Space& space) {
  if (space.is_discrete()) return {{"type", "Discrete"}, {"n", space.n}};
  nlohmann::json low = nlohmann::json::array(), high = nlohmann::json::array();
  for (float v : space.low) low.push_back(bound_to_json(v));
  for (float v : space.high) high.push_back(bound_to_json(v));
  return {{"type", "Box"}, {"shape", space.shape}, {"low", low}, {"high", high}, {"dtype", "float32"}};
}

// A bound read back: a number, or "inf" / "-inf"; throws std::invalid_argument otherwise.
inline float bound_from_json(const nlohmann::json& value) {
  if (value.is_number()) return value.get<float>();
  if (value == "inf") return std::numeric_limits<float>::infinity();
  if (value == "-inf") return -std::numeric_limits<float>::infinity();
  throw std::invalid_argument("a bound must be a number, \"inf\" or \"-inf\", got " + value.dump());
}

// space_to_json's space read back; throws std::invalid_argument naming what is missing or wrong.
inline Space space_from_json(const nlohmann::json& value) {
  if (!value.is_object() || !value.contains("type")) {
    throw std::invalid_argument("a space must be an object with a \"type\", got " + value.dump());
  }
  try {
    if (value.at("type") == "Discrete") return Space::discrete(value.at("n").get<int64_t>());
    if (value.at("type") != "Box") {
      throw std::invalid_argument("space type must be \"Box\" or \"Discrete\", got " + value.at("type").dump());
    }
    std::vector<float> low, high;
    for (const nlohmann::json& bound : value.at("low")) low.push_back(bound_from_json(bound));
    for (const nlohmann::json& bound : value.at("high")) high.push_back(bound_from_json(bound));
    return Space::box(value.at("shape").get<std::vector<int64_t>>(), std::move(low), std::move(high));
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(std::string("malformed space ") + value.dump() + ": " + error.what());
  }
}

// The spec with both spaces; reward_threshold is null when the task has none.
inline nlohmann::json env_spec_to_json(const EnvSpec& spec) {
  nlohmann::json out = {{"id", spec.id},
                        {"observation_space", space_to_json(spec.observation_space)},
                        {"action_space", space_to_json(spec.action_space)},
                        {"max_episode_steps", spec.max_episode_steps}};
  out["reward_threshold"] = spec.reward_threshold ? nlohmann::json(*spec.reward_threshold) : nlohmann::json();
  return out;
}

}  // namespace rlx
