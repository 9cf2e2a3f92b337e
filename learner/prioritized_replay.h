// Proportional prioritized replay (Schaul et al., 2016) over a ReplayBuffer's slots.
//
// Slot i is drawn with probability P(i) = p_i^alpha / sum_j p_j^alpha, where p_i = |td_i| + eps
// from the last update_priorities and new transitions get the largest p seen so far (1 at
// first). A batch of B draws one slot from each of B equal segments of the total mass
// (stratified). Importance weights w_i = (N P(i))^-beta / max_j w_j, N = size(); the max over
// the whole buffer comes from the smallest priority, so w_i = (p_i^alpha / min_j p_j^alpha)^-beta.
#pragma once

#include <cstdint>

#include "learner/replay_buffer.h"
#include "learner/replay_segment_tree.h"

namespace rlx {

struct PrioritizedReplayConfig {
  double alpha = 0.6;     // priority exponent (0 = uniform)
  double epsilon = 1e-6;  // added to |td| so no slot becomes unreachable

  // Throws std::invalid_argument when alpha < 0 or epsilon <= 0.
  void validate() const;
};

// Linear annealing of beta from beta0 at timestep 0 to 1 at `horizon` timesteps (then 1);
// horizon <= 0 means 1 from the start. Throws std::invalid_argument when beta0 is outside [0, 1].
double annealed_beta(double beta0, int64_t timesteps, int64_t horizon);

class PrioritizedReplayBuffer : public ReplayBuffer {
 public:
  // Throws std::invalid_argument on a bad capacity, obs size, n-step or priority config.
  PrioritizedReplayBuffer(int64_t capacity, StoredObsSize obs_size, NStepConfig n_step, PrioritizedReplayConfig priority);

  // Draws batch_size slots proportionally to p^alpha, one per equal segment of the total, and
  // fills out.weights with the normalised importance weights for this beta (>= 0).
  // Throws std::logic_error when the buffer is empty, std::invalid_argument on bad arguments.
  void sample(int64_t batch_size, double beta, Rng& rng, ReplaySample& out) const;
  // Sets p_i = |td_i| + eps for each slot (each < size()); duplicates: the last one wins.
  // Throws std::out_of_range on a bad slot, std::invalid_argument on a non-finite td error.
  void update_priorities(const int64_t* slots, const float* td_errors, int64_t count);

  // p_i^alpha as stored in the sum tree.
  double priority(int64_t slot) const { return sum_.get(slot); }
  // Largest p = |td| + eps seen so far (before the alpha exponent); 1 initially.
  double max_priority() const { return max_priority_; }
  double total_priority() const { return sum_.total(); }
  double min_priority() const { return min_.min(); }
  const PrioritizedReplayConfig& priority_config() const { return priority_; }

  // The base's state, then the filled slots' priorities and the largest priority seen.
  void save(BinaryWriter& out) const override;
  void load(BinaryReader& in) override;
  // The n-step windows, then every held slot's priority and the largest priority seen.
  void save_rest(BinaryWriter& out) const override;
  void load_rest(BinaryReader& in) override;

 protected:
  void on_stored(int64_t slot) override;

 private:
  using ReplayBuffer::sample;  // uniform sampling stays reachable through the base class only
  // Every held slot's priority and the largest seen, and their restore (std::invalid_argument on
  // a mismatch).
  void save_priorities(BinaryWriter& out) const;
  void load_priorities(BinaryReader& in);

  PrioritizedReplayConfig priority_;
  SumTree sum_;
  MinTree min_;
  double max_priority_ = 1.0;
};

}  // namespace rlx
