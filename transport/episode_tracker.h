// EpisodeTracker: episode returns and lengths computed by the learner from one worker's accepted
// fragments, so that what drives stopping and results is what the learner trains on, never a
// peer's own report. Episodes whose start the tracker did not see (it joined mid-episode, or a
// fragment of the worker was lost) are not reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sample_batch.h"

namespace rlx {

// Finished episodes, as the learner computed them.
struct EpisodeReport {
  std::vector<double> returns;
  std::vector<int32_t> lengths;
  // A multi-agent run's episodes as its workers reported them: [E, num_agents] each.
  int32_t num_agents = 0;
  std::vector<double> agent_returns;
  std::vector<int32_t> agent_policies;  // -1: the agent never entered
  int64_t env_steps = 0;                // the workers' env steps, as they reported them
  std::vector<int64_t> policy_agent_steps;  // and their agent steps per policy (empty until one is reported)
  int64_t dropped = 0;  // episodes the fragments marked dropped for a non-finite env output (not in returns)
};

class EpisodeTracker {
 public:
  // max_episode_steps: the env's time limit (0: none); an episode longer than it is an error.
  explicit EpisodeTracker(int max_episode_steps = 0) : max_episode_steps_(max_episode_steps) {}

  // Adds the fragment's steps (env k of the fragment is env k of every fragment of this
  // worker) and appends the episodes it finished to out; an episode that ends on a step of
  // dropped_index is counted in out.dropped instead. Returns a description of the first
  // episode that ran past the time limit; out then gains nothing, and the tracker, whose worker
  // is to be dropped, is left part-way.
  std::optional<std::string> add(const SampleBatch& batch, EpisodeReport& out);

  // A fragment of this worker was lost: the episodes now running are not reported.
  void lose_track();

 private:
  struct Running {
    double episode_return = 0;
    int64_t length = 0;
    bool seen_start = true;
  };
  int max_episode_steps_;
  std::vector<Running> envs_;
  bool lost_before_start_ = false;  // a fragment was lost before the first one added
};

}  // namespace rlx
