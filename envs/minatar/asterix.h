// MinAtar Asterix: collect gold and dodge enemies that cross the screen in eight lanes.
#pragma once

#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"

namespace rlx {

// The player moves in four directions over rows 1 to 8. Each of those rows is a lane holding at
// most one enemy or piece of gold, spawned at a side edge and crossing the screen. Touching gold
// gives +1 (the gold disappears); touching an enemy ends the episode. Ramping makes spawns and
// moves more frequent over time.
class Asterix final : public MinAtarGame {
 public:
  // Observation channels, in order.
  enum Channel : int { kPlayer = 0, kEnemy = 1, kTrail = 2, kGold = 3 };
  static constexpr int kChannels = 4;
  static constexpr int kLanes = 8;  // lane i is row i + 1

  explicit Asterix(MinAtarOptions options = {});

  std::string name() const override { return "asterix"; }
  int channels() const override { return kChannels; }
  std::vector<std::string> channel_names() const override;
  // noop, left, up, right, down.
  std::vector<int> minimal_action_set() const override;
  int difficulty_level() const override { return s_.ramp_level; }
  void write_observation(uint8_t* out) const override;

 protected:
  void reset_game(Rng& rng) override;
  StepOutcome step_game(int action, Rng& rng) override;
  void save_game(MinAtarStateWriter& out) const override;
  void load_game(MinAtarStateReader& in) override;

 private:
  struct Lane {
    bool occupied = false;
    int x = 0;
    bool moving_right = false;
    bool gold = false;  // gold, else an enemy
  };
  struct State {
    int player_x = 5;
    int player_y = 5;
    Lane lanes[kLanes];
    int spawn_interval = 10;  // frames between spawns
    int spawn_timer = 10;     // a spawn happens on the frame that starts with it at 0
    int move_interval = 5;    // frames between moves of the lanes' objects
    int move_timer = 5;
    int ramp_timer = 100;     // counts down to -1; the frame after, difficulty ramps
    int ramp_level = 0;
  };

  void spawn(Rng& rng);
  // Player contact with whatever is at its cell: gold is collected, an enemy ends the episode.
  void touch(StepOutcome& outcome);
  void ramp_difficulty();

  State s_;
};

}  // namespace rlx
