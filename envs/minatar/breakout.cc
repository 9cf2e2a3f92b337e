#include "envs/minatar/breakout.h"

#include <algorithm>
#include <cstring>

namespace rlx {
namespace {

constexpr int kLast = MinAtarGame::kGridSize - 1;  // the last row or column
constexpr uint16_t kFullRow = (1u << MinAtarGame::kGridSize) - 1;
constexpr int kWallTop = 1;  // the wall of bricks fills rows 1 to 3
constexpr int kWallBottom = 3;
constexpr int kBallStartRow = 3;
constexpr int kPaddleStart = 4;

}  // namespace

Breakout::Breakout(MinAtarOptions options) : MinAtarGame(options) {}

std::vector<std::string> Breakout::channel_names() const { return {"paddle", "ball", "trail", "brick"}; }

std::vector<int> Breakout::minimal_action_set() const { return {kNoop, kLeft, kRight}; }

void Breakout::reset_game(Rng& rng) {
  s_ = State();
  // The ball starts in row 3 at the left edge heading down-right, or at the right edge heading
  // down-left, with equal chance.
  const bool from_right = rng.uniform_int(2) == 1;
  s_.ball_x = from_right ? kLast : 0;
  s_.ball_dx = from_right ? -1 : 1;
  s_.ball_y = kBallStartRow;
  s_.ball_dy = 1;
  s_.trail_x = s_.ball_x;
  s_.trail_y = s_.ball_y;
  s_.paddle_x = kPaddleStart;
  for (int y = kWallTop; y <= kWallBottom; ++y) s_.bricks[y] = kFullRow;
}

StepOutcome Breakout::step_game(int action, Rng& /*rng*/) {
  StepOutcome outcome;
  if (action == kLeft) s_.paddle_x = std::max(0, s_.paddle_x - 1);
  if (action == kRight) s_.paddle_x = std::min(kLast, s_.paddle_x + 1);

  s_.trail_x = s_.ball_x;
  s_.trail_y = s_.ball_y;
  int x = s_.ball_x + s_.ball_dx;
  int y = s_.ball_y + s_.ball_dy;
  if (y > kLast) {  // a ball already in the bottom row moving down (a restored, finished game)
    outcome.terminal = true;
    return outcome;
  }
  // A side wall reflects the horizontal direction; the ball stays in the edge column this step.
  if (x < 0 || x > kLast) {
    x = std::clamp(x, 0, kLast);
    s_.ball_dx = -s_.ball_dx;
  }
  bool entered_brick = false;
  if (y < 0) {  // the ceiling
    y = 0;
    s_.ball_dy = -s_.ball_dy;
  } else if (s_.bricks[y] & (1u << x)) {
    entered_brick = true;
    // A brick breaks and turns the ball back vertically, unless the previous move already
    // entered a brick: then the ball passes into this one's cell and leaves it standing.
    if (!s_.striking) {
      outcome.reward = 1.0f;
      s_.bricks[y] &= static_cast<uint16_t>(~(1u << x));
      y = s_.ball_y;
      s_.ball_dy = -s_.ball_dy;
    }
  } else if (y == kLast) {  // the paddle's row
    bool cleared = true;
    for (uint16_t row : s_.bricks) cleared = cleared && row == 0;
    if (cleared) {
      for (int r = kWallTop; r <= kWallBottom; ++r) s_.bricks[r] = kFullRow;
    }
    if (s_.ball_x == s_.paddle_x) {  // the ball came down right above the paddle: straight back up
      s_.ball_dy = -s_.ball_dy;
      y = s_.ball_y;
    } else if (x == s_.paddle_x) {  // it meets the paddle's corner: back the way it came
      s_.ball_dx = -s_.ball_dx;
      s_.ball_dy = -s_.ball_dy;
      y = s_.ball_y;
    } else {
      outcome.terminal = true;
    }
  }
  s_.striking = entered_brick;
  s_.ball_x = x;
  s_.ball_y = y;
  return outcome;
}

void Breakout::write_observation(uint8_t* out) const {
  std::memset(out, 0, kGridSize * kGridSize * kChannels);
  const auto cell = [out](int x, int y, int c) -> uint8_t& { return out[(y * kGridSize + x) * kChannels + c]; };
  cell(s_.paddle_x, kLast, kPaddle) = 1;
  cell(s_.ball_x, s_.ball_y, kBall) = 1;
  cell(s_.trail_x, s_.trail_y, kTrail) = 1;
  for (int y = 0; y < kGridSize; ++y) {
    for (unsigned row = s_.bricks[y]; row != 0; row &= row - 1) cell(__builtin_ctz(row), y, kBrick) = 1;
  }
}

void Breakout::save_game(MinAtarStateWriter& out) const {
  out.put(s_.paddle_x);
  out.put(s_.ball_x);
  out.put(s_.ball_y);
  out.put(s_.ball_dx);
  out.put(s_.ball_dy);
  out.put(s_.trail_x);
  out.put(s_.trail_y);
  out.put(s_.striking);
  for (uint16_t row : s_.bricks) out.put(row);
}

void Breakout::load_game(MinAtarStateReader& in) {
  State s;
  s.paddle_x = in.take("paddle_x", 0, kLast);
  s.ball_x = in.take("ball_x", 0, kLast);
  s.ball_y = in.take("ball_y", 0, kLast);
  s.ball_dx = in.take("ball_dx", -1, 1);
  s.ball_dy = in.take("ball_dy", -1, 1);
  if (s.ball_dx == 0 || s.ball_dy == 0) in.fail("ball_dx and ball_dy must each be -1 or +1");
  s.trail_x = in.take("trail_x", 0, kLast);
  s.trail_y = in.take("trail_y", 0, kLast);
  s.striking = in.take_bool("striking");
  for (uint16_t& row : s.bricks) row = static_cast<uint16_t>(in.take("bricks row bits", 0, kFullRow));
  s_ = s;
}

}  // namespace rlx
