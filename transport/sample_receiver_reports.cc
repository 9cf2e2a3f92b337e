// SampleReceiver, what workers report besides fragments: their episode statistics and their
// goodbyes (with the reason a worker stops, when it gives one).
#include <cmath>

#include "transport/sample_receiver.h"

namespace rlx {

EpisodeReport SampleReceiver::take_episodes() {
  std::lock_guard<std::mutex> lock(mutex_);
  EpisodeReport taken = std::move(episodes_);
  episodes_ = {};
  return taken;
}

void SampleReceiver::handle_episode_stats(const std::string& identity, const EpisodeStats& stats) {
  // Returns, lengths and (single-agent) episodes dropped for a non-finite step come from the
  // fragments (dropped_index); a multi-agent worker's report gives its dropped count, bounded by
  // the steps a fragment holds.
  auto it = workers_.find(identity);
  if (it == workers_.end() || !it->second.ready) return;
  const FragmentContract& contract = it->second.contracts[0];
  const int64_t most = contract.num_steps * int64_t{contract.num_envs};
  std::lock_guard<std::mutex> lock(mutex_);
  if (stats.dropped < 0 || stats.dropped > most || multi_agent() != (stats.num_agents > 0) ||
      (multi_agent() && !take_agent_episodes(stats))) {
    ++stats_.unexpected_messages;
    return;
  }
  if (multi_agent()) stats_.episodes_dropped += static_cast<uint64_t>(stats.dropped);
}

bool SampleReceiver::take_agent_episodes(const EpisodeStats& stats) {
  if (stats.num_agents != options_.num_agents) return false;
  for (const double value : stats.agent_returns) {
    if (!std::isfinite(value)) return false;
  }
  for (const double value : stats.returns) {
    if (!std::isfinite(value)) return false;
  }
  for (const int32_t policy : stats.agent_policies) {
    if (policy >= static_cast<int32_t>(options_.policies.size())) return false;
  }
  if (!stats.policy_agent_steps.empty()) {
    if (stats.policy_agent_steps.size() != options_.policies.size()) return false;
    episodes_.policy_agent_steps.resize(options_.policies.size(), 0);
    for (size_t p = 0; p < options_.policies.size(); ++p) episodes_.policy_agent_steps[p] += stats.policy_agent_steps[p];
  }
  stats_.episodes += stats.returns.size();
  episodes_.env_steps += stats.env_steps;
  if (episodes_.returns.size() + stats.returns.size() > kMaxEpisodesKept) return true;  // the learner is not reading
  episodes_.num_agents = stats.num_agents;
  episodes_.returns.insert(episodes_.returns.end(), stats.returns.begin(), stats.returns.end());
  episodes_.lengths.insert(episodes_.lengths.end(), stats.lengths.begin(), stats.lengths.end());
  episodes_.agent_returns.insert(episodes_.agent_returns.end(), stats.agent_returns.begin(), stats.agent_returns.end());
  episodes_.agent_policies.insert(episodes_.agent_policies.end(), stats.agent_policies.begin(), stats.agent_policies.end());
  return true;
}

void SampleReceiver::handle_stop(const std::string& identity, const Stop& stop) {
  // The worker is leaving (its last message, after all its fragments): forget it. Only a worker
  // that joined may give a reason (a stranger's goodbye is not counted).
  auto it = workers_.find(identity);
  if (it == workers_.end()) return;
  Worker& worker = it->second;
  const bool was_ready = worker.ready;
  close_clock(worker, std::chrono::steady_clock::now());
  std::string who = worker.who;
  if (who.empty() && stop.reason) {  // it failed before its hello: where it runs comes with the reason
    who = "worker " + std::to_string(worker.worker_id) + " (pid " + std::to_string(stop.reason->pid) + " on " +
          stop.reason->hostname + ")";
  }
  workers_.erase(it);
  std::lock_guard<std::mutex> lock(mutex_);
  const bool failed = stop.reason && is_failure(stop.reason->cause);
  if (stop.reason) {
    if (std::optional<StopNotice> notice = worker_stops_.record(*stop.reason, who)) stop_notices_.push_back(std::move(*notice));
  }
  if (failed) {
    stats_.workers_failed = worker_stops_.failed();
    stats_.worker_failures = worker_stops_.failures();
  } else if (was_ready) {
    ++stats_.workers_left;
  }
  stats_.workers_active = workers_.size();
}

std::vector<StopNotice> SampleReceiver::take_stop_notices() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<StopNotice> taken = std::move(stop_notices_);
  stop_notices_.clear();
  return taken;
}

std::vector<std::string> SampleReceiver::worker_failure_summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return worker_stops_.summary();
}

}  // namespace rlx
