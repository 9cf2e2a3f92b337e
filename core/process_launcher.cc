#include "core/process_launcher.h"

#include <string.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iterator>
#include <thread>

namespace rlx {

namespace {

constexpr const char* kBannerStart = "=== ";

}  // namespace

std::string ChildExit::describe() const {
  if (signaled) return std::string("killed by signal ") + std::to_string(code) + " (" + strsignal(code) + ")";
  return "exit status " + std::to_string(code);
}

ChildExit LaunchedProcess::stop(std::chrono::milliseconds grace) {
  terminate();
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!poll() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill();
  return *poll();
}

std::vector<std::string> tail_lines(const std::filesystem::path& file, size_t max_lines) {
  constexpr std::streamoff kMaxBytes = 64 * 1024;
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = std::max<std::streamoff>(0, size - kMaxBytes);
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (start > 0 && !lines.empty()) lines.erase(lines.begin());  // a partial first line
  if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(max_lines));
  return lines;
}

std::string log_banner(const std::string& text) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char time[32];
  std::strftime(time, sizeof(time), "%Y-%m-%d %H:%M:%S", &local);
  return kBannerStart + std::string(time) + ": " + text + " ===";
}

std::vector<std::string> lines_since_banner(const std::filesystem::path& log, size_t max_lines) {
  std::vector<std::string> lines = tail_lines(log, 64);
  for (size_t i = lines.size(); i > 0; --i) {
    if (lines[i - 1].rfind(kBannerStart, 0) == 0) {
      lines.erase(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (lines.size() > max_lines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(max_lines));
  return lines;
}

}  // namespace rlx
