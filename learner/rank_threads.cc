#include "learner/rank_threads.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rlx {

void run_rank_threads(int world, const std::function<void(int rank)>& body) {
  if (world < 1) throw std::invalid_argument("run_rank_threads needs world >= 1, got " + std::to_string(world));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(world));
  for (int rank = 0; rank < world; ++rank) {
    threads.emplace_back([&body, &errors, rank] {
      try {
        body(rank);
      } catch (...) {  // handed to the caller below, after every rank has finished
        errors[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace rlx
