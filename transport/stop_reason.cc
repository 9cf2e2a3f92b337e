#include "transport/stop_reason.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "transport/wire_format.h"

namespace rlx {

namespace {

constexpr std::pair<StopCause, const char*> kCauseNames[] = {
    {StopCause::kSignal, "signal"},           {StopCause::kEnvContract, "env_contract"},
    {StopCause::kPythonError, "python_error"}, {StopCause::kBadConfig, "bad_config"},
    {StopCause::kOutOfMemory, "out_of_memory"}, {StopCause::kError, "error"},
};

}  // namespace

const char* stop_cause_name(StopCause cause) {
  for (const auto& [value, name] : kCauseNames) {
    if (value == cause) return name;
  }
  return "unknown";
}

std::optional<StopCause> stop_cause_of_name(std::string_view name) {
  for (const auto& [value, cause_name] : kCauseNames) {
    if (name == cause_name) return value;
  }
  return std::nullopt;
}

std::string sanitize_stop_detail(std::string_view text, size_t max_bytes) {
  std::string line;
  line.reserve(std::min(text.size(), max_bytes));
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      if (!line.empty() && line.back() != ' ') line += ' ';
    } else {
      line += byte > 0x7e ? '?' : c;
    }
    if (line.size() > max_bytes) break;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (line.size() > max_bytes) {
    constexpr std::string_view kCut = "...";
    line.resize(max_bytes > kCut.size() ? max_bytes - kCut.size() : 0);
    line += kCut.substr(0, std::min(kCut.size(), max_bytes));
  }
  return line;
}

std::string stop_info_json(const StopReason& reason) {
  const nlohmann::json info = {{"cause", stop_cause_name(reason.cause)},
                               {"detail", sanitize_stop_detail(reason.detail)},
                               {"hostname", sanitize_stop_detail(reason.hostname, kMaxHelloStringBytes)},
                               {"pid", reason.pid}};
  return info.dump();
}

std::optional<StopReason> parse_stop_info(std::string_view text) {
  if (text.size() > kMaxStopInfoBytes) return std::nullopt;
  const nlohmann::json info = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (info.is_discarded() || !info.is_object()) return std::nullopt;
  const auto string_field = [&](const char* key, size_t max_bytes) -> std::optional<std::string> {
    const auto it = info.find(key);
    if (it == info.end() || !it->is_string() || it->get_ref<const std::string&>().size() > max_bytes) return std::nullopt;
    return sanitize_stop_detail(it->get_ref<const std::string&>(), max_bytes);
  };
  const std::optional<std::string> cause_name = string_field("cause", 32);
  const std::optional<StopCause> cause = cause_name ? stop_cause_of_name(*cause_name) : std::nullopt;
  std::optional<std::string> detail = string_field("detail", kMaxStopDetailBytes);
  std::optional<std::string> hostname = string_field("hostname", kMaxHelloStringBytes);
  const auto pid = info.find("pid");
  const bool pid_ok = pid != info.end() && (pid->is_number_unsigned() || (pid->is_number_integer() && pid->get<int64_t>() >= 0)) &&
                      pid->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!cause || !detail || !hostname || !pid_ok) return std::nullopt;
  return StopReason{*cause, std::move(*detail), std::move(*hostname), pid->get<int64_t>()};
}

}  // namespace rlx
