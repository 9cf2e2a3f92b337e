// JSON views of spaces and env specs (infinite bounds are written as "inf" / "-inf").
#pragma once

#include <cmath>

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
