#include "algorithms/episode_window.h"

#include <algorithm>
#include <cmath>

#include "core/checkpoint_dir.h"

namespace rlx {

namespace {

double window_mean(const std::deque<double>& values) {
  if (values.empty()) return NAN;
  double mean = 0.0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  return mean;
}

}  // namespace

void EpisodeWindow::add(const FinishedEpisode& episode) {
  returns_.push_back(episode.episode_return);
  lengths_.push_back(episode.length);
  if (returns_.size() > kEpisodeWindow) {
    returns_.pop_front();
    lengths_.pop_front();
  }
}

double EpisodeWindow::return_mean() const { return window_mean(returns_); }

double EpisodeWindow::return_min() const {
  return returns_.empty() ? NAN : *std::min_element(returns_.begin(), returns_.end());
}

double EpisodeWindow::return_max() const {
  return returns_.empty() ? NAN : *std::max_element(returns_.begin(), returns_.end());
}

double EpisodeWindow::length_mean() const { return window_mean(lengths_); }

nlohmann::json EpisodeWindow::to_json() const { return {{"returns", returns_}, {"lengths", lengths_}}; }

EpisodeWindow EpisodeWindow::from_json(const nlohmann::json& json, const std::string& source) {
  EpisodeWindow window;
  for (const auto& value : json.at("returns")) window.returns_.push_back(value.get<double>());
  for (const auto& value : json.at("lengths")) window.lengths_.push_back(value.get<double>());
  if (window.returns_.size() != window.lengths_.size() || window.returns_.size() > kEpisodeWindow) {
    throw CheckpointRefused(source + ": episode_window holds mismatched or too many episodes");
  }
  return window;
}

}  // namespace rlx
