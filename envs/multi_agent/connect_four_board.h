// ConnectFourBoard: the game of connect four (6 rows, 7 columns, four in a row wins) for the
// ConnectFour-v0 env and its scripted players. Header only.
#pragma once

#include <array>
#include <cstdint>

namespace rlx {

class ConnectFourBoard {
 public:
  static constexpr int kRows = 6;
  static constexpr int kColumns = 7;
  static constexpr int kCells = kRows * kColumns;

  // An empty board.
  ConnectFourBoard() { cells_.fill(0); }

  // The piece at (row, column), row 0 at the top: 0 empty, else the player (1 or 2).
  int at(int row, int column) const { return cells_[static_cast<size_t>(row * kColumns + column)]; }
  void set(int row, int column, int player) { cells_[static_cast<size_t>(row * kColumns + column)] = static_cast<int8_t>(player); }
  // True when a piece can still go into the column.
  bool legal(int column) const { return column >= 0 && column < kColumns && at(0, column) == 0; }
  // True when no column takes a piece.
  bool full() const {
    for (int c = 0; c < kColumns; ++c) {
      if (legal(c)) return false;
    }
    return true;
  }
  // Drops the player's piece into a legal column; returns the row it lands in.
  int drop(int column, int player) {
    int row = kRows - 1;
    while (at(row, column) != 0) --row;
    set(row, column, player);
    return row;
  }
  // True when the piece at (row, column) is part of four in a row of its player (false for an empty cell).
  bool wins_at(int row, int column) const {
    const int player = at(row, column);
    if (player == 0) return false;
    constexpr int kDirections[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (const auto& d : kDirections) {
      int run = 1;
      for (int sign : {1, -1}) {
        int r = row + sign * d[0], c = column + sign * d[1];
        while (r >= 0 && r < kRows && c >= 0 && c < kColumns && at(r, c) == player) {
          ++run;
          r += sign * d[0];
          c += sign * d[1];
        }
      }
      if (run >= 4) return true;
    }
    return false;
  }
  // True when dropping the player's piece into the legal column would win at once.
  bool winning_move(int column, int player) const {
    ConnectFourBoard after = *this;
    const int row = after.drop(column, player);
    return after.wins_at(row, column);
  }

 private:
  std::array<int8_t, kCells> cells_;
};

}  // namespace rlx
