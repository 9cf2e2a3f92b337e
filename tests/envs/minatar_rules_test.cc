// MinAtar rules, part 1: Breakout, Asterix and Freeway, each rule shown from a hand-built state
// (minatar_test_util.h builds exact states; part 2 is minatar_shooter_rules_test.cc).
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "envs/minatar/asterix.h"
#include "envs/minatar/breakout.h"
#include "envs/minatar/freeway.h"
#include "tests/envs/minatar_test_util.h"

using namespace minatar_test;

// ---------------------------------------------------------------------------------------------
// Breakout

namespace {

using rlx::Breakout;

// A Breakout with no sticky actions in the given exact state.
std::unique_ptr<MinAtarGame> breakout_at(const std::vector<double>& state) {
  auto game = make("breakout");
  game->restore_exact_state(state);
  return game;
}

}  // namespace

TEST_CASE("Breakout starts with three rows of bricks and the ball in row 3 at either side", "[envs][minatar]") {
  bool seen[2] = {false, false};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto game = make("breakout");
    Rng rng(seed);
    game->reset(rng);
    const Observation obs = observe(*game);
    CHECK(obs.count(Breakout::kBrick) == 30);
    for (int x = 0; x < 10; ++x) CHECK((obs.at(x, 1, Breakout::kBrick) && obs.at(x, 3, Breakout::kBrick)));
    CHECK(obs.at(4, 9, Breakout::kPaddle));
    CHECK(obs.count(Breakout::kBall) == 1);
    CHECK((obs.at(0, 3, Breakout::kBall) || obs.at(9, 3, Breakout::kBall)));
    seen[obs.at(9, 3, Breakout::kBall) ? 1 : 0] = true;
  }
  CHECK((seen[0] && seen[1]));
}

TEST_CASE("Breakout's ball bounces straight back up off the paddle under it", "[envs][minatar]") {
  Rng rng(1);
  auto game = breakout_at(breakout_state(4, 4, 8, +1, +1, kFullWall));
  const auto outcome = game->step(MinAtarGame::kNoop, rng);
  CHECK(outcome.reward == 0.0f);
  CHECK_FALSE(outcome.terminal);
  CHECK(observe(*game).at(5, 8, Breakout::kBall));  // still in row 8, now heading up-right
  CHECK(observe(*game).at(4, 8, Breakout::kTrail));
  game->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*game).at(6, 7, Breakout::kBall));
}

TEST_CASE("Breakout's ball meeting the paddle's corner goes back the way it came", "[envs][minatar]") {
  Rng rng(1);
  auto game = breakout_at(breakout_state(4, 3, 8, +1, +1, kFullWall));
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK(observe(*game).at(4, 8, Breakout::kBall));
  game->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*game).at(3, 7, Breakout::kBall));  // up-left
}

TEST_CASE("Breakout ends when the ball reaches the bottom row past the paddle", "[envs][minatar]") {
  Rng rng(1);
  auto game = breakout_at(breakout_state(7, 3, 8, +1, +1, kFullWall));
  const auto outcome = game->step(MinAtarGame::kNoop, rng);
  CHECK(outcome.terminal);
  CHECK(outcome.reward == 0.0f);
  CHECK(observe(*game).at(4, 9, Breakout::kBall));
  const auto after = game->step(MinAtarGame::kLeft, rng);  // a finished game stays finished
  CHECK((after.terminal && after.reward == 0.0f && observe(*game).at(7, 9, Breakout::kPaddle)));
}

TEST_CASE("Breakout's ball bounces off the side walls and the ceiling", "[envs][minatar]") {
  Rng rng(1);
  auto wall = breakout_at(breakout_state(4, 9, 6, +1, -1, kFullWall));
  wall->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*wall).at(9, 5, Breakout::kBall));  // kept to the edge column for the bounce
  wall->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*wall).at(8, 4, Breakout::kBall));

  auto ceiling = breakout_at(breakout_state(4, 2, 0, +1, -1, kNoBricks));
  ceiling->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*ceiling).at(3, 0, Breakout::kBall));
  ceiling->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*ceiling).at(4, 1, Breakout::kBall));
}

