// ReplayBuffer: a fixed-capacity ring of n-step transitions in flat arrays (torch-free), filled
// from SampleBatch fragments and sampled uniformly with replacement.
//
// Each slot holds obs (O floats and B bytes, core/observation_layout.h), action, the n-step
// return, next_obs (O floats, B bytes: its action mask is the bytes' last part), terminated (no
// bootstrap) and discount gamma^m; replay_nstep.h says how fragments become transitions (windows
// across fragment ends are carried per worker and env by default). Bytes stay bytes: a uint8 image
// takes a quarter of the memory it would as floats, and the learner flattens a sampled batch into
// the network's input. Storing next_obs explicitly doubles observation memory but keeps n-step and
// episode-end handling exact and sampling a plain row gather.
// save()/load() carry the slots and the carried n-step windows (a DQN checkpoint keeps them when
// checkpoint_replay_buffer is on, so a resumed synchronous run continues exactly).
#pragma once

#include <cstdint>
#include <vector>

#include "core/binary_io.h"
#include "core/rng.h"
#include "core/sample_batch.h"
#include "learner/replay_nstep.h"
#include "native/replay_segments.h"

namespace rlx {

// A sampled batch, gathered into contiguous arrays (one copy per batch); reuse one across
// calls to avoid allocation.
struct ReplaySample {
  std::vector<int64_t> indices;  // [B] buffer slots (for priority updates)
  std::vector<float> obs;        // [B, O]
  std::vector<uint8_t> obs_u8;   // [B, Bytes] the observations' bytes
  std::vector<int64_t> actions;  // [B]
  std::vector<float> rewards;    // [B] n-step returns
  std::vector<float> next_obs;   // [B, O]
  std::vector<uint8_t> next_obs_u8;  // [B, Bytes] the next observations' bytes, each ending in its action mask
  std::vector<float> terminated; // [B] 1 where the target must not bootstrap
  std::vector<float> discounts;  // [B] gamma^m on the bootstrap value
  std::vector<float> weights;    // [B] importance weights (all 1 for uniform sampling)

  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

class ReplayBuffer {
 public:
  // Throws std::invalid_argument when capacity < 1, an observation has no slot (or a negative
  // part) or the n-step config is bad.
  ReplayBuffer(int64_t capacity, StoredObsSize obs_size, NStepConfig n_step = {});
  virtual ~ReplayBuffer() = default;
  ReplayBuffer(const ReplayBuffer&) = delete;
  ReplayBuffer& operator=(const ReplayBuffer&) = delete;

  // Stores the fragment's completed n-step transitions (see replay_nstep.h); returns how many.
  // Throws std::invalid_argument (storing nothing) on a malformed or mismatched fragment.
  int64_t add(const SampleBatch& batch);
  // Stores one transition in the next slot, overwriting the oldest when full.
  void add_transition(const Transition& transition);
  // Stores every carried n-step window, cut where it stands; returns how many.
  int64_t flush_pending();

  // Draws batch_size slots uniformly with replacement and gathers them into out (weights = 1).
  // Throws std::logic_error when the buffer is empty, std::invalid_argument when batch_size < 1.
  void sample(int64_t batch_size, Rng& rng, ReplaySample& out) const;
  // Same, into a fresh ReplaySample.
  ReplaySample sample(int64_t batch_size, Rng& rng) const;
  // Gathers the given slots (each < size()) into out's columns; leaves out.weights alone.
  void gather(const int64_t* slots, int64_t count, ReplaySample& out) const;

  int64_t size() const { return size_; }
  int64_t capacity() const { return capacity_; }
  int64_t obs_size() const { return obs_.floats; }   // O: floats per observation
  int64_t obs_bytes() const { return obs_.bytes; }   // bytes per observation
  // Memory one slot's columns take: 2 (4 O + bytes) for obs and next_obs, 20 for the rest.
  int64_t slot_bytes() const;
  // Slot the next transition goes to.
  int64_t next_slot() const { return next_; }
  // Transitions stored since construction (including overwritten ones).
  int64_t total_added() const { return total_added_; }
  // Steps waiting in carried n-step windows.
  int64_t num_pending() const { return n_step_.num_pending(); }
  const NStepConfig& n_step_config() const { return n_step_.config(); }

  // Appends the filled slots, the ring position and counters, and the carried n-step windows (a
  // buffer without bytes writes the format of before bytes were stored, so older checkpoints load).
  virtual void save(BinaryWriter& out) const;
  // Restores save()'s bytes into a buffer of the same capacity and observation size, replacing
  // what it held; std::invalid_argument on a mismatch or malformed bytes (then discard the buffer).
  virtual void load(BinaryReader& in);

  // Checkpoints in segments (native/replay_segments.h; learner/replay_buffer_segments.cc): the
  // transitions numbered [first, end) streamed to a segment, a contiguous run of slots at a time
  // (std::invalid_argument unless all are still held); the buffer emptied and placed as after
  // `total_added` transitions; a segment's rows read back into their slots; and the rest of the
  // state, small beside the slots (the carried n-step windows; a prioritized buffer's priorities),
  // saved and loaded apart (load_rest after the rows; std::invalid_argument on a mismatch).
  void write_rows(uint64_t first, uint64_t end, SegmentWriter& out) const;
  void reset_to(uint64_t total_added);
  void read_rows(uint64_t first, uint64_t end, SegmentReader& in);
  virtual void save_rest(BinaryWriter& out) const;
  virtual void load_rest(BinaryReader& in);

  // Read access to one slot (< size()).
  const float* obs(int64_t slot) const { return obs_floats_.data() + slot * obs_.floats; }
  const float* next_obs(int64_t slot) const { return next_obs_floats_.data() + slot * obs_.floats; }
  const uint8_t* obs_u8(int64_t slot) const { return obs_u8_.data() + slot * obs_.bytes; }
  const uint8_t* next_obs_u8(int64_t slot) const { return next_obs_u8_.data() + slot * obs_.bytes; }
  int64_t action(int64_t slot) const { return actions_[static_cast<size_t>(slot)]; }
  float reward(int64_t slot) const { return rewards_[static_cast<size_t>(slot)]; }
  bool terminated(int64_t slot) const { return terminated_[static_cast<size_t>(slot)] != 0.0f; }
  float discount(int64_t slot) const { return discounts_[static_cast<size_t>(slot)]; }

 protected:
  // Called after a transition was written to slot (prioritized replay sets its priority).
  virtual void on_stored(int64_t slot) { (void)slot; }

 private:
  // Calls floats(block, count) or bytes(block, size) for each column's block of each run of slots
  // that transitions [first, end) take: the one layout write_rows writes and read_rows reads.
  template <typename Buffer, typename FloatsFn, typename BytesFn>
  static void for_each_block(Buffer& buffer, uint64_t first, uint64_t end, FloatsFn floats, BytesFn bytes);

  int64_t capacity_;
  StoredObsSize obs_;
  NStepAccumulator n_step_;
  std::vector<float> obs_floats_, next_obs_floats_, rewards_, terminated_, discounts_;
  std::vector<uint8_t> obs_u8_, next_obs_u8_;
  std::vector<int64_t> actions_;
  int64_t next_ = 0;
  int64_t size_ = 0;
  int64_t total_added_ = 0;
};

}  // namespace rlx
