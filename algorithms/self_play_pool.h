// SelfPlayPool: the snapshots of a self-play policy's weights its frozen opponent plays (see
// SelfPlaySetup in core/multi_agent_config.h), each with the policy's record against it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"
#include "core/multi_agent_config.h"
#include "core/rng.h"
#include "models/weights.h"

namespace rlx {

class SelfPlayPool {
 public:
  struct Snapshot {
    int64_t iteration = 0;  // the policy's iteration when it was taken
    std::shared_ptr<const Weights> weights;  // null for a scripted member
    std::string scripted;                    // a league member's rule, "" for a snapshot
    int64_t wins = 0, draws = 0, games = 0;  // the policy's games against it
    // The policy's score against it, a draw half a win, with one prior game at 0.5.
    double win_rate() const { return (static_cast<double>(wins) + 0.5 * static_cast<double>(draws) + 0.5) / (static_cast<double>(games) + 1.0); }
  };

  // The pool with the setup's scripted league members in it.
  explicit SelfPlayPool(SelfPlaySetup setup);

  // Adds a snapshot; past pool_size snapshots the oldest leaves (the league's members stay).
  void add(int64_t iteration, std::shared_ptr<const Weights> weights);
  size_t size() const { return snapshots_.size(); }
  const Snapshot& at(size_t index) const { return snapshots_.at(index); }
  // The snapshot to play next: uniform, or weighted (1 - win rate)^2 under "pfsp". Needs size() > 0.
  size_t choose(Rng& rng) const;
  // Records one game of the policy against snapshot `index`: outcome > 0 a win, 0 a draw, < 0 a loss.
  void record(size_t index, double outcome);

  // The snapshots' weights as checkpoint files (self_play.snapshot_N.bin) and their records as JSON.
  std::vector<CheckpointFile> checkpoint_files() const;
  nlohmann::json checkpoint_state() const;
  // Restores what those wrote; throws std::invalid_argument naming what is missing or malformed.
  void restore(const Checkpoint& checkpoint, const nlohmann::json& state);

 private:
  SelfPlaySetup setup_;
  std::deque<Snapshot> snapshots_;  // oldest first
};

}  // namespace rlx