TEST_CASE("A Breakout brick gives reward 1, disappears and turns the ball back", "[envs][minatar]") {
  Rng rng(1);
  auto game = breakout_at(breakout_state(4, 5, 5, +1, -1, kFullWall));
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 0.0f);
  CHECK(observe(*game).at(6, 4, Breakout::kBall));
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 1.0f);  // into the brick at (7, 3)
  const Observation obs = observe(*game);
  CHECK_FALSE(obs.at(7, 3, Breakout::kBrick));
  CHECK(obs.count(Breakout::kBrick) == 29);
  CHECK(obs.at(7, 4, Breakout::kBall));
  game->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*game).at(8, 5, Breakout::kBall));  // heading down now
}

TEST_CASE("Breakout's ball moves into a brick right after breaking one, leaving it standing", "[envs][minatar]") {
  Rng rng(1);
  std::array<int, 10> bricks = {};
  bricks[3] = bit(6);
  bricks[5] = bit(7);
  auto game = breakout_at(breakout_state(0, 5, 4, +1, -1, bricks));
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 1.0f);
  CHECK(observe(*game).at(6, 4, Breakout::kBall));
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 0.0f);  // the reference's "strike" rule
  CHECK(observe(*game).at(7, 5, Breakout::kBall));
  CHECK(observe(*game).at(7, 5, Breakout::kBrick));
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 0.0f);
  CHECK(observe(*game).at(8, 6, Breakout::kBall));
}

TEST_CASE("Breakout rebuilds the wall when the ball reaches the paddle's row with no bricks left", "[envs][minatar]") {
  Rng rng(1);
  auto game = breakout_at(breakout_state(3, 3, 8, -1, +1, kNoBricks));
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  const Observation obs = observe(*game);
  CHECK(obs.count(Breakout::kBrick) == 30);
  CHECK(obs.at(2, 8, Breakout::kBall));
}

TEST_CASE("Breakout's paddle moves one column a step within the screen", "[envs][minatar]") {
  Rng rng(1);
  auto game = breakout_at(breakout_state(1, 5, 4, +1, -1, kFullWall));
  game->step(MinAtarGame::kLeft, rng);
  CHECK(observe(*game).at(0, 9, Breakout::kPaddle));
  game->step(MinAtarGame::kLeft, rng);
  CHECK(observe(*game).at(0, 9, Breakout::kPaddle));
  game->step(MinAtarGame::kRight, rng);
  CHECK(observe(*game).at(1, 9, Breakout::kPaddle));
  game->step(MinAtarGame::kUp, rng);  // not one of Breakout's moves
  CHECK(observe(*game).at(1, 9, Breakout::kPaddle));
}

// ---------------------------------------------------------------------------------------------
// Asterix

namespace {

using rlx::Asterix;

std::unique_ptr<MinAtarGame> asterix_at(const AsterixSetup& setup, MinAtarOptions options = kNoSticky) {
  auto game = make("asterix", options);
  game->restore_exact_state(asterix_state(setup));
  return game;
}

// Player at (5, 5) and one object in its row at column x, moving left.
AsterixSetup asterix_with_object(int x, bool gold, int move_timer) {
  AsterixSetup setup;
  setup.lanes[4] = {true, x, false, gold};
  setup.move_timer = move_timer;
  return setup;
}

}  // namespace

TEST_CASE("Asterix gold moving onto the player gives reward 1 and disappears", "[envs][minatar]") {
  Rng rng(1);
  auto game = asterix_at(asterix_with_object(6, /*gold=*/true, /*move_timer=*/0));
  const auto outcome = game->step(MinAtarGame::kNoop, rng);
  CHECK(outcome.reward == 1.0f);
  CHECK_FALSE(outcome.terminal);
  CHECK(observe(*game).count(Asterix::kGold) == 0);
}

