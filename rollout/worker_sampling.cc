#include "rollout/worker_sampling.h"

#include <algorithm>
#include <utility>

#include "envs/python_env.h"
#include "envs/vector_env.h"
#include "models/rollout_policy.h"
#include "rollout/fragment_collector.h"
#include "rollout/multi_agent_worker_sampling.h"
#include "rollout/policy_factory.h"
#include "rollout/weight_delay.h"
#include "transport/sample_receiver.h"

namespace rlx {

namespace {

// One agent: K envs of a VectorEnv, one policy, fragments [T, K] from a FragmentCollector.
class SingleAgentWorkerSampling final : public WorkerSampling {
 public:
  explicit SingleAgentWorkerSampling(const WorkerSetup& setup) : weight_delay_(setup.weight_delay) {
    auto envs = std::make_unique<VectorEnv>(setup.env_factory(), setup.num_envs, setup.non_finite_policy());
    policy_ = make_rollout_policy(setup, envs->spec());
    collector_ = std::make_unique<FragmentCollector>(std::move(envs), *policy_, setup.fragment_length, setup.worker_seed());
  }

  void fill_hello(Hello& hello) const override {
    const EnvSpec& spec = collector_->envs().spec();
    hello.env_id = spec.id;
    hello.num_envs = collector_->num_envs();
    set_hello_spaces(hello, spec);
  }

  WeightsOutcome apply(std::shared_ptr<Weights> weights) override {
    const std::shared_ptr<const Weights> act_with = weight_delay_.push(std::move(weights));
    apply_weights(*policy_, *act_with);
    have_weights_ = true;
    return {true, "", act_with->policy_version, act_with->params.size()};
  }

  bool ready() const override { return have_weights_; }

  void next_fragment(SampleBatch& batch) override { collector_->collect(batch); }

  std::vector<EpisodeStats> take_reports() override {
    const std::vector<FinishedEpisode> finished = collector_->take_finished_episodes();
    EpisodeStats report;
    report.dropped = collector_->take_episodes_dropped();
    if (finished.empty() && report.dropped == 0) return {};
    for (const FinishedEpisode& episode : finished) {
      report.returns.push_back(episode.episode_return);
      report.lengths.push_back(episode.length);
    }
    return {std::move(report)};
  }

  std::string describe() const override {
    return collector_->envs().spec().id + " x " + std::to_string(collector_->num_envs()) + " envs";
  }

 private:
  // The collector borrows the policy: it is declared after it, so it goes first.
  std::unique_ptr<RolloutPolicy> policy_;
  std::unique_ptr<FragmentCollector> collector_;
  WeightDelay weight_delay_;
  bool have_weights_ = false;
};

}  // namespace

void set_hello_spaces(Hello& hello, const EnvSpec& spec) {
  const ExpectedEnv expected = ExpectedEnv::of(spec);
  hello.obs_size = expected.obs_size;
  hello.obs_bytes = expected.obs_bytes;
  hello.action_size = expected.action_size;
  hello.num_actions = expected.num_actions;
  hello.action_components = std::max<int64_t>(1, static_cast<int64_t>(expected.action_categories.size()));
}

std::unique_ptr<WorkerSampling> make_worker_sampling(const WorkerSetup& setup) {
  if (is_python_env_id(setup.env_id)) register_python_env(setup.env_id, setup.env_config);
  if (setup.multi_agent) return std::make_unique<MultiAgentWorkerSampling>(setup);
  return std::make_unique<SingleAgentWorkerSampling>(setup);
}

}  // namespace rlx
