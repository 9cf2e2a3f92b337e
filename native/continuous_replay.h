// ContinuousReplay: SAC's replay memory, a fixed-capacity ring of one-step transitions with Box
// actions in flat float arrays (torch-free), filled from SampleBatch fragments and sampled
// uniformly with replacement. Actions are stored in the policy's [-1, 1] coordinates: a
// fragment's actions, scaled to the Box's bounds on their way to the env, are mapped back.
// A step's next observation is the same env's observation one step later, the final observation
// where the step ended an episode (terminated or truncated), or the fragment's bootstrap_obs
// after its last step; only a termination stops the bootstrap (a time limit does not).
#pragma once

#include <cstdint>
#include <vector>

#include "core/binary_io.h"
#include "core/rng.h"
#include "core/sample_batch.h"
#include "core/space.h"
#include "native/replay_segments.h"

namespace rlx {

// A sampled batch, gathered into contiguous arrays; reuse one across calls.
struct ContinuousSample {
  int64_t rows = 0;
  std::vector<float> obs;         // [B, O]
  std::vector<float> actions;     // [B, A] in [-1, 1]
  std::vector<float> rewards;     // [B]
  std::vector<float> next_obs;    // [B, O]
  std::vector<float> terminated;  // [B] 1 where the target must not bootstrap
};

class ContinuousReplay {
 public:
  // Throws std::invalid_argument when capacity < 1, obs_size < 1, or the action space is not a
  // Box with finite bounds low < high.
  ContinuousReplay(int64_t capacity, int64_t obs_size, const Space& action_space);

  // Stores the fragment's T * K transitions (step-major) but its dropped steps (dropped_index),
  // overwriting the oldest when full; returns how many. Throws std::invalid_argument (storing nothing) on a malformed fragment or
  // one whose sizes differ from the buffer's.
  int64_t add(const SampleBatch& batch);

  // Draws batch_size slots uniformly with replacement (batch_size calls of rng.uniform_int) and
  // gathers them into out. Throws std::logic_error when empty, std::invalid_argument when
  // batch_size < 1.
  void sample(int64_t batch_size, Rng& rng, ContinuousSample& out) const;

  int64_t size() const { return size_; }
  int64_t capacity() const { return capacity_; }
  int64_t obs_size() const { return obs_size_; }
  int64_t action_size() const { return action_size_; }

  // Transitions taken in so far (counting those a restore brought back): the number the next
  // one gets. Transition g lives in slot g % capacity until capacity more come.
  uint64_t inserted() const { return inserted_; }

  // Streams the transitions numbered [first, end) to a segment, a contiguous run of slots at a
  // time; std::invalid_argument unless all of them are still held.
  void write_rows(uint64_t first, uint64_t end, SegmentWriter& out) const;
  // Empties the buffer and puts it where it was after `inserted` transitions; read_rows then
  // brings back the live ones, [inserted - min(inserted, capacity), inserted).
  void reset_to(uint64_t inserted);
  // Reads what write_rows(first, end) wrote into the slots of those transitions (end <= inserted()).
  void read_rows(uint64_t first, uint64_t end, SegmentReader& in);

  // Appends the filled slots and the ring position.
  void save(BinaryWriter& out) const;
  // Restores save()'s bytes into a buffer of the same capacity and sizes; std::invalid_argument
  // on a mismatch or malformed bytes (then the buffer is unchanged).
  void load(BinaryReader& in);

 private:
  // Calls fn(block, floats) for each column's block of each run of slots that transitions
  // [first, end) take: the one layout write_rows writes and read_rows reads.
  template <typename Replay, typename Fn>
  static void for_each_block(Replay& replay, uint64_t first, uint64_t end, Fn fn);
  void store(const float* obs, const float* env_action, float reward, const float* next_obs, bool terminated);

  int64_t capacity_;
  int64_t obs_size_;
  int64_t action_size_;
  std::vector<float> low_, half_range_;  // [A]: policy action = (env action - low) / half_range - 1
  std::vector<float> obs_, actions_, rewards_, next_obs_, terminated_;
  int64_t next_ = 0;
  int64_t size_ = 0;
  uint64_t inserted_ = 0;
};

}  // namespace rlx
