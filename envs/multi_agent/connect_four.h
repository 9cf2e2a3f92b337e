// ConnectFour-v0: two players, "player_0" (who starts) and "player_1", take turns dropping a piece
// into one of 7 columns of a 6 x 7 board; four in a row wins (PettingZoo's connect_four_v3).
// A player sees the board from its own side: 84 floats, its pieces (6 x 7, row 0 at the top) then
// its opponent's; its action mask marks the columns that are not full. The winner earns +1 and the
// loser -1 (a draw: 0 each), both terminated; a masked (illegal) move loses at once.
#pragma once

#include <memory>
#include <vector>

#include "envs/multi_agent/connect_four_board.h"
#include "envs/multi_agent/multi_agent_env.h"

namespace rlx {

class ConnectFourEnv final : public MultiAgentEnv {
 public:
  ConnectFourEnv();
  // The registered spec: two agents, Box(0, 1, (84,)) observations with a mask, Discrete(7).
  static MultiAgentEnvSpec default_spec();
  // The board as the player (0 or 1) sees it: floats [84] (its pieces, then its opponent's).
  static void write_view(const ConnectFourBoard& board, int player, float* floats);
  // The board a view of write_view describes, from the viewer's side: it is player 1, its opponent 2.
  static ConnectFourBoard read_view(const float* floats);

 protected:
  void reset_episode(Rng& rng, MultiAgentOutput& out) override;
  void step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) override;

 private:
  void observe(int player, MultiAgentOutput& out) const;

  ConnectFourBoard board_;
};

}  // namespace rlx
