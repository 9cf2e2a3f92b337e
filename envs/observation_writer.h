// ObservationWriter: the buffers an Env hands its hooks to write an observation into, and the
// checks of what they wrote (envs/env.h explains the contract). Part of the plugin API (header
// only); an Env owns one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/observation_layout.h"
#include "envs/obs_span.h"

namespace rlx {

// Where a breach happened, for EnvOutputError: the field ("observation[3]", "action_mask[2]")
// and what is wrong with it; `non_finite` when a float or the reward is NaN or infinite.
struct ObservationBreach {
  std::string field;
  std::string what;
  bool non_finite = false;
};

class ObservationWriter {
 public:
  explicit ObservationWriter(const EnvSpec& spec)
      : layout_(observation_layout(spec)), space_text_(" (observation_space " + spec.observation_space.to_string() + ")") {
    const auto floats = static_cast<size_t>(layout_.float_slots);
    const auto bytes = static_cast<size_t>(layout_.byte_slots);
    floats_.assign(floats + floats + kGuardSlots, unwritten_float());  // the guard zones stay marked
    bytes_.assign(bytes + bytes + kGuardSlots, kGuardByte);
    if (spec.action_mask) {
      mask_counts_ = spec.action_space.is_discrete() ? std::vector<int64_t>{spec.action_space.n} : spec.action_space.nvec;
    }
    for (const ObsLeaf& leaf : layout_.leaves) {
      if (leaf.space.is_box() && leaf.storage == LeafStorage::kBytes) {
        ByteBounds bounds = byte_bounds(leaf);
        bounds.leaf = static_cast<size_t>(&leaf - layout_.leaves.data());
        const bool full_range = bounds.uniform && bounds.low == 0 && bounds.high == 255;
        if (!full_range) ranged_byte_leaves_.push_back(std::move(bounds));
      } else if (!leaf.space.is_box()) {
        valued_leaves_.push_back(&leaf - layout_.leaves.data());  // Discrete, MultiDiscrete, MultiBinary
      }
    }
  }

  const ObservationLayout& layout() const { return layout_; }

  // Marks the floats unwritten and hands out every part. (The guard zones behind the parts are
  // marked once: a correct env never writes them, and a write there ends the env.)
  ObsSpan begin() {
    std::fill(floats_.begin(), floats_.begin() + layout_.float_slots, unwritten_float());
    return ObsSpan(floats_.data(), layout_.float_slots, bytes_.data(), layout_.byte_slots, layout_.mask_size);
  }

  // True when what the hook wrote keeps the contract (and reward is finite); then copies it to
  // out (the mask as 0/1). False leaves out untouched: breach() names the first fault. One
  // branch-free pass over the floats decides, one over each bounded uint8 leaf; the values of
  // non-Box leaves are checked one by one. Throws std::invalid_argument when out lacks a part the
  // observation has (a caller's error: a float* row for an observation with bytes).
  bool finish(double reward, const ObsRow& out) {
    if (__builtin_expect((layout_.float_slots > 0 && out.floats == nullptr) || (layout_.byte_slots > 0 && out.bytes == nullptr), 0)) {
      throw_missing_part(out);
    }
    const size_t floats = static_cast<size_t>(layout_.float_slots);
    const float* f = floats_.data();
    uint32_t guard_changed = 0, non_finite = 0;  // the unwritten marker is a NaN, so non_finite covers it
    for (size_t i = floats; i < floats + kCheckedGuardSlots; ++i) guard_changed |= bits_of(f[i]) ^ kUnwrittenBits;
    for (size_t i = 0; i < floats; ++i) non_finite |= static_cast<uint32_t>((bits_of(f[i]) & kExponentBits) == kExponentBits);
    const size_t bytes = static_cast<size_t>(layout_.byte_slots);
    const uint8_t* b = bytes_.data();
    for (size_t i = bytes; i < bytes + kCheckedGuardSlots; ++i) guard_changed |= static_cast<uint32_t>(b[i] ^ kGuardByte);
    if ((guard_changed | non_finite) != 0 || !std::isfinite(reward) || !values_in_space()) return false;
    if (floats > 0) std::memcpy(out.floats, f, floats * sizeof(float));
    if (bytes > 0) {
      std::memcpy(out.bytes, b, bytes - static_cast<size_t>(layout_.mask_size));
      for (int64_t i = 0; i < layout_.mask_size; ++i) out.bytes[layout_.mask_offset + i] = b[layout_.mask_offset + i] != 0;
    }
    return true;
  }

