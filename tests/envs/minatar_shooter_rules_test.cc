// MinAtar rules, part 2: Seaquest and SpaceInvaders, each rule shown from a hand-built state
// (minatar_test_util.h builds exact states; part 1 is minatar_rules_test.cc).
#include <catch2/catch.hpp>

#include <vector>

#include "envs/minatar/seaquest.h"
#include "envs/minatar/space_invaders.h"
#include "tests/envs/minatar_test_util.h"

using namespace minatar_test;

// ---------------------------------------------------------------------------------------------
// Seaquest

namespace {

using rlx::Seaquest;
using Mover = SeaquestSetup::Mover;

std::unique_ptr<MinAtarGame> seaquest_at(const SeaquestSetup& setup, MinAtarOptions options = kNoSticky) {
  auto game = make("seaquest", options);
  game->restore_exact_state(seaquest_state(setup));
  return game;
}

// exact_state() fields of Seaquest (after the base's two).
constexpr size_t kOxygenField = 5;
constexpr size_t kDiversAboardField = 6;
constexpr size_t kEnemySpawnIntervalField = 9;
constexpr size_t kMoveIntervalField = 12;

}  // namespace

TEST_CASE("Seaquest's sub shows its back behind its front and turns with left and right", "[envs][minatar]") {
  auto game = make("seaquest");
  Rng rng(1);
  game->reset(rng);
  Observation obs = observe(*game);
  CHECK((obs.at(5, 0, Seaquest::kSubFront) && obs.at(6, 0, Seaquest::kSubBack)));
  CHECK(obs.count(Seaquest::kOxygenGauge) == 10);
  CHECK(obs.count(Seaquest::kDiverGauge) == 0);
  game->step(MinAtarGame::kRight, rng);
  obs = observe(*game);
  CHECK((obs.at(6, 0, Seaquest::kSubFront) && obs.at(5, 0, Seaquest::kSubBack)));
}

TEST_CASE("A Seaquest bullet destroys the fish it reaches for reward 1", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.facing_right = true;
  setup.fish = {Mover{7, 4, false, 3}};
  auto game = seaquest_at(setup);
  CHECK(game->step(MinAtarGame::kFire, rng).reward == 0.0f);
  CHECK(observe(*game).at(6, 4, Seaquest::kFriendlyBullet));  // it moves on the frame it is fired
  CHECK(game->step(MinAtarGame::kFire, rng).reward == 1.0f);  // reloading: no second bullet
  const Observation obs = observe(*game);
  CHECK(obs.count(Seaquest::kEnemyFish) == 0);
  CHECK(obs.count(Seaquest::kFriendlyBullet) == 0);
}

TEST_CASE("A Seaquest enemy sub moving into a bullet is destroyed for reward 1", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.sub_x = 2;
  setup.facing_right = true;
  setup.subs = {Mover{5, 4, false, 0, 5}};
  setup.bullets = {Mover{3, 4, true}};
  auto game = seaquest_at(setup);
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 1.0f);  // bullet to 4, the sub onto it
  CHECK(observe(*game).count(Seaquest::kEnemySub) == 0);
}

TEST_CASE("Touching a Seaquest fish ends the episode", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.fish = {Mover{6, 4, false, 0}};
  CHECK(seaquest_at(setup)->step(MinAtarGame::kNoop, rng).terminal);
  setup.fish = {Mover{6, 4, false, 3}};
  CHECK(seaquest_at(setup)->step(MinAtarGame::kRight, rng).terminal);
  CHECK_FALSE(seaquest_at(setup)->step(MinAtarGame::kDown, rng).terminal);
}

TEST_CASE("A Seaquest enemy sub fires a bullet every 11 frames and the bullet kills", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.subs = {Mover{1, 4, true, 5, 0}};
  auto game = seaquest_at(setup);
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK(observe(*game).at(2, 4, Seaquest::kEnemyBullet));
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK(observe(*game).at(4, 4, Seaquest::kEnemyBullet));
  CHECK(game->step(MinAtarGame::kNoop, rng).terminal);
}

TEST_CASE("Seaquest ends when the oxygen runs out below the surface", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.oxygen = 1;
  auto game = seaquest_at(setup);
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK(observe(*game).count(Seaquest::kOxygenGauge) == 0);
  CHECK(game->step(MinAtarGame::kNoop, rng).terminal);
  setup.oxygen = 40;  // 40 of 200: 2 of the gauge's 10 cells
  CHECK(observe(*seaquest_at(setup)).count(Seaquest::kOxygenGauge) == 2);
}

TEST_CASE("Surfacing in Seaquest with no diver aboard ends the episode", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.sub_y = 1;
  CHECK(seaquest_at(setup)->step(MinAtarGame::kUp, rng).terminal);
}

