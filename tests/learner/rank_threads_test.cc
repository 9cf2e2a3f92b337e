// run_rank_threads: every rank runs, and a rank's failure reaches the caller after all joined.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

#include "learner/rank_threads.h"

TEST_CASE("run_rank_threads runs every rank and rethrows the lowest failing rank's error", "[learner][dp]") {
  std::atomic<int> ran{0};
  rlx::run_rank_threads(4, [&](int rank) { ran += 1 << rank; });
  CHECK(ran == 0b1111);

  ran = 0;
  CHECK_THROWS_WITH(rlx::run_rank_threads(3,
                                          [&](int rank) {
                                            ran += 1;
                                            if (rank >= 1) throw std::runtime_error("rank " + std::to_string(rank) + " failed");
                                          }),
                    "rank 1 failed");
  CHECK(ran == 3);  // the other ranks still ran to the end
  CHECK_THROWS_AS(rlx::run_rank_threads(0, [](int) {}), std::invalid_argument);
}
