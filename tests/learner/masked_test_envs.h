// Tiny one-step envs for PPO with action masks and MultiDiscrete / MultiBinary actions, built in
// the tests (no registry): a masked bandit whose best arm is illegal, and a context-matching
// task over several action elements. Each counts the illegal actions it is given.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/env_spec.h"
#include "core/space.h"
#include "envs/env.h"
#include "envs/vector_env.h"

namespace rlx_test {

// Illegal actions an env was given, shared by every copy a factory makes.
using IllegalCount = std::shared_ptr<std::atomic<int64_t>>;

// One step per episode. Context c in {0, 1}, observed one-hot; Discrete(4) arms paying
// kBanditRewards[c][a]; the mask forbids arm 0 in context 0 and arm 2 in context 1, each the
// context's best arm. The best legal arms (2, then 3) pay 0.6 and 0.8: an expected 0.7, where
// uniform legal play gets 0.35. An illegal arm pays -1 and is counted.
class MaskedBanditEnv : public rlx::Env {
 public:
  static constexpr float kBanditRewards[2][4] = {{1.0f, 0.2f, 0.6f, 0.0f}, {0.0f, 0.5f, 1.0f, 0.8f}};
  static constexpr uint8_t kLegal[2][4] = {{0, 1, 1, 1}, {1, 1, 0, 1}};
  static constexpr double kBestLegalReturn = 0.7;

  static rlx::EnvSpec spec() {
    rlx::EnvSpec spec;
    spec.id = "Test/MaskedBandit-v0";
    spec.observation_space = rlx::Space::box({2}, 0.0f, 1.0f);
    spec.action_space = rlx::Space::discrete(4);
    spec.action_mask = true;
    return spec;
  }

  explicit MaskedBanditEnv(IllegalCount illegal) : Env(spec()), illegal_(std::move(illegal)) {}

 protected:
  void reset_episode(rlx::Rng& rng, rlx::ObsSpan obs) override {
    context_ = static_cast<int>(rng.uniform_int(2));
    obs[0] = context_ == 0 ? 1.0f : 0.0f;
    obs[1] = context_ == 1 ? 1.0f : 0.0f;
    for (int64_t a = 0; a < 4; ++a) obs.action_mask()[a] = kLegal[context_][a];
  }

  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    const int64_t a = action.index;
    const bool legal = kLegal[context_][a] != 0;
    if (!legal) ++*illegal_;
    const double reward = legal ? kBanditRewards[context_][a] : -1.0;
    obs[0] = 0.0f;
    obs[1] = 0.0f;
    for (int64_t j = 0; j < 4; ++j) obs.action_mask()[j] = 1;
    return {reward, true, false};
  }

 private:
  IllegalCount illegal_;
  int context_ = 0;
};

// One step per episode. Context c in {0, 1, 2}, observed one-hot; an action of several elements
// (MultiDiscrete nvec, or MultiBinary: 2 choices each) earns 1 / D for each element e that
// picks its target (c + e) mod n_e, so 1 at best. With a mask, element e's choice
// (c + e + 1) mod n_e is forbidden (counted when taken; never the target).
class ContextMatchEnv : public rlx::Env {
 public:
  static rlx::EnvSpec spec(const rlx::Space& actions, bool masked) {
    rlx::EnvSpec spec;
    spec.id = std::string("Test/ContextMatch-") + (masked ? "masked-" : "") + "v0";
    spec.observation_space = rlx::Space::box({3}, 0.0f, 1.0f);
    spec.action_space = actions;
    spec.action_mask = masked;
    return spec;
  }

  ContextMatchEnv(const rlx::Space& actions, bool masked, IllegalCount illegal)
      : Env(spec(actions, masked)), categories_(rlx::action_categories(actions)), masked_(masked), illegal_(std::move(illegal)) {}

 protected:
  void reset_episode(rlx::Rng& rng, rlx::ObsSpan obs) override {
    context_ = rng.uniform_int(3);
    for (int64_t j = 0; j < 3; ++j) obs[j] = j == context_ ? 1.0f : 0.0f;
    write_mask(obs, context_);
  }

  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    double reward = 0.0;
    const auto elements = static_cast<int64_t>(categories_.size());
    for (int64_t e = 0; e < elements; ++e) {
      const int64_t n = categories_[static_cast<size_t>(e)];
      if (masked_ && action.indices[e] == (context_ + e + 1) % n) ++*illegal_;
      if (action.indices[e] == (context_ + e) % n) reward += 1.0 / static_cast<double>(elements);
    }
    for (int64_t j = 0; j < 3; ++j) obs[j] = 0.0f;
    write_mask(obs, -1);
    return {reward, true, false};
  }

 private:
  // The mask of context c (c < 0: every choice legal).
  void write_mask(rlx::ObsSpan obs, int64_t c) const {
    if (!masked_) return;
    int64_t offset = 0;
    for (size_t e = 0; e < categories_.size(); ++e) {
      const int64_t n = categories_[e];
      for (int64_t j = 0; j < n; ++j) {
        obs.action_mask()[offset + j] = c >= 0 && j == (c + static_cast<int64_t>(e) + 1) % n ? 0 : 1;
      }
      offset += n;
    }
  }

  std::vector<int64_t> categories_;
  bool masked_;
  IllegalCount illegal_;
  int64_t context_ = 0;
};

// K copies of the masked bandit, counting into illegal.
inline std::unique_ptr<rlx::VectorEnv> masked_bandit_envs(int k, const IllegalCount& illegal) {
  return std::make_unique<rlx::VectorEnv>([illegal] { return std::make_unique<MaskedBanditEnv>(illegal); }, k);
}

// K copies of the context-matching env over `actions`, masked or not, counting into illegal.
inline std::unique_ptr<rlx::VectorEnv> context_match_envs(int k, const rlx::Space& actions, bool masked,
                                                          const IllegalCount& illegal) {
  return std::make_unique<rlx::VectorEnv>(
      [actions, masked, illegal] { return std::make_unique<ContextMatchEnv>(actions, masked, illegal); }, k);
}

}  // namespace rlx_test
