#include "envs/multi_agent/connect_four.h"

namespace rlx {

MultiAgentEnvSpec ConnectFourEnv::default_spec() {
  MultiAgentEnvSpec spec;
  spec.id = "ConnectFour-v0";
  for (const char* id : {"player_0", "player_1"}) {
    spec.agents.push_back(AgentSpec{id, Space::box({2 * ConnectFourBoard::kCells}, 0.0f, 1.0f),
                                    Space::discrete(ConnectFourBoard::kColumns), true});
  }
  return spec;
}

ConnectFourEnv::ConnectFourEnv() : MultiAgentEnv(default_spec()) {}

void ConnectFourEnv::write_view(const ConnectFourBoard& board, int player, float* floats) {
  for (int r = 0; r < ConnectFourBoard::kRows; ++r) {
    for (int c = 0; c < ConnectFourBoard::kColumns; ++c) {
      const int piece = board.at(r, c);
      const int cell = r * ConnectFourBoard::kColumns + c;
      floats[cell] = piece == player + 1 ? 1.0f : 0.0f;
      floats[ConnectFourBoard::kCells + cell] = piece != 0 && piece != player + 1 ? 1.0f : 0.0f;
    }
  }
}

ConnectFourBoard ConnectFourEnv::read_view(const float* floats) {
  ConnectFourBoard board;
  for (int r = 0; r < ConnectFourBoard::kRows; ++r) {
    for (int c = 0; c < ConnectFourBoard::kColumns; ++c) {
      const int cell = r * ConnectFourBoard::kColumns + c;
      if (floats[cell] > 0.5f) board.set(r, c, 1);
      if (floats[ConnectFourBoard::kCells + cell] > 0.5f) board.set(r, c, 2);
    }
  }
  return board;
}

void ConnectFourEnv::observe(int player, MultiAgentOutput& out) const {
  ObsSpan obs = out.observe(player);
  write_view(board_, player, obs.data());
  for (int c = 0; c < ConnectFourBoard::kColumns; ++c) obs.action_mask()[c] = board_.legal(c) ? 1 : 0;
}

void ConnectFourEnv::reset_episode(Rng&, MultiAgentOutput& out) {
  board_ = ConnectFourBoard();
  observe(0, out);
}

void ConnectFourEnv::step_episode(const std::vector<AgentAction>& actions, MultiAgentOutput& out) {
  const int mover = actions.front().agent;
  const int other = 1 - mover;
  const auto column = static_cast<int>(actions.front().action.index);
  const auto end = [&](double mover_reward) {
    out.add_reward(mover, mover_reward);
    out.add_reward(other, -mover_reward);
    out.terminate(mover);
    out.terminate(other);
  };
  if (!board_.legal(column)) return end(-1.0);  // a masked move: the mover loses
  const int row = board_.drop(column, mover + 1);
  if (board_.wins_at(row, column)) return end(1.0);
  if (board_.full()) return end(0.0);
  observe(other, out);
}

}  // namespace rlx
