#include <catch2/catch.hpp>

#include <vector>

#include "envs/multi_agent/connect_four.h"
#include "envs/registry.h"

using rlx::AgentAction;
using rlx::ConnectFourBoard;
using rlx::ConnectFourEnv;

namespace {

// Plays the columns in turn from a reset (player_0 first); stops early when the game ends.
void play(rlx::MultiAgentEnv& env, const std::vector<int>& columns) {
  env.reset(0);
  for (int column : columns) {
    if (env.episode_done()) break;
    AgentAction move;
    move.agent = env.acting().front();
    move.action.index = column;
    env.step({move});
  }
}

// The observation floats of the player to move.
std::vector<float> view_of(rlx::MultiAgentEnv& env, int player) {
  const rlx::ObsRow row = env.observation(player);
  return std::vector<float>(row.floats, row.floats + 2 * ConnectFourBoard::kCells);
}

}  // namespace

TEST_CASE("ConnectFour-v0: turns, views from each side, the mask, and four in a row", "[envs][multi_agent]") {
  const auto spec = rlx::global_env_registry().multi_agent_spec("ConnectFour-v0");
  REQUIRE(spec.agents.size() == 2);
  CHECK(spec.agents[0].action_mask);
  auto env = rlx::global_env_registry().make_multi_agent("ConnectFour-v0");
  env->reset(0);
  CHECK(env->acting() == std::vector<int>{0});

  play(*env, {3, 4});  // player_0 in column 3, player_1 in column 4: player_0 to move
  REQUIRE(env->acting() == std::vector<int>{0});
  const std::vector<float> mine = view_of(*env, 0);
  const int bottom = (ConnectFourBoard::kRows - 1) * ConnectFourBoard::kColumns;
  CHECK(mine[bottom + 3] == 1.0f);                              // its own piece
  CHECK(mine[ConnectFourBoard::kCells + bottom + 4] == 1.0f);   // the opponent's
  const ConnectFourBoard board = ConnectFourEnv::read_view(mine.data());
  CHECK(board.at(ConnectFourBoard::kRows - 1, 3) == 1);
  CHECK(board.at(ConnectFourBoard::kRows - 1, 4) == 2);

  SECTION("a vertical four wins: +1 and -1, both terminated") {
    play(*env, {0, 1, 0, 1, 0, 1, 0});
    CHECK(env->episode_done());
    CHECK(env->outcome(0).reward == 1.0);
    CHECK(env->outcome(1).reward == -1.0);
    CHECK(env->outcome(0).terminated);
    CHECK(env->outcome(1).terminated);
  }
  SECTION("a diagonal four wins for player_1") {
    // player_1 builds 1-2-3-4 rising from column 1; player_0 fills under it.
    play(*env, {1, 2, 2, 3, 3, 4, 3, 4, 4, 1, 4, 6, 6, 5, 5, 5, 5, 6});
    CHECK(env->episode_done());
    const double p0 = env->outcome(0).reward, p1 = env->outcome(1).reward;
    CHECK(p0 == -p1);
    CHECK(std::abs(p0) == 1.0);
  }
  SECTION("a full column is masked, and playing it anyway loses") {
    play(*env, {2, 2, 2, 2, 2, 2});
    const rlx::ObsRow row = env->observation(env->acting().front());
    const uint8_t* mask = row.bytes;
    CHECK(mask[2] == 0);
    CHECK(mask[3] == 1);
    const int mover = env->acting().front();
    AgentAction illegal;
    illegal.agent = mover;
    illegal.action.index = 2;
    env->step({illegal});
    CHECK(env->episode_done());
    CHECK(env->outcome(mover).reward == -1.0);
    CHECK(env->outcome(1 - mover).reward == 1.0);
  }
}

TEST_CASE("ConnectFourBoard finds four in a row in every direction, and winning moves", "[envs][multi_agent]") {
  ConnectFourBoard board;
  for (int c = 0; c < 3; ++c) board.drop(c, 1);
  CHECK(board.winning_move(3, 1));
  CHECK_FALSE(board.winning_move(3, 2));
  CHECK_FALSE(board.winning_move(4, 1));
  const int row = board.drop(3, 1);
  CHECK(board.wins_at(row, 3));
  ConnectFourBoard diagonal;  // player 2 on a falling diagonal from (2, 0) to (5, 3)
  diagonal.set(2, 0, 2);
  diagonal.set(3, 1, 2);
  diagonal.set(4, 2, 2);
  diagonal.set(5, 3, 2);
  CHECK(diagonal.wins_at(4, 2));
  CHECK_FALSE(diagonal.wins_at(0, 6));
}
