#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "core/config_error.h"
#include "envs/multi_agent/connect_four.h"
#include "rollout/scripted_policy.h"

namespace {

rlx::EnvSpec board_spec() { return rlx::ConnectFourEnv::default_spec().agent_env_spec(0); }

// The action `policy` takes on the board (seen by player 1) with the given legal columns.
int64_t choose(rlx::RolloutPolicy& policy, const rlx::ConnectFourBoard& board) {
  std::vector<float> floats(2 * rlx::ConnectFourBoard::kCells);
  rlx::ConnectFourEnv::write_view(board, 0, floats.data());
  std::vector<uint8_t> mask(7);
  for (int c = 0; c < 7; ++c) mask[static_cast<size_t>(c)] = board.legal(c) ? 1 : 0;
  int64_t action = -1;
  rlx::ActOutput out;
  out.action_indices = &action;
  policy.act(rlx::ObsBatch(floats.data(), mask.data()), 1, out);
  return action;
}

}  // namespace

TEST_CASE("The scripted random player picks only legal actions, all of them", "[rollout][multi_agent]") {
  auto random = rlx::make_scripted_policy("random", board_spec(), 3);
  CHECK(random->num_parameters() == 0);
  CHECK_FALSE(random->has_policy_outputs());
  rlx::ConnectFourBoard board;
  for (int i = 0; i < 6; ++i) board.drop(5, 1 + i % 2);  // column 5 full
  std::set<int64_t> seen;
  for (int i = 0; i < 300; ++i) seen.insert(choose(*random, board));
  CHECK(seen == std::set<int64_t>{0, 1, 2, 3, 4, 6});
}

TEST_CASE("The lookahead player wins when it can and blocks when it must", "[rollout][multi_agent]") {
  auto lookahead = rlx::make_scripted_policy("connect_four_lookahead", board_spec(), 3);
  rlx::ConnectFourBoard threat;  // the opponent (2) has three in column 6
  for (int i = 0; i < 3; ++i) threat.drop(6, 2);
  threat.drop(0, 1);
  for (int i = 0; i < 20; ++i) CHECK(choose(*lookahead, threat) == 6);
  rlx::ConnectFourBoard both = threat;  // and it has three in a row at the bottom: winning beats blocking
  both.drop(1, 1);
  both.drop(2, 1);
  for (int i = 0; i < 20; ++i) CHECK(choose(*lookahead, both) == 3);
}

TEST_CASE("A scripted rule that is unknown or does not suit the spaces is refused by name", "[rollout][multi_agent]") {
  CHECK_THROWS_WITH(rlx::make_scripted_policy("minimax", board_spec(), 0),
                    Catch::Contains("unknown scripted policy 'minimax'") && Catch::Contains("random, connect_four_lookahead"));
  rlx::EnvSpec box = board_spec();
  box.action_space = rlx::Space::box({2}, -1.0f, 1.0f);
  CHECK_THROWS_AS(rlx::make_scripted_policy("random", box, 0), rlx::ConfigError);
  rlx::EnvSpec other = board_spec();
  other.action_space = rlx::Space::discrete(5);
  CHECK_THROWS_WITH(rlx::make_scripted_policy("connect_four_lookahead", other, 0),
                    Catch::Contains("plays ConnectFour-v0's agents"));
}
