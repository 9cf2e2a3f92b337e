// MinAtar SpaceInvaders: a cannon shoots up at a marching block of aliens that shoots back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"

namespace rlx {

// The cannon moves along the bottom row and fires upward (+1 for each alien hit). The aliens
// (a 4x6 block at first) march sideways, stepping down and turning at an edge, faster as fewer
// remain; the alien nearest the cannon fires down every 10 frames. The episode ends when an alien
// or an alien's bullet reaches the cannon (or an alien steps down from the bottom row). A cleared
// wave is replaced; ramping makes each new wave march faster.
class SpaceInvaders final : public MinAtarGame {
 public:
  // Observation channels, in order; alien_left / alien_right copy the aliens by marching direction.
  enum Channel : int {
    kCannon = 0,
    kAlien = 1,
    kAlienLeft = 2,
    kAlienRight = 3,
    kFriendlyBullet = 4,
    kEnemyBullet = 5,
  };
  static constexpr int kChannels = 6;

  explicit SpaceInvaders(MinAtarOptions options = {});

  std::string name() const override { return "space_invaders"; }
  int channels() const override { return kChannels; }
  std::vector<std::string> channel_names() const override;
  // noop, left, right, fire.
  std::vector<int> minimal_action_set() const override;
  int difficulty_level() const override { return s_.ramp_level; }
  void write_observation(uint8_t* out) const override;

 protected:
  void reset_game(Rng& rng) override;
  StepOutcome step_game(int action, Rng& rng) override;
  void save_game(MinAtarStateWriter& out) const override;
  void load_game(MinAtarStateReader& in) override;

 private:
  // Bit x of row y marks column x: a 10x10 map in 10 words.
  using Grid = uint16_t[kGridSize];

  struct State {
    int cannon_x = 5;
    int shot_cooldown = 0;
    Grid aliens = {};
    Grid bullets = {};        // the cannon's, moving up
    Grid enemy_bullets = {};  // the aliens', moving down
    int alien_dir = -1;       // -1 marching left, +1 right
    int alien_move_interval = 12;  // the most frames between marches (fewer when few aliens remain)
    int alien_move_timer = 12;     // they march on the frame that starts with it at 0
    int alien_shot_timer = 10;     // the nearest alien fires on the frame that starts with it at 0
    int ramp_level = 0;
  };

  // Moves the block one column, or at an edge turns it and steps it down a row (returns true).
  bool march();
  // The lowest alien of the column nearest the cannon fires.
  void fire_alien_bullet();

  State s_;
};

}  // namespace rlx
