#include "transport/episode_tracker.h"

namespace rlx {

std::optional<std::string> EpisodeTracker::add(const SampleBatch& batch, EpisodeReport& out) {
  const auto k = static_cast<size_t>(batch.num_envs);
  const auto t_max = static_cast<size_t>(batch.num_steps);
  if (envs_.size() != k) envs_.assign(k, Running{0, 0, !lost_before_start_});  // the first fragment
  const size_t first_new = out.returns.size();
  const int64_t dropped_before = out.dropped;
  const std::vector<uint8_t> dropped = batch.dropped_rows();
  for (size_t t = 0; t < t_max; ++t) {
    for (size_t e = 0; e < k; ++e) {
      const size_t i = t * k + e;
      Running& env = envs_[e];
      env.episode_return += static_cast<double>(batch.rewards[i]);
      ++env.length;
      if (max_episode_steps_ > 0 && env.seen_start && env.length > max_episode_steps_) {
        out.returns.resize(first_new);
        out.lengths.resize(first_new);
        out.dropped = dropped_before;
        return "env " + std::to_string(e) + " ran an episode of " + std::to_string(env.length) +
               " steps, past the time limit of " + std::to_string(max_episode_steps_);
      }
      if (!(batch.terminated[i] | batch.truncated[i])) continue;
      if (dropped[i]) {
        ++out.dropped;  // not an episode: the worker ended it for a non-finite env output
      } else if (env.seen_start) {
        out.returns.push_back(env.episode_return);
        out.lengths.push_back(static_cast<int32_t>(env.length));
      }
      env = Running{};
    }
  }
  return std::nullopt;
}

void EpisodeTracker::lose_track() {
  if (envs_.empty()) lost_before_start_ = true;
  for (Running& env : envs_) env.seen_start = false;
}

}  // namespace rlx
