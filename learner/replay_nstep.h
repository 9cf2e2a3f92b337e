// N-step transitions from SampleBatch fragments (torch-free).
//
// For step t of one env the transition is (obs_t, a_t, R, next_obs, terminated, discount):
//   R        = sum_{i<m} gamma^i r_{t+i}, m = n, or fewer where the episode ended at step t+m-1
//   next_obs = the observation after step t+m-1: obs[t+m] of the same env, the episode's
//              final_obs where that step ended an episode (terminated or truncated), or
//              bootstrap_obs where it is the fragment's last step
//   terminated = 1 where step t+m-1 terminated (no bootstrap); a truncation bootstraps
//   discount = gamma^m (the factor on the bootstrap value)
//
// Fragment ends. Windows that reach past the end of a fragment are, by default, carried per
// stream (worker_id, env index) and completed by that worker's next fragment: fragments of
// one worker arrive in order, and the next fragment continues where the last one stopped.
// Continuity is verified: a carried window is only extended when the new fragment's obs[0]
// for that env equals the previous fragment's bootstrap_obs bit for bit; otherwise (a
// dropped stale fragment, a restarted worker) the carried windows are first cut and emitted
// with the steps they have, bootstrapping from the last next_obs. With carrying off, every
// window is cut that way at the end of its fragment (no state between fragments).
// Carried state is not part of any checkpoint: flush() emits it, cut, when that matters.
//
// Observations travel in both stored parts (core/observation_layout.h): floats and bytes (uint8
// leaves, then the action mask), copied as they are, so next_obs carries the next mask.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "core/binary_io.h"
#include "core/sample_batch.h"

namespace rlx {

// The stored size of one observation: `floats` floats and `bytes` bytes (uint8 leaves, then the
// action mask). A float-only size converts from its float count.
struct StoredObsSize {
  int64_t floats = 0;
  int64_t bytes = 0;

  StoredObsSize() = default;
  StoredObsSize(int64_t float_count, int64_t byte_count = 0) : floats(float_count), bytes(byte_count) {}  // NOLINT: implicit
  bool operator==(const StoredObsSize& other) const { return floats == other.floats && bytes == other.bytes; }
  bool operator!=(const StoredObsSize& other) const { return !(*this == other); }
};

// One transition as views into memory owned by the accumulator or the fragment; valid only
// during the callback that receives it.
struct Transition {
  const float* obs = nullptr;       // [O] observation the action was chosen on
  const uint8_t* obs_u8 = nullptr;  // [B] its bytes (null when B = 0)
  int64_t action = 0;               // Discrete action index
  float reward = 0.0f;              // n-step return sum_{i<m} gamma^i r_{t+i}
  const float* next_obs = nullptr;  // [O] observation after the window's last step
  const uint8_t* next_obs_u8 = nullptr;  // [B] its bytes, its action mask last (null when B = 0)
  bool terminated = false;          // the window ended in a termination: no bootstrap
  float discount = 1.0f;            // gamma^m, m = steps summed
};

using TransitionSink = std::function<void(const Transition&)>;

struct NStepConfig {
  int n = 1;                         // steps summed per transition (>= 1)
  double gamma = 0.99;               // discount per step, in [0, 1]
  bool carry_across_fragments = true;  // complete windows with the stream's next fragment (else cut)

  // Throws std::invalid_argument when n < 1 or gamma lies outside [0, 1].
  void validate() const;
};

// Turns fragments of Discrete-action SampleBatches into n-step transitions.
class NStepAccumulator {
 public:
  // Throws std::invalid_argument on a bad config, a negative part or an observation of no slots.
  NStepAccumulator(StoredObsSize obs_size, NStepConfig config);

  // Validates the fragment (Discrete actions, float and byte sizes, a final_obs for every step that ended an
  // episode; throws std::invalid_argument otherwise, before emitting anything) and emits every
  // transition whose window is complete, env by env in time order; none starts on a dropped step
  // (dropped_index), and the windows before it end with its observation, as at a truncation.
  void add(const SampleBatch& batch, const TransitionSink& emit);
  // Emits every carried window cut at the steps it has (bootstrapping from its last next_obs)
  // and forgets all streams; returns the number emitted.
  int64_t flush(const TransitionSink& emit);
  // Steps carried, waiting for their stream's next fragment.
  int64_t num_pending() const;

  const NStepConfig& config() const { return config_; }
  int64_t obs_size() const { return obs_.floats; }
  int64_t obs_bytes() const { return obs_.bytes; }

  // Appends the carried windows (their bytes only when B > 0, so a float-only state keeps the
  // format of before); load() restores them (replacing any), std::invalid_argument on malformed
  // bytes.
  void save(BinaryWriter& out) const;
  void load(BinaryReader& in);

 private:
  // Steps of one (worker, env) stream whose windows are still open; never episode ends.
  struct Stream {
    std::vector<float> obs;       // [P, O]
    std::vector<uint8_t> obs_u8;  // [P, B]
    std::vector<int64_t> actions; // [P]
    std::vector<float> rewards;   // [P]
    std::vector<float> next_obs;  // [O] observation after the last carried step
    std::vector<uint8_t> next_obs_u8;  // [B]
  };
  using StreamKey = std::pair<uint64_t, int32_t>;

  void check(const SampleBatch& batch);
  void process_env(const SampleBatch& batch, int32_t env, Stream& stream, const TransitionSink& emit);
  int64_t flush_stream(Stream& stream, const TransitionSink& emit);

  StoredObsSize obs_;
  NStepConfig config_;
  std::vector<double> gamma_powers_;  // gamma^0 .. gamma^n
  std::map<StreamKey, Stream> streams_;
  std::vector<int32_t> final_row_;    // per flat step t*K+k: row in final_obs, or -1
  std::vector<uint8_t> dropped_row_;  // per flat step: 1 for a dropped episode's last step (SampleBatch::dropped_rows)
  std::vector<int32_t> next_end_;     // scratch: first episode end at or after each step
};

}  // namespace rlx
