// MinAtar Breakout: bounce a ball off a paddle to break three rows of bricks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "envs/minatar/minatar_game.h"

namespace rlx {

// The paddle moves along the bottom row; the ball travels diagonally, bouncing off the walls, the
// ceiling, bricks (+1 each, the brick breaks) and the paddle. The episode ends when the ball
// reaches the bottom row past the paddle. A cleared wall is rebuilt. No difficulty ramping.
class Breakout final : public MinAtarGame {
 public:
  // Observation channels, in order.
  enum Channel : int { kPaddle = 0, kBall = 1, kTrail = 2, kBrick = 3 };
  static constexpr int kChannels = 4;

  explicit Breakout(MinAtarOptions options = {});

  std::string name() const override { return "breakout"; }
  int channels() const override { return kChannels; }
  std::vector<std::string> channel_names() const override;
  // noop, left, right.
  std::vector<int> minimal_action_set() const override;
  void write_observation(uint8_t* out) const override;

 protected:
  void reset_game(Rng& rng) override;
  StepOutcome step_game(int action, Rng& rng) override;
  void save_game(MinAtarStateWriter& out) const override;
  void load_game(MinAtarStateReader& in) override;

 private:
  struct State {
    int paddle_x = 4;
    int ball_x = 0;
    int ball_y = 3;
    int ball_dx = 1;  // -1 or +1: the ball's diagonal direction
    int ball_dy = 1;  // -1 (up) or +1 (down)
    int trail_x = 0;  // where the ball was before its last move
    int trail_y = 3;
    bool striking = false;  // the last move took the ball into a brick's cell
    uint16_t bricks[kGridSize] = {};  // bit x of bricks[y]: a brick at column x, row y
  };

  State s_;
};

}  // namespace rlx
