// Stop signals: the first SIGTERM/SIGINT only asks for a stop; a second one, the watchdog or an
// abort ends the process by the signal after removing the registered secret files. The ending
// cases run in a forked child, so that its death is what the test looks at.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "core/config_error.h"
#include "core/guarded_temp_dir.h"
#include "core/stop_signal.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::RemoveOnSignal;
using rlx::StopSignals;

// Waits up to 5 s for `condition`; true when it came.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A directory holding a "secret" file, as the local workers' key directory does.
fs::path make_secret_dir(const fs::path& parent) {
  const fs::path dir = parent / "keys";
  fs::create_directories(dir);
  rlx::test::write_text(dir / "client.key", "secret");
  return dir;
}

// Runs `body` in a forked child after it has installed the stop signals (grace `grace_s`) and
// registered `secret_dir`; `signal_child` is then called in the parent with the child's pid.
// Returns the child's wait status.
int run_child(const fs::path& secret_dir, int grace_s, const std::function<void()>& body,
              const std::function<void(pid_t)>& signal_child) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    {
      const StopSignals signals(std::chrono::seconds(grace_s), "stopping the test child");
      const RemoveOnSignal removal(secret_dir);
      const char ok = 1;
      if (::write(ready[1], &ok, 1) != 1) ::_exit(90);
      body();
    }
    ::_exit(0);
  }
  ::close(ready[1]);
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  ::close(ready[0]);
  signal_child(pid);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

// The child died of `signo`, and the secret files went before it.
void check_died_of(int status, int signo, const fs::path& secret) {
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == signo);
  CHECK_FALSE(fs::exists(secret));
}

void sleep_s(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

}  // namespace

TEST_CASE("The first SIGTERM only asks for a stop, which the installed handlers report", "[core][stop]") {
  {
    const StopSignals signals(std::chrono::seconds(60), "testing");
    CHECK_FALSE(rlx::stop_requested());
    ::kill(::getpid(), SIGTERM);
    REQUIRE(eventually([] { return rlx::stop_requested(); }));
    CHECK(rlx::stop_signal() == SIGTERM);
    CHECK(std::string(rlx::stop_signal_name(rlx::stop_signal())) == "SIGTERM");
    CHECK_FALSE(rlx::stop_overdue());  // 30 s away
    CHECK_THROWS_AS(StopSignals(std::chrono::seconds(1), "twice"), std::logic_error);
  }
  CHECK_FALSE(rlx::stop_requested());  // uninstalled: the flag is gone with the handlers
}

TEST_CASE("A second SIGINT ends the process at once, by the signal, with the secret files removed", "[core][stop]") {
  rlx::test::TempDir tmp;
  const fs::path secret = make_secret_dir(tmp.path());
  const int status = run_child(secret, 60, [] { sleep_s(30); }, [](pid_t child) {
    ::kill(child, SIGINT);
    sleep_s(0.2);
    ::kill(child, SIGINT);
  });
  check_died_of(status, SIGINT, secret);
}

TEST_CASE("The watchdog ends a stop that outlasts the grace period, with the secret files removed", "[core][stop]") {
  rlx::test::TempDir tmp;
  const fs::path secret = make_secret_dir(tmp.path());
  const auto start = std::chrono::steady_clock::now();
  const int status = run_child(secret, 1, [] { sleep_s(30); }, [](pid_t child) { ::kill(child, SIGTERM); });
  check_died_of(status, SIGTERM, secret);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));  // not the child's 30 s sleep
}

TEST_CASE("An abort removes the secret files before the process dies of it", "[core][stop]") {
  rlx::test::TempDir tmp;
  const fs::path secret = make_secret_dir(tmp.path());
  const int status = run_child(secret, 60, [] { std::abort(); }, [](pid_t) {});
  check_died_of(status, SIGABRT, secret);
}

TEST_CASE("A stop signal forwarded by the supervisor never counts as the second one", "[core][stop]") {
  rlx::test::TempDir tmp;
  const fs::path secret = make_secret_dir(tmp.path());
  // This test process plays rlx tune: the child treats a repeat from it as the same stop.
  ::setenv(rlx::kStopSupervisorEnv, std::to_string(::getpid()).c_str(), 1);
  const int status = run_child(secret, 60, [] {
    while (!rlx::stop_requested()) sleep_s(0.01);
    sleep_s(0.5);  // the repeat arrives meanwhile
    ::_exit(7);    // still alive: the stop went its graceful way
  }, [](pid_t child) {
    ::kill(child, SIGTERM);
    sleep_s(0.1);
    ::kill(child, SIGTERM);
  });
  ::unsetenv(rlx::kStopSupervisorEnv);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  CHECK(fs::exists(secret));  // only the signal paths remove it; its owner would at a normal exit
}

TEST_CASE("RLX_STOP_GRACE_S sets the grace period, 60 s by default, and a bad value is named", "[core][stop]") {
  ::unsetenv(rlx::kStopGraceEnv);
  CHECK(rlx::stop_grace_from_env() == std::chrono::seconds(60));
  ::setenv(rlx::kStopGraceEnv, "5", 1);
  CHECK(rlx::stop_grace_from_env() == std::chrono::seconds(5));
  ::setenv(rlx::kStopGraceEnv, "soon", 1);
  CHECK_THAT(rlx::test::error_of<rlx::ConfigError>([] { rlx::stop_grace_from_env(); }),
             Catch::Contains("RLX_STOP_GRACE_S='soon'") && Catch::Contains("whole seconds >= 1"));
  ::unsetenv(rlx::kStopGraceEnv);
}

TEST_CASE("A GuardedTempDir goes with its object, and with an abort together with the files it guards", "[core][stop]") {
  rlx::test::TempDir tmp;
  fs::path kept;
  {
    rlx::GuardedTempDir dir("keys-", tmp.path());
    rlx::test::write_text(dir / "client.key", "secret");
    dir.guard_contents();
    kept = dir.path();
    CHECK((fs::status(kept).permissions() & fs::perms::all) == fs::perms::owner_all);
  }
  CHECK_FALSE(fs::exists(kept));
  // In a child that aborts (no destructor runs), the signal path removes the directory.
  const fs::path parent = tmp / "guarded";
  fs::create_directories(parent);
  const int status = run_child(
      make_secret_dir(tmp.path()), 60,
      [&] {
        rlx::GuardedTempDir dir("keys-", parent);
        rlx::test::write_text(dir / "client.key", "secret");
        dir.guard_contents();
        if (!fs::exists(dir / "client.key")) ::_exit(91);
        std::abort();
      },
      [](pid_t) {});
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK(fs::is_empty(parent));  // the child's guarded directory went with it
}