  // The first fault of the last finish() that returned false (cold).
  ObservationBreach breach(double reward) const {
    const size_t floats = static_cast<size_t>(layout_.float_slots);
    for (size_t i = floats; i < floats_.size(); ++i) {
      if (bits_of(floats_[i]) != kUnwrittenBits) {
        return {"observation[" + std::to_string(i) + "]",
                "was written, past the observation's " + std::to_string(floats) + " elements" + space_text_};
      }
    }
    const size_t bytes = static_cast<size_t>(layout_.byte_slots);
    for (size_t i = bytes; i < bytes_.size(); ++i) {
      if (bytes_[i] != kGuardByte) {
        return {"observation byte[" + std::to_string(i) + "]",
                "was written, past the observation's " + std::to_string(bytes) + " bytes" + space_text_};
      }
    }
    for (size_t i = 0; i < floats; ++i) {
      if (bits_of(floats_[i]) == kUnwrittenBits) return {float_field(i), "was never written" + space_text_};
      if (!std::isfinite(floats_[i])) return {float_field(i), "is " + std::to_string(floats_[i]) + ", not finite", true};
    }
    for (const ByteBounds& bounds : ranged_byte_leaves_) {
      const ObsLeaf& leaf = layout_.leaves[bounds.leaf];
      for (int64_t i = 0; i < leaf.slots; ++i) {
        const uint8_t v = bytes_[static_cast<size_t>(leaf.offset + i)];
        if (v < leaf.space.low[i] || v > leaf.space.high[i]) {
          return {leaf_field(leaf, i), "is " + std::to_string(v) + ", outside its bounds [" + std::to_string(static_cast<int>(leaf.space.low[i])) + ", " +
                                           std::to_string(static_cast<int>(leaf.space.high[i])) + "]" + space_text_};
        }
      }
    }
    for (size_t index : valued_leaves_) {
      const ObsLeaf& leaf = layout_.leaves[index];
      for (int64_t i = 0; i < leaf.slots; ++i) {
        if (!value_in_space(leaf, i)) {
          const std::string value = leaf.storage == LeafStorage::kBytes ? std::to_string(bytes_[static_cast<size_t>(leaf.offset + i)])
                                                                        : std::to_string(floats_[static_cast<size_t>(leaf.offset + i)]);
          return {leaf_field(leaf, i), "is " + value + ", not a value of " + leaf.space.to_string() + space_text_};
        }
      }
    }
    if (const int64_t component = empty_mask_component(); component >= 0) {
      return {"action_mask", "allows no action" + (mask_counts_.size() > 1 ? " for action element " + std::to_string(component) : std::string())};
    }
    return {"reward", "is " + std::to_string(reward) + ", not finite", true};
  }

  // The field name of an out-of-range write an ObsSpan reported.
  std::string index_field(const std::string& part, int64_t index) const {
    if (part == "observation") return float_field(static_cast<size_t>(index));
    return part + "[" + std::to_string(index) + "]";
  }
  // What an out-of-range write an ObsSpan reported went past.
  std::string index_bound(const std::string& part, int64_t size) const {
    if (part == "observation") return "the observation's " + std::to_string(size) + " elements";
    if (part == "action_mask") return "the action mask's " + std::to_string(size) + " elements";
    return "the observation's " + std::to_string(size) + " bytes";
  }
  const std::string& space_text() const { return space_text_; }

 private:
  // Slots of guard zone beyond each part's own size (which is guarded too), and how many of them,
  // right behind the part, every call checks.
  static constexpr size_t kGuardSlots = 16;
  static constexpr size_t kCheckedGuardSlots = 4;
  // A NaN no arithmetic produces: marks floats the env has not written.
  static constexpr uint32_t kUnwrittenBits = 0x7fa5a5a5u;
  static constexpr uint8_t kGuardByte = 0xa5;
  // A float's exponent bits; all set means infinity or NaN.
  static constexpr uint32_t kExponentBits = 0x7f800000u;

  // finish()'s std::invalid_argument for a row without a part the observation has (cold).
  [[noreturn]] __attribute__((noinline, cold)) void throw_missing_part(const ObsRow& out) const {
    const bool floats = layout_.float_slots > 0 && out.floats == nullptr;
    throw std::invalid_argument(std::string("an observation row without its ") + (floats ? "floats" : "bytes") + ": the observation has " +
                                std::to_string(floats ? layout_.float_slots : layout_.byte_slots) + (floats ? " floats" : " bytes") +
                                space_text_ + "; pass ObsRow(floats, bytes) sized by observation_layout()");
  }