TEST_CASE("Surfacing in Seaquest with divers refills the oxygen, uses one diver and ramps", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.sub_y = 1;
  setup.oxygen = 50;
  setup.divers_aboard = 2;
  auto game = seaquest_at(setup);
  const auto outcome = game->step(MinAtarGame::kUp, rng);
  CHECK_FALSE(outcome.terminal);
  CHECK(outcome.reward == 0.0f);
  const Observation obs = observe(*game);
  CHECK(obs.count(Seaquest::kOxygenGauge) == 10);
  CHECK(obs.count(Seaquest::kDiverGauge) == 1);
  CHECK(obs.at(8, 9, Seaquest::kDiverGauge));
  CHECK(game->difficulty_level() == 1);
  CHECK(game->exact_state()[kEnemySpawnIntervalField] == 19);
  CHECK(game->exact_state()[kMoveIntervalField] == 5);  // enemies speed up on ramps from odd levels
  CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);  // staying up is not surfacing again

  auto steady = seaquest_at(setup, MinAtarOptions{0.0, /*difficulty_ramping=*/false});
  steady->step(MinAtarGame::kUp, rng);
  CHECK(steady->difficulty_level() == 0);
}

TEST_CASE("Surfacing in Seaquest with six divers pays one point per oxygen cell left", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.sub_y = 1;
  setup.oxygen = 101;
  setup.divers_aboard = 6;
  auto game = seaquest_at(setup);
  CHECK(observe(*game).count(Seaquest::kDiverGauge) == 6);
  const auto outcome = game->step(MinAtarGame::kUp, rng);
  CHECK(outcome.reward == 5.0f);  // 101 * 10 / 200
  CHECK(observe(*game).count(Seaquest::kDiverGauge) == 0);
  CHECK(game->exact_state()[kOxygenField] == 200);
  // The reference's count goes to -1 here, so the next surfacing, with nobody aboard, goes on.
  CHECK(game->exact_state()[kDiversAboardField] == -1);
  game->step(MinAtarGame::kDown, rng);
  CHECK_FALSE(game->step(MinAtarGame::kUp, rng).terminal);
}

TEST_CASE("A Seaquest diver meeting the sub comes aboard, up to six", "[envs][minatar]") {
  Rng rng(1);
  SeaquestSetup setup;
  setup.divers = {Mover{6, 4, false, 0}};
  auto game = seaquest_at(setup);
  CHECK(observe(*game).at(6, 4, Seaquest::kDiver));
  game->step(MinAtarGame::kNoop, rng);
  const Observation obs = observe(*game);
  CHECK(obs.count(Seaquest::kDiver) == 0);
  CHECK(obs.count(Seaquest::kDiverGauge) == 1);

  setup.divers_aboard = 6;
  auto full = seaquest_at(setup);
  full->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*full).at(5, 4, Seaquest::kDiver));  // swims on through the sub
}

