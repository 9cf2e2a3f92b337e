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

// Bounds as JSON: one value when every element shares it (the usual case, and what keeps an
// 84x84x4 image's space small), else one per element.
inline nlohmann::json bounds_to_json(const std::vector<float>& values) {
  bool uniform = !values.empty();
  for (float v : values) uniform = uniform && v == values.front();
  if (uniform) return bound_to_json(values.front());
  nlohmann::json out = nlohmann::json::array();
  for (float v : values) out.push_back(bound_to_json(v));
  return out;
}

// {"type": "Box", "shape", "low", "high", "dtype"}, {"type": "Discrete", "n", "start"},
// {"type": "MultiDiscrete", "nvec", "shape", "start"}, {"type": "MultiBinary", "shape"},
// {"type": "Tuple", "spaces": [...]} or {"type": "Dict", "spaces": [{"key", "space"}, ...]}
// (a list, so that the keys keep their order).
inline nlohmann::json space_to_json(const Space& space) {
  switch (space.kind) {
    case SpaceKind::kDiscrete: return {{"type", "Discrete"}, {"n", space.n}, {"start", space.start}};
    case SpaceKind::kMultiDiscrete:
      return {{"type", "MultiDiscrete"}, {"nvec", space.nvec}, {"shape", space.shape}, {"start", space.starts}};
    case SpaceKind::kMultiBinary: return {{"type", "MultiBinary"}, {"shape", space.shape}};
    case SpaceKind::kTuple:
    case SpaceKind::kDict: {
      nlohmann::json children = nlohmann::json::array();
      for (size_t i = 0; i < space.children.size(); ++i) {
        if (space.kind == SpaceKind::kTuple) {
          children.push_back(space_to_json(space.children[i]));
        } else {
          children.push_back({{"key", space.keys[i]}, {"space", space_to_json(space.children[i])}});
        }
      }
      return {{"type", space.kind == SpaceKind::kDict ? "Dict" : "Tuple"}, {"spaces", children}};
    }
    case SpaceKind::kBox:
      break;
  }
  return {{"type", "Box"},
          {"shape", space.shape},
          {"low", bounds_to_json(space.low)},
          {"high", bounds_to_json(space.high)},
          {"dtype", scalar_type_name(space.dtype)}};
}

// A bound read back: a number, or "inf" / "-inf"; throws std::invalid_argument otherwise.
inline float bound_from_json(const nlohmann::json& value) {
  if (value.is_number()) return value.get<float>();
  if (value == "inf") return std::numeric_limits<float>::infinity();
  if (value == "-inf") return -std::numeric_limits<float>::infinity();
  throw std::invalid_argument("a bound must be a number, \"inf\" or \"-inf\", got " + value.dump());
}

namespace space_json_detail {

// The deepest a space may nest (Dicts in Tuples in Dicts ...): JSON is untrusted input.
constexpr int kMaxSpaceDepth = 16;
// The most elements a Box read from JSON may have (a 2048 x 2048 x 4 image).
constexpr int64_t kMaxBoxElements = int64_t{1} << 24;

// Bounds read back: one value for all `count` elements, or exactly `count` values.
inline std::vector<float> bounds_from_json(const nlohmann::json& value, int64_t count, const std::string& path) {
  if (!value.is_array()) return std::vector<float>(static_cast<size_t>(count), bound_from_json(value));
  if (static_cast<int64_t>(value.size()) != count) {
    throw std::invalid_argument(path + ": holds " + std::to_string(value.size()) + " bounds, expected " + std::to_string(count));
  }
  std::vector<float> out;
  for (const nlohmann::json& bound : value) out.push_back(bound_from_json(bound));
  return out;
}

inline Space space_from_json(const nlohmann::json& value, const std::string& path, int depth) {
  if (!value.is_object() || !value.contains("type")) {
    throw std::invalid_argument(path + ": a space must be an object with a \"type\", got " + value.dump());
  }
  if (depth > kMaxSpaceDepth) throw std::invalid_argument(path + ": spaces nest deeper than " + std::to_string(kMaxSpaceDepth) + " levels");
  const nlohmann::json& type = value.at("type");
  try {
    if (type == "Discrete") return Space::discrete(value.at("n").get<int64_t>(), value.value("start", int64_t{0}));
    if (type == "MultiDiscrete") {
      return Space::multi_discrete(value.at("nvec").get<std::vector<int64_t>>(),
                                   value.value("start", std::vector<int64_t>{}),
                                   value.value("shape", std::vector<int64_t>{}));
    }
    if (type == "MultiBinary") return Space::multi_binary(value.at("shape").get<std::vector<int64_t>>());
    if (type == "Tuple" || type == "Dict") {
      const nlohmann::json& spaces = value.at("spaces");
      if (!spaces.is_array()) throw std::invalid_argument(path + ": \"spaces\" must be a list");
      std::vector<Space> children;
      std::vector<std::pair<std::string, Space>> entries;
      for (size_t i = 0; i < spaces.size(); ++i) {
        if (type == "Tuple") {
          children.push_back(space_from_json(spaces[i], path + "[" + std::to_string(i) + "]", depth + 1));
        } else {
          const std::string key = spaces[i].at("key").get<std::string>();
          entries.emplace_back(key, space_from_json(spaces[i].at("space"), path + "['" + key + "']", depth + 1));
        }
      }
      return type == "Tuple" ? Space::tuple(std::move(children)) : Space::dict(std::move(entries));
    }
    if (type != "Box") {
      throw std::invalid_argument(path + ": space type must be Box, Discrete, MultiDiscrete, MultiBinary, Tuple or Dict, got " + type.dump());
    }
    const std::string dtype = value.value("dtype", std::string("float32"));
    if (dtype != "float32" && dtype != "uint8") {
      throw std::invalid_argument(path + ": Box dtype must be \"float32\" or \"uint8\", got \"" + dtype + "\"");
    }
    std::vector<int64_t> shape = value.at("shape").get<std::vector<int64_t>>();
    int64_t count = 1;
    for (int64_t d : shape) {
      if (d <= 0 || d > kMaxBoxElements || count > kMaxBoxElements / d) {
        throw std::invalid_argument(path + ": Box shape " + value.at("shape").dump() + " is not positive or too large");
      }
      count *= d;
    }
    return Space::box(std::move(shape), bounds_from_json(value.at("low"), count, path + ".low"),
                      bounds_from_json(value.at("high"), count, path + ".high"),
                      dtype == "uint8" ? ScalarType::kUint8 : ScalarType::kFloat32);
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument(path + ": malformed space " + value.dump().substr(0, 200) + ": " + error.what());
  }
}

}  // namespace space_json_detail

// space_to_json's space read back (older files' Box without "dtype" and Discrete without
// "start" too); throws std::invalid_argument naming the path (`path` names the root) and what is
// missing or wrong. Safe on untrusted input.
inline Space space_from_json(const nlohmann::json& value, const std::string& path = "space") {
  return space_json_detail::space_from_json(value, path, 0);
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
