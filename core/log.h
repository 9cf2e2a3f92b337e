// Logging: one logger per process, named for the process's role ("driver", "worker 3",
// "learner rank 1", "tune"), with levels. Every line goes to stderr and to the log files open
// (LogFile). On stderr a line is plain, for the user: "rlx train: workers connect to ...",
// "rlx train: warning: ..."; in a log file it carries time, role and level:
// "[2025-06-01 12:00:00.123] [driver] [info] workers connect to ...". A process whose stderr is
// itself a log file (a worker, a learner rank: RLX_LOG_FORMAT=detailed in its environment)
// writes the detailed form to stderr too. Thread-safe; every line is flushed as it is written,
// so a process that dies leaves its last lines behind.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/logger.h>

namespace rlx {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// Environment variable: "detailed" makes stderr lines carry time, role and level (set by rlx for
// the processes whose output it appends to a log file); "plain" or unset: the plain form.
constexpr const char* kLogFormatEnv = "RLX_LOG_FORMAT";
constexpr const char* kLogFormatDetailed = "detailed";

// "trace", "debug", "info", "warn", "error" or "off".
const char* log_level_name(LogLevel level);
// Every level's name, most verbose first ("trace|debug|info|warn|error|off" joined by `separator`).
std::string log_level_names(const std::string& separator);
// The level a name gives; std::invalid_argument naming the value and the names otherwise.
LogLevel parse_log_level(const std::string& name);

// Lines below `level` are dropped, on stderr and in files alike.
void set_log_level(LogLevel level);
// The level in force (kInfo until set).
LogLevel log_level();
// The arguments that give a child rlx process this process's level: {"--log-level", NAME}.
std::vector<std::string> log_level_args();

// Names this process: `role` in detailed lines ("worker 3"), `prefix` before plain lines
// ("rlx worker 3"). Until set: "rlx" and "rlx".
void set_log_role(const std::string& role, const std::string& prefix);
// The role set last.
std::string log_role();
// True when stderr carries the detailed form (RLX_LOG_FORMAT=detailed: stderr is a log file).
bool log_stderr_detailed();

// The process's logger: stderr and the open log files.
spdlog::logger& logger();
// The same, to the open log files only: for what the user sees on stderr in another form (the
// CLI's final error message, the tuner's events under its status table).
spdlog::logger& file_logger();

// A log file, open for the object's lifetime: every line of this process's logger is appended
// to it in the detailed form (its folder is created). std::runtime_error naming the path when
// it cannot be opened.
class LogFile {
 public:
  explicit LogFile(const std::filesystem::path& path);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::shared_ptr<spdlog::sinks::sink> sink_;
};

}  // namespace rlx
