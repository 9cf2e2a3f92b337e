#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
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
  rlx::WorkerPool pool({3, 1, std::chrono::milliseconds(500), {}}, sleeper);
  REQUIRE(pool.num_running() == 3);
  const pid_t first = pool.pid(0);
  ::kill(first, SIGKILL);
  std::vector<rlx::WorkerExitReport> reports;
  for (int i = 0; i < 200 && reports.empty(); ++i) {
    reports = pool.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].worker_index == 0);
  CHECK(reports[0].pid == first);
  CHECK(reports[0].exit.signaled);
  CHECK(reports[0].restarted);
  CHECK(reports[0].restarts_used == 1);
  CHECK(pool.restarts() == 1);
  CHECK(pool.num_running() == 3);
  CHECK(pool.pid(0) != first);

  ::kill(pool.pid(1), SIGKILL);  // the budget of 1 restart is spent
  reports.clear();
  for (int i = 0; i < 200 && reports.empty(); ++i) {
    reports = pool.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(reports.size() == 1);
  CHECK_FALSE(reports[0].restarted);
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
    rlx::WorkerPool pool({2, 0, std::chrono::milliseconds(500), {}}, sleeper);
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

TEST_CASE("WorkerPool writes each worker's output to its own log across restarts, and bad input is not restarted",
          "[rollout][pool]") {
  char pattern[] = "/tmp/rlx-pool-logs-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(pattern);
  // Worker 1 says who it is and crashes (status 1); worker 2 reports bad input (status 2).
  rlx::WorkerPool pool({2, 5, std::chrono::milliseconds(500), dir}, [](int i) {
    const std::string status = i == 0 ? "1" : "2";
    return std::vector<std::string>{"/bin/sh", "-c", "echo worker " + std::to_string(i + 1) + " here >&2; exit " + status};
  });
  std::vector<rlx::WorkerExitReport> reports;
  for (int i = 0; i < 300 && pool.restarts() < 2; ++i) {
    for (auto& report : pool.poll()) reports.push_back(report);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(pool.restarts() >= 2);
  bool bad_input_seen = false;
  for (const auto& report : reports) {
    if (report.worker_index == 1) {
      bad_input_seen = true;
      CHECK(report.exit.code == rlx::kWorkerExitBadInput);
      CHECK_FALSE(report.restarted);  // it would fail the same way again
    } else {
      CHECK(report.exit.code == 1);
    }
    CHECK(report.log == dir / ("worker_" + std::to_string(report.worker_index + 1) + ".log"));
    // What this start wrote, not the earlier starts' lines or the restart's banner.
    CHECK(report.last_lines == std::vector<std::string>{"worker " + std::to_string(report.worker_index + 1) + " here"});
  }
  CHECK(bad_input_seen);
  // The third start of worker 1 has written its line before the pool stops it.
  for (int i = 0; i < 300 && rlx::tail_lines(dir / "worker_1.log", 100).size() < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pool.stop();
  const std::vector<std::string> first = rlx::tail_lines(dir / "worker_1.log", 100);
  // One banner and one line per start, appended.
  REQUIRE(first.size() >= 6);
  CHECK_THAT(first[0], Catch::Contains("start 1 of worker 1"));
  CHECK(first[1] == "worker 1 here");
  CHECK_THAT(first[2], Catch::Contains("start 2 of worker 1"));
  CHECK(rlx::tail_lines(dir / "worker_2.log", 100) ==
        std::vector<std::string>{rlx::tail_lines(dir / "worker_2.log", 100).at(0), "worker 2 here"});
  CHECK(rlx::tail_lines(dir / "worker_1.log", 2).size() == 2);
  std::filesystem::remove_all(dir);
}

namespace {

// Starts processes on this host as the local launcher does, and keeps every spec it was given.
class RecordingLauncher : public rlx::ProcessLauncher {
 public:
  std::unique_ptr<rlx::LaunchedProcess> launch(const rlx::ProcessSpec& spec) override {
    specs.push_back(spec);
    return rlx::local_launcher().launch(spec);
  }
  std::vector<rlx::ProcessSpec> specs;
};

}  // namespace

TEST_CASE("WorkerPool starts and restarts its workers through the launcher it is given, with its environment",
          "[rollout][pool]") {
  char pattern[] = "/tmp/rlx-pool-launcher-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(pattern);
  RecordingLauncher launcher;
  rlx::WorkerPoolOptions options;
  options.num_workers = 2;
  options.max_restarts = 1;
  options.log_dir = dir;
  options.env = {{"RLX_TEST_WORKER_ENV", "from the pool"}};
  options.launcher = &launcher;
  rlx::WorkerPool pool(options, [](int i) {
    return std::vector<std::string>{"/bin/sh", "-c", "echo \"$RLX_TEST_WORKER_ENV\"; exit " + std::to_string(i == 0 ? 1 : 0)};
  });
  std::vector<rlx::WorkerExitReport> reports;
  for (int i = 0; i < 300 && reports.size() < 3; ++i) {
    for (auto& report : pool.poll()) reports.push_back(report);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pool.stop();
  REQUIRE(launcher.specs.size() == 3);  // two starts and worker 1's restart
  CHECK(launcher.specs[2].argv == launcher.specs[0].argv);
  CHECK(launcher.specs[1].log == dir / "worker_2.log");
  CHECK_THAT(launcher.specs[2].banner, Catch::Contains("start 2 of worker 1"));
  for (const auto& report : reports) CHECK(report.last_lines == std::vector<std::string>{"from the pool"});
  CHECK(std::getenv("RLX_TEST_WORKER_ENV") == nullptr);
  std::filesystem::remove_all(dir);
}