TEST_CASE("The Asterix player walking onto gold collects it", "[envs][minatar]") {
  Rng rng(1);
  auto game = asterix_at(asterix_with_object(6, /*gold=*/true, /*move_timer=*/3));
  CHECK(observe(*game).at(6, 5, Asterix::kGold));
  CHECK(observe(*game).at(7, 5, Asterix::kTrail));  // behind a left-moving object
  CHECK(game->step(MinAtarGame::kRight, rng).reward == 1.0f);
  CHECK(observe(*game).at(6, 5, Asterix::kPlayer));
}

TEST_CASE("An Asterix enemy reaching the player ends the episode", "[envs][minatar]") {
  Rng rng(1);
  auto moving_in = asterix_at(asterix_with_object(6, /*gold=*/false, /*move_timer=*/0));
  CHECK(moving_in->step(MinAtarGame::kNoop, rng).terminal);
  auto walking_in = asterix_at(asterix_with_object(6, /*gold=*/false, /*move_timer=*/3));
  CHECK(walking_in->step(MinAtarGame::kRight, rng).terminal);
  auto passing = asterix_at(asterix_with_object(6, /*gold=*/false, /*move_timer=*/3));
  CHECK_FALSE(passing->step(MinAtarGame::kUp, rng).terminal);
}

TEST_CASE("The Asterix player stays within rows 1 to 8", "[envs][minatar]") {
  Rng rng(1);
  auto game = asterix_at(AsterixSetup{});
  for (int i = 0; i < 6; ++i) game->step(MinAtarGame::kUp, rng);
  CHECK(observe(*game).at(5, 1, Asterix::kPlayer));
  for (int i = 0; i < 9; ++i) game->step(MinAtarGame::kDown, rng);
  CHECK(observe(*game).at(5, 8, Asterix::kPlayer));
}

TEST_CASE("Asterix spawns an object every 10 frames at a side edge", "[envs][minatar]") {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto game = make("asterix");
    Rng rng(seed);
    game->reset(rng);
    for (int i = 0; i < 10; ++i) game->step(MinAtarGame::kNoop, rng);
    Observation obs = observe(*game);
    CHECK(obs.count(Asterix::kEnemy) + obs.count(Asterix::kGold) == 0);
    game->step(MinAtarGame::kNoop, rng);  // frame 11 spawns, and its objects move that frame
    obs = observe(*game);
    REQUIRE(obs.count(Asterix::kEnemy) + obs.count(Asterix::kGold) == 1);
    int column = -1;
    for (int y = 1; y <= 8; ++y) {
      for (int x : {1, 8}) {
        if (obs.at(x, y, Asterix::kEnemy) || obs.at(x, y, Asterix::kGold)) column = x;
      }
    }
    CHECK((column == 1 || column == 8));
    for (int i = 0; i < 10; ++i) game->step(MinAtarGame::kNoop, rng);
    obs = observe(*game);
    CHECK(obs.count(Asterix::kEnemy) + obs.count(Asterix::kGold) == 2);
  }
}

TEST_CASE("Asterix ramps difficulty once its ramp timer has passed -1, only when ramping", "[envs][minatar]") {
  Rng rng(1);
  AsterixSetup setup;
  setup.ramp_timer = 0;
  setup.ramp_level = 1;
  auto game = asterix_at(setup);
  game->step(MinAtarGame::kNoop, rng);
  CHECK(game->difficulty_level() == 1);  // the timer reaches -1
  game->step(MinAtarGame::kNoop, rng);
  CHECK(game->difficulty_level() == 2);
  const std::vector<double> state = game->exact_state();
  CHECK(state[36] == 9);    // spawn interval: one less each ramp
  CHECK(state[38] == 4);    // move interval: one less on ramps from an odd level
  CHECK(state[40] == 100);  // the ramp timer starts over

  auto steady = asterix_at(setup, MinAtarOptions{0.0, /*difficulty_ramping=*/false});
  for (int i = 0; i < 3; ++i) steady->step(MinAtarGame::kNoop, rng);
  CHECK(steady->difficulty_level() == 1);
  CHECK(steady->exact_state()[36] == 10);
}

