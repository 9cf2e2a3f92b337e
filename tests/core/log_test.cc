// Logging: levels by name, the plain lines on stderr, the detailed lines in log files, and lines
// below the level dropped everywhere.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/log.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::istringstream text(read_all(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  return lines;
}

// Sends this process's stderr to a file while it lives.
class CaptureStderr {
 public:
  explicit CaptureStderr(const fs::path& file) : saved_(::dup(2)) {
    std::fflush(stderr);
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~CaptureStderr() {
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
  }

 private:
  int saved_;
};

// Puts the process's logging back as the other tests expect it.
struct RestoreLogging {
  ~RestoreLogging() {
    rlx::set_log_level(rlx::LogLevel::kInfo);
    rlx::set_log_role("rlx", "rlx");
  }
};

}  // namespace

TEST_CASE("Log levels go by their names, and a wrong name is refused with the names", "[core][log]") {
  for (const rlx::LogLevel level : {rlx::LogLevel::kTrace, rlx::LogLevel::kDebug, rlx::LogLevel::kInfo,
                                    rlx::LogLevel::kWarn, rlx::LogLevel::kError, rlx::LogLevel::kOff}) {
    CHECK(rlx::parse_log_level(rlx::log_level_name(level)) == level);
  }
  CHECK(rlx::log_level_names("|") == "trace|debug|info|warn|error|off");
  CHECK_THROWS_WITH(rlx::parse_log_level("verbose"),
                    "log level 'verbose' is not one of trace, debug, info, warn, error, off");
  const RestoreLogging restore;
  rlx::set_log_level(rlx::LogLevel::kDebug);
  CHECK(rlx::log_level_args() == std::vector<std::string>{"--log-level", "debug"});
}

TEST_CASE("stderr gets plain lines, a log file the same lines with time, role and level", "[core][log]") {
  rlx::test::TempDir tmp;
  const RestoreLogging restore;
  rlx::set_log_role("driver", "rlx train");
  {
    const rlx::LogFile file(tmp / "logs" / "driver.log");  // the folder is made
    const CaptureStderr capture(tmp / "stderr.txt");
    rlx::logger().info("workers connect to {}", "ipc://x");
    rlx::logger().warn("worker {} exited", 2);
    rlx::file_logger().info("only in the file");
  }
  rlx::logger().info("after the file closed");
  CHECK(read_all(tmp / "stderr.txt") == "rlx train: workers connect to ipc://x\nrlx train: warning: worker 2 exited\n");
  const std::vector<std::string> lines = lines_of(tmp / "logs" / "driver.log");
  REQUIRE(lines.size() == 3);
  CHECK_THAT(lines[0], Catch::Matches(R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] \[driver\] \[info\] workers connect to ipc://x)"));
  CHECK_THAT(lines[1], Catch::EndsWith("[driver] [warning] worker 2 exited"));
  CHECK_THAT(lines[2], Catch::EndsWith("[driver] [info] only in the file"));
}

TEST_CASE("Lines below the level are dropped on stderr and in files alike", "[core][log]") {
  rlx::test::TempDir tmp;
  const RestoreLogging restore;
  rlx::set_log_role("worker 3", "rlx worker 3");
  {
    const rlx::LogFile file(tmp / "worker.log");
    const CaptureStderr capture(tmp / "stderr.txt");
    rlx::set_log_level(rlx::LogLevel::kWarn);
    rlx::logger().info("an info line");
    rlx::logger().error("an error line");
    rlx::set_log_level(rlx::LogLevel::kDebug);
    rlx::logger().debug("a debug line");
    rlx::logger().trace("a trace line");
  }
  CHECK(read_all(tmp / "stderr.txt") == "rlx worker 3: error: an error line\nrlx worker 3: debug: a debug line\n");
  const std::string file = read_all(tmp / "worker.log");
  CHECK_THAT(file, Catch::Contains("[worker 3] [error] an error line") && Catch::Contains("[worker 3] [debug] a debug line"));
  CHECK_THAT(file, !Catch::Contains("an info line") && !Catch::Contains("a trace line"));
}

TEST_CASE("A log file that cannot be opened is named", "[core][log]") {
  rlx::test::TempDir tmp;
  rlx::test::write_text(tmp / "file", "");
  CHECK_THROWS_WITH(rlx::LogFile(tmp / "file" / "driver.log"),
                    Catch::Contains("cannot open log file " + (tmp / "file" / "driver.log").string()));
}
