// Config values as text: formatting, parsing (--set and YAML scalars), and typo suggestions.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/config_schema.h"

namespace rlx {
namespace {

std::string_view trim(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> parse_double(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<int64_t> parse_int(std::string_view text) {
  text = trim(text);
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty()) return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc() && end == digits.data() + digits.size()) return value;
  // Integral floats such as 1e5 or 100000.0, as YAML files often write step counts.
  const auto real = parse_double(text);
  if (!real || *real != std::floor(*real) || std::fabs(*real) >= 9.2e18) return std::nullopt;
  return static_cast<int64_t>(*real);
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string word = lower(trim(text));
  if (word == "true" || word == "yes" || word == "on") return true;
  if (word == "false" || word == "no" || word == "off") return false;
  return std::nullopt;
}

// "[64, 64]", "[64]", "[]" or "64,64": a list in brackets, or two or more integers with commas.
// A lone "64" is no list: `hidden_sizes: 64` must not quietly mean one layer.
std::optional<IntList> parse_int_list(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '[') {
    if (text.back() != ']') return std::nullopt;
    text = trim(text.substr(1, text.size() - 2));
  } else if (text.find(',') == std::string_view::npos) {
    return std::nullopt;
  }
  IntList values;
  if (text.empty()) return values;
  while (true) {
    const size_t comma = text.find(',');
    const auto element = parse_int(text.substr(0, comma));
    if (!element) return std::nullopt;
    values.push_back(*element);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return values;
}

}  // namespace

std::string format_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  if (value == std::floor(value) && std::fabs(value) < 1e16) {
    std::snprintf(buffer, sizeof buffer, "%.1f", value);  // 100000.0 rather than 1e+05
    text = buffer;
  }
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string format_readable(double value) {
  if (!std::isfinite(value) || value == 0) return format_double(value);
  if (std::fabs(value) >= 1000) return format_double(std::round(value));  // every digit before the point
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return format_double(std::strtod(buffer, nullptr));
}

std::string format_value(const ConfigValue& value) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return format_double(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const IntList& v) const {
      std::string text = "[";
      for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + std::to_string(v[i]);
      return text + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

std::optional<ConfigValue> parse_value(ConfigType type, std::string_view text) {
  switch (type) {
    case ConfigType::kInt:
      if (auto v = parse_int(text)) return ConfigValue(*v);
      return std::nullopt;
    case ConfigType::kFloat:
      if (auto v = parse_double(text)) return ConfigValue(*v);
      return std::nullopt;
    case ConfigType::kBool:
      if (auto v = parse_bool(text)) return ConfigValue(*v);
      return std::nullopt;
    case ConfigType::kString: return ConfigValue(std::string(text));
    case ConfigType::kIntList:
      if (auto v = parse_int_list(text)) return ConfigValue(std::move(*v));
      return std::nullopt;
  }
  return std::nullopt;
}

std::string lone_integer_hint(const KeySpec& key, std::string_view text, ListSyntax syntax) {
  if (key.type != ConfigType::kIntList || text.find(',') != std::string_view::npos) return "";
  const auto value = parse_int(text);
  if (!value) return "";
  const std::string n = std::to_string(*value);
  if (syntax == ListSyntax::kCommandLine) {
    return ": " + key.name + "=[" + n + "] for a list of one, " + key.name + "=" + n + "," + n + " for a list of two";
  }
  return ": [" + n + "] for a list of one, [" + n + ", " + n + "] for a list of two";
}

}  // namespace rlx
