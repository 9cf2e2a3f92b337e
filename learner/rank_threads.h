// Data-parallel ranks as threads of one process (the learner benchmark and the tests): each
// rank runs on its own thread, and a failure on any rank reaches the caller.
#pragma once

#include <functional>

namespace rlx {

// Runs body(rank) for every rank in [0, world) on its own thread and joins them all; then
// rethrows the exception of the lowest rank that failed, if any.
void run_rank_threads(int world, const std::function<void(int rank)>& body);

}  // namespace rlx
