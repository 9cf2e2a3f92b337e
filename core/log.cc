#include "core/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace rlx {

namespace {

constexpr LogLevel kLevels[] = {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo,
                                LogLevel::kWarn,  LogLevel::kError, LogLevel::kOff};

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

// "rlx train: warning: text": the prefix, the level where it is not info, the text.
class PlainFormatter final : public spdlog::formatter {
 public:
  explicit PlainFormatter(std::string prefix) : prefix_(std::move(prefix)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    if (!prefix_.empty()) append(dest, prefix_ + ": ");
    switch (msg.level) {
      case spdlog::level::trace: append(dest, "trace: "); break;
      case spdlog::level::debug: append(dest, "debug: "); break;
      case spdlog::level::warn: append(dest, "warning: "); break;
      case spdlog::level::err:
      case spdlog::level::critical: append(dest, "error: "); break;
      default: break;
    }
    dest.append(msg.payload.begin(), msg.payload.end());
    dest.push_back('\n');
  }

  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<PlainFormatter>(prefix_); }

 private:
  static void append(spdlog::memory_buf_t& dest, const std::string& text) { dest.append(text.data(), text.data() + text.size()); }
  std::string prefix_;
};

// "[2025-06-01 12:00:00.123] [worker 3] [info] text".
std::unique_ptr<spdlog::formatter> detailed_formatter(const std::string& role) {
  std::string escaped;
  for (const char c : role) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  return std::make_unique<spdlog::pattern_formatter>("[%Y-%m-%d %H:%M:%S.%e] [" + escaped + "] [%l] %v");
}

// Appends each line with one write(2) to a descriptor opened O_APPEND | O_CLOEXEC: lines of
// several processes appending to one file stay whole, and children started by this process do
// not inherit the file.
class AppendFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppendFileSink(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error("cannot open log file " + path.string() + ": " + std::strerror(errno));
  }
  ~AppendFileSink() override { ::close(fd_); }
  AppendFileSink(const AppendFileSink&) = delete;
  AppendFileSink& operator=(const AppendFileSink&) = delete;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    const char* data = line.data();
    size_t left = line.size();
    while (left > 0) {
      const ssize_t wrote = ::write(fd_, data, left);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return;  // a full disk must not take the process down with it
      data += wrote;
      left -= static_cast<size_t>(wrote);
    }
  }
  void flush_() override {}

 private:
  int fd_;
};

// The process's logging state. Never destroyed: objects destroyed at exit may still log.
struct LogState {
  LogState() {
    const char* format = std::getenv(kLogFormatEnv);
    detailed_stderr = format != nullptr && std::string(format) == kLogFormatDetailed;
    stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    files = std::make_shared<spdlog::sinks::dist_sink_mt>();
    all = std::make_shared<spdlog::logger>("rlx", spdlog::sinks_init_list{stderr_sink, files});
    files_only = std::make_shared<spdlog::logger>("rlx", files);
    for (const auto& logger : {all, files_only}) {
      logger->set_level(to_spdlog(level));
      logger->flush_on(spdlog::level::trace);
    }
    apply_role();
  }

  // Gives the sinks the formatters of the current role (the caller holds the mutex).
  void apply_role() {
    if (detailed_stderr) {
      stderr_sink->set_formatter(detailed_formatter(role));
    } else {
      stderr_sink->set_formatter(std::make_unique<PlainFormatter>(prefix));
    }
    files->set_formatter(detailed_formatter(role));
  }

  std::mutex mutex;
  LogLevel level = LogLevel::kInfo;
  std::string role = "rlx";
  std::string prefix = "rlx";
  bool detailed_stderr = false;
  std::shared_ptr<spdlog::sinks::stderr_sink_mt> stderr_sink;
  std::shared_ptr<spdlog::sinks::dist_sink_mt> files;
  std::shared_ptr<spdlog::logger> all;
  std::shared_ptr<spdlog::logger> files_only;
};

LogState& state() {
  static LogState* const instance = new LogState();
  return *instance;
}

}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: return "off";
  }
  return "info";
}

std::string log_level_names(const std::string& separator) {
  std::string names;
  for (const LogLevel level : kLevels) names += (names.empty() ? "" : separator) + log_level_name(level);
  return names;
}

LogLevel parse_log_level(const std::string& name) {
  for (const LogLevel level : kLevels) {
    if (name == log_level_name(level)) return level;
  }
  throw std::invalid_argument("log level '" + name + "' is not one of " + log_level_names(", "));
}

void set_log_level(LogLevel level) {
  LogState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.level = level;
  s.all->set_level(to_spdlog(level));
  s.files_only->set_level(to_spdlog(level));
}

LogLevel log_level() {
  LogState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.level;
}

std::vector<std::string> log_level_args() { return {"--log-level", log_level_name(log_level())}; }

void set_log_role(const std::string& role, const std::string& prefix) {
  LogState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.role = role;
  s.prefix = prefix;
  s.apply_role();
}

std::string log_role() {
  LogState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return s.role;
}

bool log_stderr_detailed() { return state().detailed_stderr; }

spdlog::logger& logger() { return *state().all; }

spdlog::logger& file_logger() { return *state().files_only; }

LogFile::LogFile(const std::filesystem::path& path) : path_(path) {
  std::error_code ignored;  // a folder that cannot be made shows as the file that cannot be opened
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ignored);
  sink_ = std::make_shared<AppendFileSink>(path);
  LogState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  sink_->set_formatter(detailed_formatter(s.role));
  s.files->add_sink(sink_);
}

LogFile::~LogFile() { state().files->remove_sink(sink_); }

}  // namespace rlx
