// The spans an env writes its observation through (envs/env.h explains the contract): ObsSpan
// (floats, bytes, action mask), each bounds-checked, and ObsRow, where a finished observation goes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rlx {

// ObsSpan's index error; the Env turns it into an EnvOutputError naming the env and the call.
class ObsIndexError : public std::out_of_range {
 public:
  // part: "observation" (the floats), "observation byte" or "action_mask".
  ObsIndexError(int64_t index, int64_t size, std::string part = "observation")
      : std::out_of_range(part + " index " + std::to_string(index) + " is outside its " + std::to_string(size) + " elements"),
        index_(index),
        size_(size),
        part_(std::move(part)) {}
  int64_t index() const { return index_; }
  int64_t size() const { return size_; }
  const std::string& part() const { return part_; }

 private:
  int64_t index_;
  int64_t size_;
  std::string part_;
};

// A run of T an env writes, bounds-checked by operator[].
template <typename T>
class CheckedSpan {
 public:
  CheckedSpan(T* data, int64_t size, const char* part) : data_(data), size_(size), part_(part) {}

  int64_t size() const { return size_; }
  // Element i; throws ObsIndexError when i lies outside [0, size()).
  T& operator[](int64_t i) const {
    if (__builtin_expect(static_cast<uint64_t>(i) >= static_cast<uint64_t>(size_), 0)) throw_index_error(i);
    return data_[i];
  }
  // The first element, for bulk writes of at most size() elements (a longer write is caught by
  // the Env's guard zone after the call).
  T* data() const { return data_; }

 private:
  // Out of line, so that the checked writes stay small in the envs' hot loops.
  [[noreturn]] __attribute__((noinline, cold)) void throw_index_error(int64_t i) const {
    throw ObsIndexError(i, size_, part_);
  }

  T* data_;
  int64_t size_;
  const char* part_;
};

// The bytes an env writes: its uint8 Box and MultiBinary leaves, or its action mask.
using ByteSpan = CheckedSpan<uint8_t>;

// The observation an env writes: the floats (operator[], data(), size(): size() floats), the
// bytes (bytes()) and the action mask (action_mask()), each bounds-checked; leaf offsets are in
// core/observation_layout.h.
class ObsSpan : public CheckedSpan<float> {
 public:
  // Floats only (an observation space without byte leaves and no mask).
  ObsSpan(float* floats, int64_t size) : CheckedSpan<float>(floats, size, "observation"), bytes_(nullptr, 0, "observation byte"), mask_(nullptr, 0, "action_mask") {}
  // Every part: floats [float_slots], bytes [byte_slots] of which the last mask_size are the mask.
  ObsSpan(float* floats, int64_t float_slots, uint8_t* bytes, int64_t byte_slots, int64_t mask_size)
      : CheckedSpan<float>(floats, float_slots, "observation"),
        bytes_(bytes, byte_slots - mask_size, "observation byte"),
        mask_(bytes + (byte_slots - mask_size), mask_size, "action_mask") {}

  // The observation's bytes (without the mask).
  const ByteSpan& bytes() const { return bytes_; }
  // The action mask: one byte per action (Discrete(n): n; MultiDiscrete: sum of nvec), nonzero
  // where the action is legal; empty when the spec declares no mask.
  const ByteSpan& action_mask() const { return mask_; }

 private:
  ByteSpan bytes_;
  ByteSpan mask_;
};

// Where one observation goes: floats [float_slots] and bytes [byte_slots] of its
// ObservationLayout. A float* converts to it for observations that are floats only.
struct ObsRow {
  float* floats = nullptr;
  uint8_t* bytes = nullptr;
  ObsRow() = default;
  ObsRow(float* float_part, uint8_t* byte_part = nullptr) : floats(float_part), bytes(byte_part) {}  // NOLINT: implicit
};

}  // namespace rlx
