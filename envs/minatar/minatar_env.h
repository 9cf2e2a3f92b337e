// MinAtarEnv: a MinAtar game (envs/minatar/minatar_game.h) as an rlx Env, registered under the
// reference's Gymnasium ids (minatar/gym.py of kenjyoung/MinAtar): MinAtar/<Game>-v0 acts over
// the full set of six actions, MinAtar/<Game>-v1 over the game's minimal set. The observation is
// the game's grid, Box(0, 1, (10, 10, C), uint8), written straight into the env's bytes; the
// reference registers no time limit and no reward threshold, and neither does rlx.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"
#include "envs/registry.h"

namespace rlx {

// Which of the reference's action sets an id acts over.
enum class MinAtarActions {
  kFull,     // v0: all six actions, Discrete(6)
  kMinimal,  // v1: minimal_action_set(), Discrete(its size)
};

class MinAtarEnv final : public Env {
 public:
  // Frame rate of videos: the reference's display shows a frame for 50 ms (display_time).
  static constexpr double kFramesPerSecond = 20;

  // The game make_minatar_game(game, options) makes, acting over `actions`, with a time limit of
  // max_episode_steps (0: none, the registered ids' setting). Throws std::invalid_argument for an
  // unknown game or bad options.
  MinAtarEnv(const std::string& game, MinAtarActions actions, MinAtarOptions options = {}, int max_episode_steps = 0);

  // The spec of `game` over `actions`: its id, Box(0, 1, (10, 10, C), uint8), Discrete(actions),
  // the time limit, no reward threshold.
  static EnvSpec spec_for(const MinAtarGame& game, MinAtarActions actions, int max_episode_steps = 0);

  // The game being played (read only: the env owns its state).
  const MinAtarGame& game() const { return *game_; }
  // Full-set action played for each of this env's actions: action i plays action_set()[i].
  const std::vector<int>& action_set() const { return action_set_; }

 protected:
  void reset_episode(Rng& rng, ObsSpan obs) override;
  // Plays action_set()[action.index]; throws std::invalid_argument for an index outside the
  // action space. Reward and termination are the game's (no truncation of its own).
  StepResult step_episode(const Action& action, ObsSpan obs) override;
  // The game's exact_state() (the Env keeps the generator and the step counter).
  std::vector<double> exact_state() const override;
  // Restores the game's exact state; throws std::invalid_argument naming the field, leaving the
  // game unchanged, when the state is not one of this game's.
  void restore_exact_state(const std::vector<double>& state) override;
  // The game's render(): 160 x 160 pixels, a 16-pixel square per cell.
  std::optional<RgbImage> render_image() const override;
  double frames_per_second() const override { return kFramesPerSecond; }

 private:
  MinAtarEnv(std::unique_ptr<MinAtarGame> game, MinAtarActions actions, int max_episode_steps);

  std::unique_ptr<MinAtarGame> game_;
  std::vector<int> action_set_;
};

// The id of a game under an action set, as the reference spells it: "MinAtar/SpaceInvaders-v1"
// for ("space_invaders", kMinimal). Throws std::invalid_argument for an unknown game.
std::string minatar_env_id(const std::string& game, MinAtarActions actions);

// Registers MinAtar/<Game>-v0 and MinAtar/<Game>-v1 for every game of minatar_game_names(), with
// the reference's options (sticky actions 0.1, difficulty ramping on).
void register_minatar_envs(EnvRegistrar& registrar);

}  // namespace rlx