// ---------------------------------------------------------------------------------------------
// Freeway

namespace {

using rlx::Freeway;

std::unique_ptr<MinAtarGame> freeway_at(const FreewaySetup& setup) {
  auto game = make("freeway");
  game->restore_exact_state(freeway_state(setup));
  return game;
}

}  // namespace

TEST_CASE("Freeway's chicken reaching the top scores 1, goes back down and new speeds are drawn", "[envs][minatar]") {
  Rng rng(1);
  FreewaySetup setup;
  setup.chicken_y = 1;
  auto game = freeway_at(setup);
  CHECK(observe(*game).count(Freeway::kSpeed5) == 8);
  const auto outcome = game->step(MinAtarGame::kUp, rng);
  CHECK(outcome.reward == 1.0f);
  CHECK_FALSE(outcome.terminal);
  const Observation obs = observe(*game);
  CHECK(obs.at(Freeway::kChickenColumn, 9, Freeway::kChicken));
  CHECK(obs.count(Freeway::kSpeed5) < 8);
  CHECK(obs.count(Freeway::kCar) == 8);
}

TEST_CASE("A Freeway car hitting the chicken sends it back to the bottom without reward", "[envs][minatar]") {
  Rng rng(1);
  FreewaySetup setup;
  setup.chicken_y = 3;
  setup.cooldown = 2;
  setup.cars[2] = {3, 0, +1};  // row 3, about to move into column 4
  auto game = freeway_at(setup);
  const auto outcome = game->step(MinAtarGame::kNoop, rng);
  CHECK(outcome.reward == 0.0f);
  CHECK(observe(*game).at(4, 9, Freeway::kChicken));
  CHECK(observe(*game).at(4, 3, Freeway::kCar));
}

TEST_CASE("Freeway's chicken moves at most once every 3 frames", "[envs][minatar]") {
  Rng rng(1);
  auto game = freeway_at(FreewaySetup{});
  std::vector<int> rows;
  for (int i = 0; i < 7; ++i) {
    game->step(MinAtarGame::kUp, rng);
    for (int y = 0; y < 10; ++y) {
      if (observe(*game).at(4, y, Freeway::kChicken)) rows.push_back(y);
    }
  }
  CHECK(rows == std::vector<int>{8, 8, 8, 7, 7, 7, 6});
}

TEST_CASE("Freeway's cars move every |speed| + 1 frames and wrap around", "[envs][minatar]") {
  Rng rng(1);
  FreewaySetup setup;
  setup.cars[0] = {9, 0, +2};
  setup.cars[1] = {0, 0, -1};
  auto game = freeway_at(setup);
  game->step(MinAtarGame::kNoop, rng);
  Observation obs = observe(*game);
  CHECK(obs.at(0, 1, Freeway::kCar));
  CHECK(obs.at(9, 1, Freeway::kSpeed1 + 1));  // the trail wraps too
  CHECK(obs.at(9, 2, Freeway::kCar));
  CHECK(obs.at(0, 2, Freeway::kSpeed1));
  game->step(MinAtarGame::kNoop, rng);
  game->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*game).at(0, 1, Freeway::kCar));
  CHECK(observe(*game).at(8, 2, Freeway::kCar));  // speed 1: every second frame
  game->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*game).at(1, 1, Freeway::kCar));
}

TEST_CASE("A Freeway episode lasts 2,501 frames", "[envs][minatar]") {
  auto game = make("freeway", MinAtarOptions{});
  Rng rng(3);
  game->reset(rng);
  int frames = 0;
  while (!game->step(static_cast<int>(rng.uniform_int(6)), rng).terminal) ++frames;
  CHECK(frames + 1 == 2501);
}
