// The local process launcher: a ProcessSpec's environment reaches the child only, its output
// follows its banner in its log, and a process is polled, stopped and reaped. A launch prefix
// (srun's job steps) runs the same spec through another program.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/child_process.h"
#include "core/process_launcher.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;

// Polls until the process exited (5 s at most).
rlx::ChildExit wait_exit(rlx::LaunchedProcess& process) {
  for (int i = 0; i < 500; ++i) {
    if (const auto exit = process.poll()) return *exit;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the process did not exit within 5 s");
  return {};
}

}  // namespace

TEST_CASE("The local launcher sets the spec's environment variables in the child only", "[core][launcher]") {
  rlx::test::TempDir tmp;
  ::setenv("RLX_TEST_REPLACED", "parent", 1);
  rlx::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"new=$RLX_TEST_NEW replaced=$RLX_TEST_REPLACED home=${HOME:+set}\""};
  spec.env = {{"RLX_TEST_NEW", "a b=c"}, {"RLX_TEST_REPLACED", "first"}, {"RLX_TEST_REPLACED", "child"}};
  spec.log = tmp / "logs" / "child.log";
  const std::unique_ptr<rlx::LaunchedProcess> child = rlx::local_launcher().launch(spec);
  CHECK(wait_exit(*child).clean());
  CHECK(rlx::tail_lines(spec.log, 10) == std::vector<std::string>{"new=a b=c replaced=child home=set"});
  CHECK(std::getenv("RLX_TEST_NEW") == nullptr);
  CHECK(std::string(std::getenv("RLX_TEST_REPLACED")) == "parent");
  ::unsetenv("RLX_TEST_REPLACED");
}

TEST_CASE("A bad environment variable name is refused before anything starts", "[core][launcher]") {
  rlx::ProcessSpec spec;
  spec.argv = {"/bin/true"};
  spec.env = {{"A=B", "x"}};
  CHECK_THROWS_WITH(rlx::local_launcher().launch(spec), Catch::Contains("'A=B'"));
}

TEST_CASE("A launched process's lines follow its latest banner in its log", "[core][launcher]") {
  rlx::test::TempDir tmp;
  const fs::path log = tmp / "worker.log";
  for (const char* run : {"first", "second"}) {
    const std::unique_ptr<rlx::LaunchedProcess> child = rlx::local_launcher().launch(
        {{"/bin/sh", "-c", std::string("echo ") + run + "; echo " + run + " to stderr >&2; exit 3"}, {}, log,
         rlx::log_banner(std::string(run) + " start")});
    const rlx::ChildExit exit = wait_exit(*child);
    CHECK(exit.describe() == "exit status 3");
    CHECK(child->log() == log);
  }
  const std::vector<std::string> all = rlx::tail_lines(log, 100);
  REQUIRE(all.size() == 6);
  CHECK_THAT(all[0], Catch::Matches(R"(=== \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: first start ===)"));
  CHECK(rlx::lines_since_banner(log, 8) == std::vector<std::string>{"second", "second to stderr"});
  CHECK(rlx::lines_since_banner(log, 1) == std::vector<std::string>{"second to stderr"});
}

TEST_CASE("stop() asks with SIGTERM, then kills what outlasts the grace", "[core][launcher]") {
  const std::unique_ptr<rlx::LaunchedProcess> polite = rlx::local_launcher().launch({{"/bin/sleep", "30"}, {}, "", ""});
  CHECK_FALSE(polite->poll());
  CHECK(polite->stop(std::chrono::milliseconds(2000)).describe() == "killed by signal 15 (Terminated)");
  const std::unique_ptr<rlx::LaunchedProcess> stubborn =
      rlx::local_launcher().launch({{"/bin/sh", "-c", "trap '' TERM; while true; do sleep 0.05; done"}, {}, "", ""});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the trap is set
  CHECK(stubborn->stop(std::chrono::milliseconds(200)).describe() == "killed by signal 9 (Killed)");
}

TEST_CASE("A launch prefix is split at whitespace into its words", "[core][launcher]") {
  CHECK(rlx::split_command_prefix("srun --exact -N1 -n1 -c2") ==
        std::vector<std::string>{"srun", "--exact", "-N1", "-n1", "-c2"});
  CHECK(rlx::split_command_prefix("  env\tA=1 \n B=2  ") == std::vector<std::string>{"env", "A=1", "B=2"});
  CHECK(rlx::split_command_prefix("").empty());
  CHECK(rlx::split_command_prefix(" \t\n").empty());
}

TEST_CASE("A launch prefix whose program cannot be run is refused naming it", "[core][launcher]") {
  CHECK_THROWS_AS(rlx::CommandPrefixLauncher({}), std::invalid_argument);
  CHECK_THROWS_WITH(rlx::CommandPrefixLauncher({"rlx-no-such-launcher", "-n1"}),
                    Catch::Contains("'rlx-no-such-launcher'") && Catch::Contains("PATH"));
  CHECK_THROWS_WITH(rlx::CommandPrefixLauncher({"/no/such/dir/srun"}), Catch::Contains("'/no/such/dir/srun'"));
  rlx::test::TempDir tmp;
  rlx::test::write_text(tmp / "srun", "#!/bin/sh\n");  // there, but not executable
  fs::permissions(tmp / "srun", fs::perms::owner_read | fs::perms::owner_write);
  CHECK_THROWS_WITH(rlx::CommandPrefixLauncher({(tmp / "srun").string()}), Catch::Contains((tmp / "srun").string()));
}

TEST_CASE("A launch prefix runs the spec's command through the prefix's program, found on PATH", "[core][launcher]") {
  rlx::test::TempDir tmp;
  ::unsetenv("RLX_PREFIX_TEST");
  int runs = 0;
  for (const char* program : {"env", "/usr/bin/env"}) {
    INFO(program);
    rlx::CommandPrefixLauncher launcher({program, "RLX_PREFIX_TEST=through the prefix"});
    CHECK(launcher.prefix()[0].find('/') != std::string::npos);  // resolved to a path
    CHECK(launcher.prefix()[1] == "RLX_PREFIX_TEST=through the prefix");
    rlx::ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo \"$RLX_PREFIX_TEST and $RLX_SPEC_VAR\"; exit 4"};
    spec.env = {{"RLX_SPEC_VAR", "the spec's env"}};
    spec.log = tmp / (std::to_string(++runs) + ".log");
    const std::unique_ptr<rlx::LaunchedProcess> child = launcher.launch(spec);
    CHECK(wait_exit(*child).describe() == "exit status 4");
    CHECK(child->log() == spec.log);
    CHECK(rlx::tail_lines(spec.log, 10) == std::vector<std::string>{"through the prefix and the spec's env"});
  }
  CHECK(std::getenv("RLX_PREFIX_TEST") == nullptr);
}

TEST_CASE("Stopping a process started through a launch prefix signals the prefix's program", "[core][launcher]") {
  rlx::CommandPrefixLauncher launcher({"env", "RLX_PREFIX_TEST=1"});
  const std::unique_ptr<rlx::LaunchedProcess> child = launcher.launch({{"/bin/sleep", "30"}, {}, "", ""});
  CHECK_FALSE(child->poll());
  // env execs sleep in its place: SIGTERM reaches the command itself.
  CHECK(child->stop(std::chrono::milliseconds(2000)).describe() == "killed by signal 15 (Terminated)");
}
