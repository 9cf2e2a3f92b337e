// How one observation of any space is stored, and how a model reads it.
//
// Storage. An observation row has two parts: floats and bytes. Each leaf of the space (a Box,
// Discrete, MultiDiscrete or MultiBinary inside any nesting of Tuples and Dicts) lives in one
// of them, in flatten order: float32 Boxes, Discrete and MultiDiscrete values in the floats;
// uint8 Boxes and MultiBinary in the bytes, so pixels stay one byte each from the env through the
// wire and replay to the learner. An env with an action mask appends it to the bytes (one byte
// per action: Discrete(n) n bytes, MultiDiscrete the sum of nvec, 1 = legal).
//
// The model's input is gymnasium.spaces.flatten of the observation: Box and MultiBinary
// elements as they are, Discrete and MultiDiscrete one-hot, Tuple and Dict children concatenated
// in order, with one addition: uint8 Box elements are scaled to [0, 1] by their bounds,
// (x - low) / (high - low), which is SB3's division of images by 255 and leaves 0/1 grids as they
// are. The action mask is not part of it. Header-only: env plugins see it through envs/env.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env_spec.h"

namespace rlx {

// Which part of an observation row holds a leaf.
enum class LeafStorage { kFloats, kBytes };

// One leaf of an observation space: where it is stored and where it lands in the flat input.
struct ObsLeaf {
  std::string path;  // inside the observation: "" for a space that is one leaf, "['camera']", "[1]['x']"
  Space space;       // a Box, Discrete, MultiDiscrete or MultiBinary
  LeafStorage storage = LeafStorage::kFloats;
  int64_t offset = 0;       // its first slot in its part
  int64_t slots = 0;        // its slots: space.size()
  int64_t flat_offset = 0;  // its first element of the flat input
  int64_t flat_size = 0;    // its elements there: space.flat_size()
  // uint8 Box: flat = (x - byte_low) * byte_scale, one pair per element.
  std::vector<float> byte_low, byte_scale;
};

// Where everything of one observation lies.
struct ObservationLayout {
  std::vector<ObsLeaf> leaves;  // in flatten order
  int64_t float_slots = 0;      // floats per observation
  int64_t byte_slots = 0;       // bytes per observation: the leaves', then the action mask's
  int64_t mask_offset = 0;      // the action mask's first byte in the bytes
  int64_t mask_size = 0;        // the action mask's bytes; 0 when the env has none
  int64_t flat_size = 0;        // the model's input width
  bool flat_is_floats = false;  // every leaf is a float32 Box: the floats are the flat input as they are
};

// Bytes of an action mask for an action space: n for Discrete(n), the sum of nvec for
// MultiDiscrete; throws std::invalid_argument for a space that takes no mask.
inline int64_t action_mask_size(const Space& action_space) {
  if (action_space.is_discrete() || action_space.is_multi_discrete()) return action_space.flat_size();
  throw std::invalid_argument("an action mask needs a Discrete or MultiDiscrete action space, not " + action_space.to_string());
}

namespace observation_layout_detail {

inline void add_leaves(const Space& space, const std::string& path, ObservationLayout& layout) {
  if (space.is_composite()) {
    for (size_t i = 0; i < space.children.size(); ++i) add_leaves(space.children[i], space.child_path(path, i), layout);
    return;
  }
  ObsLeaf leaf;
  leaf.path = path;
  leaf.space = space;
  leaf.storage = (space.is_multi_binary() || (space.is_box() && space.dtype == ScalarType::kUint8)) ? LeafStorage::kBytes
                                                                                                      : LeafStorage::kFloats;
  leaf.slots = space.size();
  leaf.flat_offset = layout.flat_size;
  leaf.flat_size = space.flat_size();
  int64_t& part = leaf.storage == LeafStorage::kBytes ? layout.byte_slots : layout.float_slots;
  leaf.offset = part;
  part += leaf.slots;
  layout.flat_size += leaf.flat_size;
  if (space.is_box() && space.dtype == ScalarType::kUint8) {
    leaf.byte_low = space.low;
    leaf.byte_scale.resize(space.low.size());
    for (size_t i = 0; i < space.low.size(); ++i) {
      const float range = space.high[i] - space.low[i];
      leaf.byte_scale[i] = range > 0 ? 1.0f / range : 0.0f;
    }
  }
  layout.leaves.push_back(std::move(leaf));
}

}  // namespace observation_layout_detail

// The layout of an observation space, with an action mask of mask_size bytes (0: none).
inline ObservationLayout observation_layout(const Space& observation_space, int64_t mask_size = 0) {
  ObservationLayout layout;
  observation_layout_detail::add_leaves(observation_space, "", layout);
  layout.mask_offset = layout.byte_slots;
  layout.mask_size = mask_size;
  layout.byte_slots += mask_size;
  layout.flat_is_floats = true;
  for (const ObsLeaf& leaf : layout.leaves) {
    layout.flat_is_floats = layout.flat_is_floats && leaf.space.is_box() && leaf.storage == LeafStorage::kFloats;
  }
  return layout;
}

// The layout of an env's observations, its action mask included when the spec declares one.
inline ObservationLayout observation_layout(const EnvSpec& spec) {
  return observation_layout(spec.observation_space, spec.action_mask ? action_mask_size(spec.action_space) : 0);
}

// The model's flat input [rows, flat_size] of `rows` stored observations (floats [rows,
// float_slots], bytes [rows, byte_slots]; either may be null when its part is empty). A Discrete
// or MultiDiscrete value outside its space gives an all-zero one-hot.
inline void flatten_observations(const ObservationLayout& layout, const float* floats, const uint8_t* bytes, int64_t rows,
                                 float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row_floats = floats + r * layout.float_slots;
    const uint8_t* row_bytes = bytes + r * layout.byte_slots;
    float* row_out = out + r * layout.flat_size;
    for (const ObsLeaf& leaf : layout.leaves) {
      float* dst = row_out + leaf.flat_offset;
      const Space& space = leaf.space;
      if (leaf.storage == LeafStorage::kBytes) {
        const uint8_t* src = row_bytes + leaf.offset;
        if (space.is_multi_binary()) {
          for (int64_t i = 0; i < leaf.slots; ++i) dst[i] = src[i] != 0 ? 1.0f : 0.0f;
        } else {
          for (int64_t i = 0; i < leaf.slots; ++i) dst[i] = (static_cast<float>(src[i]) - leaf.byte_low[i]) * leaf.byte_scale[i];
        }
        continue;
      }
      const float* src = row_floats + leaf.offset;
      if (space.is_box()) {
        std::memcpy(dst, src, static_cast<size_t>(leaf.slots) * sizeof(float));
        continue;
      }
      std::fill(dst, dst + leaf.flat_size, 0.0f);
      if (space.is_discrete()) {
        const float index = src[0] - static_cast<float>(space.start);
        if (index >= 0 && index < static_cast<float>(space.n)) dst[static_cast<int64_t>(index)] = 1.0f;
        continue;
      }
      for (size_t e = 0; e < space.nvec.size(); ++e) {  // MultiDiscrete
        const float index = src[e] - static_cast<float>(space.starts[e]);
        if (index >= 0 && index < static_cast<float>(space.nvec[e])) dst[static_cast<int64_t>(index)] = 1.0f;
        dst += space.nvec[e];
      }
    }
  }
}

}  // namespace rlx
