#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "rollout/worker_pool.h"

namespace {

std::vector<std::string> sleeper(int) { return {"/bin/sleep", "30"}; }

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// Polls until no pid in the list is alive (a zombie of ours counts as dead after waitpid).
bool wait_all_dead(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (pid_t p : pids) any = any || alive(p);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("WorkerPool restarts dead workers within its budget and stops the rest", "[rollout][pool]") {
  rlx::WorkerPool pool({3, 1, std::chrono::milliseconds(500)}, sleeper);
  REQUIRE(pool.num_running() == 3);
  const pid_t first = pool.pid(0);
  ::kill(first, SIGKILL);
  int died = 0;
  for (int i = 0; i < 200 && died == 0; ++i) {
    died = pool.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(died == 1);
  CHECK(pool.restarts() == 1);
  CHECK(pool.num_running() == 3);
  CHECK(pool.pid(0) != first);

  ::kill(pool.pid(1), SIGKILL);  // the budget of 1 restart is spent
  died = 0;
  for (int i = 0; i < 200 && died == 0; ++i) {
    died = pool.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(pool.deaths() == 2);
  CHECK(pool.restarts() == 1);
  CHECK(pool.num_running() == 2);
  const std::vector<pid_t> remaining = {pool.pid(0), pool.pid(2)};
  pool.stop();
  CHECK(pool.num_running() == 0);
  for (pid_t p : remaining) CHECK_FALSE(alive(p));
}

TEST_CASE("WorkerPool children die with a SIGKILLed parent", "[rollout][pool]") {
  int channel[2];
  REQUIRE(::pipe(channel) == 0);
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    ::close(channel[0]);
    rlx::WorkerPool pool({2, 0, std::chrono::milliseconds(500)}, sleeper);
    const pid_t pids[2] = {pool.pid(0), pool.pid(1)};
    if (::write(channel[1], pids, sizeof(pids)) != sizeof(pids)) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(channel[1]);
  pid_t pids[2] = {0, 0};
  REQUIRE(::read(channel[0], pids, sizeof(pids)) == sizeof(pids));
  ::close(channel[0]);
  CHECK(alive(pids[0]));
  CHECK(alive(pids[1]));
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  // The workers are reparented (to init or a subreaper) and killed by PR_SET_PDEATHSIG.
  CHECK(wait_all_dead({pids[0], pids[1]}, std::chrono::milliseconds(3000)));
}
