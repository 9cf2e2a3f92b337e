// NativeSacLearner: Soft Actor-Critic (Haarnoja et al. 2018, with the learned temperature of
// "SAC: algorithms and applications") on CPU without LibTorch: a squashed-Gaussian policy, twin
// Q(s, a) critics with Polyak-averaged targets, and log alpha trained towards the target entropy
// -|A|. One gradient step samples batch_size transitions from its replay, draws the policy's
// noise, computes both losses' gradients (native/sac_backprop.h) at the step's starting
// parameters (as the paper's algorithm and its reference code: the actor's loss reads the
// critics before their update), checks them, then takes the Adam steps (critics, actor, log alpha)
// and moves the targets by tau. Its large products split over native/product_threads.h's
// threads (the same bits for any count); a seed fixes everything it draws.
//
// A stop (core/stop_signal.h): train() stops between gradient steps once the stop is overdue, so
// many steps due at once cannot outlast the grace period. Each step is whole, so the learner is
// sound as it is, and as steps_due() counts the steps taken, a resumed run takes the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/algorithm_config.h"
#include "core/rng.h"
#include "core/sample_batch.h"
#include "models/model_spec.h"
#include "models/network_layout.h"
#include "models/weights.h"
#include "native/continuous_replay.h"
#include "native/sac_backprop.h"

namespace rlx {

// What the last gradient step reported, and counters.
struct SacUpdateMetrics {
  double critic_loss = 0.0;
  double actor_loss = 0.0;
  double alpha = 0.0;            // the temperature the step used
  double entropy = 0.0;          // -mean log pi(a|s) of the step's policy sample
  double q_mean = 0.0;
  double critic_grad_norm = 0.0;
  double actor_grad_norm = 0.0;
  double lr = 0.0;               // the critics' rate
  int64_t gradient_steps = 0;    // taken by this call
};

class NativeSacLearner {
 public:
  // Initial weights from initial_parameters of the layouts (actor seeded with seed, the critics
  // with seed + 1 and seed + 2; targets copies of the critics). Throws std::invalid_argument on
  // a bad config or Discrete actions.
  NativeSacLearner(const ModelSpec& model_config, SacConfig config, uint64_t seed);

  // Stores a fragment's transitions in the replay; returns how many (see ContinuousReplay::add).
  int64_t add(const SampleBatch& batch);

  // Gradient steps due after `received` env steps: utd_ratio per step past learning_starts,
  // less those taken.
  int64_t steps_due(int64_t received) const;

  // Takes `steps` gradient steps (the learning rates at timesteps); returns the last one's
  // metrics. Throws NonFiniteLearnerError (core/non_finite_error.h) before applying a step whose
  // loss or gradient is not finite (the learner keeps the previous steps), std::logic_error on an
  // empty replay. Throws StopRequested (core/stop_signal.h) before a step when the stop check
  // says the stop is overdue (the steps before it stay applied).
  SacUpdateMetrics train(int64_t steps, int64_t timesteps);
  // Replaces what train() reads before each gradient step to stop (rlx::stop_overdue by default;
  // a test counts steps with its own).
  void set_stop_check(std::function<bool()> overdue) { stop_check_ = std::move(overdue); }

  // The policy's flat parameters, for workers.
  std::shared_ptr<Weights> weights(uint64_t version) const;
  // The temperature alpha = exp(log alpha).
  double alpha() const;

  // Parameters, targets, optimiser states, log alpha, the step count and the generator's state.
  void save(std::ostream& out) const;
  // Reads save()'s format; throws std::invalid_argument naming the mismatch, and then changes nothing.
  void load(std::istream& in);
  // The replay's bytes, and their restore (std::invalid_argument on a mismatch): the whole
  // buffer, as checkpoints before replay segments held it.
  std::string save_replay() const;
  void load_replay(const std::string& bytes);
  // The replay's listing for a checkpoint, the transitions taken in since the last one written to
  // a new segment in dir (ReplaySegmentLog::checkpoint).
  ReplayListing checkpoint_replay(const std::filesystem::path& dir);
  // The replay as a checkpoint's listing of segments in dir has it; std::runtime_error naming a
  // missing, altered or mismatched segment.
  void restore_replay(const std::filesystem::path& dir, const ReplayListing& listing);

  const SacConfig& config() const { return config_; }
  const ContinuousReplay& replay() const { return replay_; }
  int64_t num_gradient_steps() const { return gradient_steps_; }
  const std::vector<float>& actor_parameters() const { return actor_; }
  const std::vector<float>& critic_parameters() const { return critics_; }
  const std::vector<float>& target_parameters() const { return targets_; }

 private:
  // One optimiser's Adam moments and step count.
  struct Adam {
    std::vector<float> exp_avg, exp_avg_sq;
    int64_t step = 0;
    explicit Adam(size_t size = 0) : exp_avg(size, 0.0f), exp_avg_sq(size, 0.0f) {}
  };

  ModelSpec model_config_;
  SacConfig config_;
  SacBackprop backprop_;
  ContinuousReplay replay_;
  ReplaySegmentLog replay_log_;
  Rng rng_;
  double target_entropy_;
  std::vector<float> actor_, critics_, targets_;  // actor [P]; critics and targets [Q1 | Q2]
  std::vector<float> actor_grads_, critic_grads_;
  float log_alpha_ = 0.0f;
  Adam actor_adam_, critic_adam_, alpha_adam_;
  int64_t gradient_steps_ = 0;
  std::function<bool()> stop_check_;  // true: stop train() before its next step
  ContinuousSample sample_;
  std::vector<float> next_noise_, noise_;
};

}  // namespace rlx
