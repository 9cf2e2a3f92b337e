// The episodes behind episode_return_mean (and its min and max) and episode_len_mean: the last kEpisodeWindow that
// finished, carried by every checkpoint so the metrics and the reward criterion continue across
// resumes instead of starting empty.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include <nlohmann/json.hpp>

#include "rollout/fragment_collector.h"

namespace rlx {

// Episodes in the episode_return_mean window (RLlib's smoothing window); the reward stop
// criterion needs the window full.
constexpr size_t kEpisodeWindow = 100;

class EpisodeWindow {
 public:
  // Takes in a finished episode; past kEpisodeWindow the oldest leaves.
  void add(const FinishedEpisode& episode);
  // The episodes held, at most kEpisodeWindow.
  size_t size() const { return returns_.size(); }
  // The mean return of the episodes held; NaN when there are none.
  double return_mean() const;
  // The lowest and highest return of the episodes held; NaN when there are none.
  double return_min() const;
  double return_max() const;
  // The mean length of the episodes held; NaN when there are none.
  double length_mean() const;

  // {"returns": [...], "lengths": [...]}: a checkpoint manifest's episode_window.
  nlohmann::json to_json() const;
  // The window to_json wrote; CheckpointRefused naming `source` when its lists differ in
  // length or hold more than kEpisodeWindow episodes.
  static EpisodeWindow from_json(const nlohmann::json& json, const std::string& source);

 private:
  std::deque<double> returns_, lengths_;  // oldest first
};

}  // namespace rlx