  static uint32_t bits_of(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  static float unwritten_float() {
    float marker;
    std::memcpy(&marker, &kUnwrittenBits, sizeof(marker));
    return marker;
  }

  // Element i of a non-Box leaf is a value of its space.
  bool value_in_space(const ObsLeaf& leaf, int64_t i) const {
    const Space& space = leaf.space;
    if (space.is_multi_binary()) return bytes_[static_cast<size_t>(leaf.offset + i)] <= 1;
    const float v = floats_[static_cast<size_t>(leaf.offset + i)];
    const int64_t first = space.is_discrete() ? space.start : space.starts[static_cast<size_t>(i)];
    const int64_t count = space.is_discrete() ? space.n : space.nvec[static_cast<size_t>(i)];
    return v == std::floor(v) && v >= static_cast<float>(first) && v < static_cast<float>(first + count);
  }

  // Every non-Box value, every bounded byte and the mask are in their spaces.
  bool values_in_space() const {
    for (size_t index : valued_leaves_) {
      const ObsLeaf& leaf = layout_.leaves[index];
      for (int64_t i = 0; i < leaf.slots; ++i) {
        if (!value_in_space(leaf, i)) return false;
      }
    }
    for (const ByteBounds& bounds : ranged_byte_leaves_) {
      if (!bytes_in_bounds(bounds)) return false;
    }
    return empty_mask_component() < 0;
  }

  // The bounds of a uint8 Box leaf as bytes (a uint8 Box's bounds are integers in [0, 255]).
  struct ByteBounds {
    size_t leaf = 0;       // its index in layout_.leaves
    int64_t offset = 0;    // its first byte
    int64_t size = 0;      // its bytes
    bool uniform = false;  // every element has the bounds [low, high]
    uint8_t low = 0, high = 0;
    std::vector<uint8_t> lows, highs;  // per element, when not uniform
  };
  // A uint8 Box leaf's bounds (leaf index left to the caller).
  static ByteBounds byte_bounds(const ObsLeaf& leaf) {
    ByteBounds bounds;
    bounds.offset = leaf.offset;
    bounds.size = leaf.slots;
    for (int64_t i = 0; i < leaf.slots; ++i) {
      bounds.lows.push_back(static_cast<uint8_t>(leaf.space.low[static_cast<size_t>(i)]));
      bounds.highs.push_back(static_cast<uint8_t>(leaf.space.high[static_cast<size_t>(i)]));
    }
    bounds.low = bounds.lows.front();
    bounds.high = bounds.highs.front();
    bounds.uniform = std::count(bounds.lows.begin(), bounds.lows.end(), bounds.low) == leaf.slots &&
                     std::count(bounds.highs.begin(), bounds.highs.end(), bounds.high) == leaf.slots;
    if (bounds.uniform) {
      bounds.lows.clear();
      bounds.highs.clear();
    }
    return bounds;
  }
  // Every byte of the leaf lies in its bounds. Branch-free loops over bytes that the compiler
  // vectorises: for uniform bounds (a MinAtar grid's [0, 1]) the largest byte, and the smallest
  // unless the low bound is 0; else an OR of the per-element comparisons.
  bool bytes_in_bounds(const ByteBounds& bounds) const {
    const uint8_t* v = bytes_.data() + bounds.offset;
    if (bounds.uniform) {
      uint8_t largest = 0;
      for (int64_t i = 0; i < bounds.size; ++i) largest = std::max(largest, v[i]);
      if (largest > bounds.high) return false;
      if (bounds.low == 0) return true;
      uint8_t smallest = 255;
      for (int64_t i = 0; i < bounds.size; ++i) smallest = std::min(smallest, v[i]);
      return smallest >= bounds.low;
    }
    uint8_t outside = 0;
    for (int64_t i = 0; i < bounds.size; ++i) {
      outside |= static_cast<uint8_t>(v[i] < bounds.lows[static_cast<size_t>(i)]) |
                 static_cast<uint8_t>(v[i] > bounds.highs[static_cast<size_t>(i)]);
    }
    return outside == 0;
  }

  // The first action element (0 for Discrete) whose mask allows no action; -1 when none (or no mask).
  int64_t empty_mask_component() const {
    if (layout_.mask_size == 0) return -1;
    const uint8_t* mask = bytes_.data() + layout_.mask_offset;
    const std::vector<int64_t>& counts = mask_counts_;
    int64_t at = 0;
    for (size_t c = 0; c < counts.size(); ++c) {
      bool any = false;
      for (int64_t i = 0; i < counts[c]; ++i) any = any || mask[at + i] != 0;
      if (!any) return static_cast<int64_t>(c);
      at += counts[c];
    }
    return -1;
  }
  std::string float_field(size_t i) const {
    for (const ObsLeaf& leaf : layout_.leaves) {
      if (leaf.storage == LeafStorage::kFloats && static_cast<int64_t>(i) >= leaf.offset && static_cast<int64_t>(i) < leaf.offset + leaf.slots) {
        return leaf_field(leaf, static_cast<int64_t>(i) - leaf.offset);
      }
    }
    return "observation[" + std::to_string(i) + "]";
  }
  static std::string leaf_field(const ObsLeaf& leaf, int64_t i) {
    return "observation" + leaf.path + "[" + std::to_string(i) + "]";
  }

  ObservationLayout layout_;
  std::string space_text_;
  std::vector<float> floats_;   // [2 F + guard]: the floats, then their guard zone
  std::vector<uint8_t> bytes_;  // [2 B + guard]: the bytes, then their guard zone
  std::vector<ByteBounds> ranged_byte_leaves_;  // uint8 Box leaves narrower than [0, 255]
  std::vector<size_t> valued_leaves_;           // Discrete, MultiDiscrete and MultiBinary leaves
  std::vector<int64_t> mask_counts_;            // the mask's segments: {n} (Discrete) or nvec (MultiDiscrete)
};

}  // namespace rlx
