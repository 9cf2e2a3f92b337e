// Envs that break the env API's contract in each way rlx must catch, for the failure tests:
// each behaves (obs ~ small steps, reward 1, 50-step episodes) until its `kBadEpisode`-th
// episode, then misbehaves at episode step kBadStep.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "envs/plugin.h"

namespace rlx_test_plugins {
namespace {

constexpr int kBadEpisode = 3;
constexpr int kBadStep = 7;

enum class Fault {
  kNanObservation,  // NanObs-v0: observation[2] = NaN
  kInfReward,       // InfReward-v0: reward = +inf
  kOverflow,        // Overflow-v0: writes 10 floats into a 5-float observation, from the first step
  kWrongSpec,       // WrongSpec-v0: the instance's spec has 4 observations, the registered one 5
  kCrash,           // Crash-v0: std::abort() (a worker process dies by SIGABRT)
  kThrow,           // Throws-v0: throws std::runtime_error
};

rlx::EnvSpec spec_for(const std::string& id, int64_t obs_size) {
  rlx::EnvSpec spec;
  spec.id = id;
  spec.observation_space = rlx::Space::box({obs_size}, -10.0f, 10.0f);
  spec.action_space = rlx::Space::discrete(2);
  spec.max_episode_steps = 50;
  return spec;
}

class MisbehavingEnv : public rlx::Env {
 public:
  MisbehavingEnv(Fault fault, rlx::EnvSpec spec) : Env(std::move(spec)), fault_(fault) {}

 protected:
  void reset_episode(rlx::Rng& rng, rlx::ObsSpan obs) override {
    ++episodes_;
    position_ = rng.uniform(-0.1, 0.1);
    write(obs);
  }

  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    position_ += action.index == 1 ? 0.01 : -0.01;
    write(obs);
    rlx::StepResult result{1.0, false, false};
    const bool bad_now = episodes_ >= kBadEpisode && elapsed_steps() + 1 == kBadStep;
    if (fault_ == Fault::kOverflow) {
      for (int i = 0; i < 10; ++i) obs.data()[i] = 0.0f;  // past the declared 5
    } else if (bad_now) {
      switch (fault_) {
        case Fault::kNanObservation: obs[2] = std::numeric_limits<float>::quiet_NaN(); break;
        case Fault::kInfReward: result.reward = std::numeric_limits<double>::infinity(); break;
        case Fault::kCrash:
          // A crash, not a race with ZeroMQ: the fragment this worker sent a few microseconds
          // ago is still in its I/O thread's queue, and a loaded machine may not have flushed it
          // before abort() (the test wants that fragment to count). 200 ms lets it go out.
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          std::abort();
        case Fault::kThrow: throw std::runtime_error(spec().id + " broke at episode " + std::to_string(episodes_));
        default: break;
      }
    }
    return result;
  }

 private:
  void write(rlx::ObsSpan obs) const {
    for (int64_t i = 0; i < obs.size(); ++i) obs[i] = static_cast<float>(position_ * static_cast<double>(i + 1));
  }

  Fault fault_;
  int episodes_ = 0;
  double position_ = 0.0;
};

void add(rlx::EnvRegistrar& registrar, const std::string& id, Fault fault, int64_t registered_obs, int64_t instance_obs) {
  registrar.add(spec_for(id, registered_obs), [id, fault, instance_obs] {
    return std::make_unique<MisbehavingEnv>(fault, spec_for(id, instance_obs));
  });
}

}  // namespace
}  // namespace rlx_test_plugins

RLX_ENV_PLUGIN(registrar) {
  using rlx_test_plugins::Fault;
  rlx_test_plugins::add(registrar, "NanObs-v0", Fault::kNanObservation, 4, 4);
  rlx_test_plugins::add(registrar, "InfReward-v0", Fault::kInfReward, 4, 4);
  rlx_test_plugins::add(registrar, "Overflow-v0", Fault::kOverflow, 5, 5);
  rlx_test_plugins::add(registrar, "WrongSpec-v0", Fault::kWrongSpec, 5, 4);
  rlx_test_plugins::add(registrar, "Crash-v0", Fault::kCrash, 4, 4);
  rlx_test_plugins::add(registrar, "Throws-v0", Fault::kThrow, 4, 4);
}