TEST_CASE("Seaquest spawns enemies and divers at a side edge of rows 1 to 8", "[envs][minatar]") {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto game = make("seaquest");
    Rng rng(seed);
    game->reset(rng);
    for (int i = 0; i < 31; ++i) game->step(MinAtarGame::kNoop, rng);  // frames 21 and 31 spawn
    const Observation obs = observe(*game);
    CHECK(obs.count(Seaquest::kDiver) == 1);
    CHECK(obs.count(Seaquest::kEnemyFish) + obs.count(Seaquest::kEnemySub) == 1);
    for (int x = 0; x < 10; ++x) {
      CHECK_FALSE((obs.at(x, 0, Seaquest::kDiver) || obs.at(x, 0, Seaquest::kEnemyFish)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// SpaceInvaders

namespace {

using rlx::SpaceInvaders;

std::unique_ptr<MinAtarGame> invaders_at(const InvadersSetup& setup, MinAtarOptions options = kNoSticky) {
  auto game = make("space_invaders", options);
  game->restore_exact_state(invaders_state(setup));
  return game;
}

constexpr size_t kMoveIntervalFieldSI = 35;  // exact_state(): alien_move_interval

}  // namespace

TEST_CASE("SpaceInvaders starts with a 4x6 block of aliens marching left", "[envs][minatar]") {
  auto game = make("space_invaders");
  Rng rng(1);
  game->reset(rng);
  const Observation obs = observe(*game);
  CHECK(obs.count(SpaceInvaders::kAlien) == 24);
  CHECK(obs.count(SpaceInvaders::kAlienLeft) == 24);
  CHECK(obs.count(SpaceInvaders::kAlienRight) == 0);
  CHECK((obs.at(2, 0, SpaceInvaders::kAlien) && obs.at(7, 3, SpaceInvaders::kAlien)));
  CHECK(obs.at(5, 9, SpaceInvaders::kCannon));
}

TEST_CASE("A SpaceInvaders shot rises a row a frame and destroys the alien it meets", "[envs][minatar]") {
  auto game = make("space_invaders");
  Rng rng(1);
  game->reset(rng);
  CHECK(game->step(MinAtarGame::kFire, rng).reward == 0.0f);
  CHECK(observe(*game).at(5, 8, SpaceInvaders::kFriendlyBullet));
  for (int row = 7; row >= 4; --row) {
    CHECK(game->step(MinAtarGame::kFire, rng).reward == 0.0f);  // reloading for 5 frames
    CHECK(observe(*game).at(5, row, SpaceInvaders::kFriendlyBullet));
  }
  CHECK(game->step(MinAtarGame::kNoop, rng).reward == 1.0f);
  const Observation obs = observe(*game);
  CHECK(obs.count(SpaceInvaders::kAlien) == 23);
  CHECK_FALSE(obs.at(5, 3, SpaceInvaders::kAlien));
  CHECK(obs.count(SpaceInvaders::kFriendlyBullet) == 0);
}

TEST_CASE("SpaceInvaders aliens march sideways, then turn and step down at an edge", "[envs][minatar]") {
  Rng rng(1);
  InvadersSetup setup;
  setup.cannon_x = 9;
  setup.aliens[2] = bit(1) | bit(2);
  setup.move_timer = 0;
  auto game = invaders_at(setup);
  game->step(MinAtarGame::kNoop, rng);
  CHECK((observe(*game).at(0, 2, SpaceInvaders::kAlien) && observe(*game).at(1, 2, SpaceInvaders::kAlien)));
  game->step(MinAtarGame::kNoop, rng);  // two aliens: they march every second frame
  CHECK(observe(*game).at(0, 2, SpaceInvaders::kAlien));
  game->step(MinAtarGame::kNoop, rng);
  Observation obs = observe(*game);
  CHECK((obs.at(0, 3, SpaceInvaders::kAlien) && obs.at(1, 3, SpaceInvaders::kAlien)));
  CHECK(obs.count(SpaceInvaders::kAlienRight) == 2);
  game->step(MinAtarGame::kNoop, rng);
  game->step(MinAtarGame::kNoop, rng);
  CHECK((observe(*game).at(1, 3, SpaceInvaders::kAlien) && observe(*game).at(2, 3, SpaceInvaders::kAlien)));
}

TEST_CASE("SpaceInvaders' last alien marches every frame", "[envs][minatar]") {
  Rng rng(1);
  InvadersSetup setup;
  setup.aliens[2] = bit(5);
  setup.move_timer = 0;
  auto game = invaders_at(setup);
  for (int x = 4; x >= 2; --x) {
    game->step(MinAtarGame::kNoop, rng);
    CHECK(observe(*game).at(x, 2, SpaceInvaders::kAlien));
  }
}

TEST_CASE("SpaceInvaders' alien nearest the cannon fires from the bottom of its column", "[envs][minatar]") {
  auto game = make("space_invaders");
  Rng rng(1);
  game->reset(rng);
  for (int i = 0; i < 11; ++i) game->step(MinAtarGame::kNoop, rng);
  CHECK(observe(*game).at(5, 3, SpaceInvaders::kEnemyBullet));
  for (int i = 0; i < 5; ++i) CHECK_FALSE(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK(observe(*game).at(5, 8, SpaceInvaders::kEnemyBullet));
  CHECK(game->step(MinAtarGame::kNoop, rng).terminal);  // it reaches the cannon

  InvadersSetup tie;  // columns 3 and 7 are equally near the cannon at 5: the left one fires
  tie.aliens[1] = bit(3) | bit(7);
  tie.aliens[0] = bit(3);
  tie.shot_timer = 0;
  auto tied = invaders_at(tie);
  tied->step(MinAtarGame::kNoop, rng);
  const Observation obs = observe(*tied);
  CHECK(obs.count(SpaceInvaders::kEnemyBullet) == 1);
  CHECK(obs.at(3, 1, SpaceInvaders::kEnemyBullet));
}

TEST_CASE("An alien stepping down onto SpaceInvaders' cannon ends the episode", "[envs][minatar]") {
  Rng rng(1);
  InvadersSetup setup;
  setup.cannon_x = 0;
  setup.aliens[8] = bit(0);
  setup.move_timer = 0;
  auto game = invaders_at(setup);
  CHECK(game->step(MinAtarGame::kNoop, rng).terminal);
  CHECK(observe(*game).at(0, 9, SpaceInvaders::kAlien));
}

TEST_CASE("Clearing a SpaceInvaders wave brings a new one, marching faster when ramping", "[envs][minatar]") {
  Rng rng(1);
  InvadersSetup setup;
  setup.aliens[3] = bit(4);
  setup.bullets[4] = bit(4);
  setup.move_timer = 5;
  auto game = invaders_at(setup);
  const auto outcome = game->step(MinAtarGame::kNoop, rng);
  CHECK(outcome.reward == 1.0f);
  CHECK_FALSE(outcome.terminal);
  CHECK(observe(*game).count(SpaceInvaders::kAlien) == 24);
  CHECK(game->difficulty_level() == 1);
  CHECK(game->exact_state()[kMoveIntervalFieldSI] == 11);

  auto steady = invaders_at(setup, MinAtarOptions{0.0, /*difficulty_ramping=*/false});
  steady->step(MinAtarGame::kNoop, rng);
  CHECK(steady->difficulty_level() == 0);
  CHECK(steady->exact_state()[kMoveIntervalFieldSI] == 12);
}
