// WorkerSampling: what a rollout worker samples with once a learner's Welcome has set it up. One
// agent's VectorEnv and policy (the FragmentCollector path), or a multi-agent env's policies and
// lanes (rollout/multi_agent_worker_sampling.h). RolloutWorker holds one and does the talking:
// joins, heartbeats, credits, and sending what this produces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/sample_batch.h"
#include "rollout/worker_setup.h"
#include "transport/messages.h"

namespace rlx {

// What became of a Weights message from the learner.
struct WeightsOutcome {
  bool accepted = false;        // false: rejected, nothing changed; `rejection` says why
  std::string rejection;
  uint64_t acting_version = 0;  // accepted: the policy version acted with now (after the setup's weight delay)
  size_t params = 0;            // accepted: the parameters of the weights acted with
};

class WorkerSampling {
 public:
  virtual ~WorkerSampling() = default;

  // Sets the hello's env fields: env_id, num_envs (the streams the learner grants credits for)
  // and the observation and action sizes.
  virtual void fill_hello(Hello& hello) const = 0;
  // Takes a Weights message; rejects (changing nothing) one that names no policy with a model.
  // Throws std::invalid_argument when the weights do not fit the policy's model.
  virtual WeightsOutcome apply(std::shared_ptr<Weights> weights) = 0;
  // True once weights have arrived for every policy that has a model.
  virtual bool ready() const = 0;
  // Fills `batch` with the next fragment, stepping the envs when none is waiting (its worker_id
  // is the worker's to set). Throws EnvContractError (EnvOutputError) on an env that breaks its
  // contract, PythonEnvError when a Python env raises.
  virtual void next_fragment(SampleBatch& batch) = 0;
  // The episode reports to send now, in order: none or one, more only when a multi-agent env
  // took more steps since the last report than one report may carry.
  virtual std::vector<EpisodeStats> take_reports() = 0;
  // The envs, for the log: "CartPole-v1 x 8 envs".
  virtual std::string describe() const = 0;
};

// Sets the hello's observation and action fields to those of an env with this spec (the learner
// holds the worker's fragments to the same).
void set_hello_spaces(Hello& hello, const EnvSpec& spec);

// The sampling `setup` asks for: multi-agent when setup.multi_agent is set, else one agent; a
// Python env id is registered first. Throws std::invalid_argument on a setup that does not fit
// its env, UnknownEnvError on an unknown env id, and as the envs' constructors and resets throw.
std::unique_ptr<WorkerSampling> make_worker_sampling(const WorkerSetup& setup);

}  // namespace rlx
