#include "watch/plot_axes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

namespace rlx {

namespace {

// Fixed-point text of `value` with `decimals` digits, trailing zeros and a bare point dropped.
std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  if (text == "-0") text = "0";
  return text;
}

// How many decimals show `step` exactly (0.25: 2, 5: 0).
int decimals_for(double step) {
  for (int decimals = 0; decimals < 12; ++decimals) {
    const double scaled = step * std::pow(10.0, decimals);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * std::max(1.0, scaled)) return decimals;
  }
  return 12;
}

// "2e-4", "2.5e-4", "-1.25e6": mantissa with `decimals` decimals at most, exponent without padding.
std::string scientific(double value, int decimals) {
  const int exponent = static_cast<int>(std::floor(std::log10(std::abs(value))));
  double mantissa = value / std::pow(10.0, exponent);
  int shown_exponent = exponent;
  if (std::abs(std::round(mantissa * std::pow(10.0, decimals))) >= 10 * std::pow(10.0, decimals)) {
    mantissa /= 10;  // 9.999 rounded up to 10
    ++shown_exponent;
  }
  return fixed(mantissa, decimals) + "e" + std::to_string(shown_exponent);
}

struct Unit {
  double scale;
  const char* suffix;
};

constexpr Unit kUnits[] = {{1e9, "B"}, {1e6, "M"}, {1e3, "k"}};

}  // namespace

Ticks nice_ticks(double lo, double hi, int target) {
  if (hi < lo) std::swap(lo, hi);
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  target = std::max(target, 2);
  const double rough = (hi - lo) / target;
  const double power = std::pow(10.0, std::floor(std::log10(rough)));
  double step = 10 * power;  // of the candidate steps, the one whose tick count is nearest target
  double best = std::numeric_limits<double>::infinity();
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    const double candidate = factor * power;
    const double intervals = std::ceil(hi / candidate - 1e-9) - std::floor(lo / candidate + 1e-9);
    if (std::abs(intervals - target) < best) {
      best = std::abs(intervals - target);
      step = candidate;
    }
  }
  Ticks ticks;
  ticks.step = step;
  ticks.lo = std::floor(lo / step + 1e-9) * step;
  ticks.hi = std::ceil(hi / step - 1e-9) * step;
  const long count = std::lround((ticks.hi - ticks.lo) / step);
  for (long i = 0; i <= count; ++i) {
    double value = ticks.lo + static_cast<double>(i) * step;
    if (std::abs(value) < step * 1e-9) value = 0;
    ticks.values.push_back(value);
  }
  return ticks;
}

std::string format_tick(double value, double step) {
  step = std::abs(step);
  if (value == 0 || std::abs(value) < step * 1e-9) return "0";
  if (step < 1e-3) {
    const double power = std::pow(10.0, std::floor(std::log10(step)));
    // 2.5e-4 steps need one mantissa decimal when the value's exponent is the step's.
    return scientific(value, std::min(3, decimals_for(step / power)));
  }
  const double magnitude = std::abs(value);
  for (const Unit& unit : kUnits) {
    if (magnitude >= unit.scale && step >= unit.scale / 1000) {
      return fixed(value / unit.scale, decimals_for(step / unit.scale)) + unit.suffix;
    }
  }
  return fixed(value, decimals_for(step));
}

std::string format_compact(double value) {
  if (value == 0) return "0";
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  const double magnitude = std::abs(value);
  if (magnitude < 0.01) return scientific(value, 2);
  for (const Unit& unit : kUnits) {
    if (magnitude >= unit.scale) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.3g", value / unit.scale);
      return std::string(buffer) + unit.suffix;
    }
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

std::string format_compact_text(const std::string& text) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return text;
  return format_compact(number);
}

std::string column_label(const std::string& column) {
  static const std::pair<const char*, const char*> kLabels[] = {
      {"timesteps_total", "environment steps"},
      {"training_iteration", "training iterations"},
      {"time_total_s", "wall-clock time (seconds)"},
      {"episodes_total", "episodes"},
      {"episode_return_mean", "episode return (mean of last 100 episodes)"},
      {"episode_return_min", "episode return (lowest of last 100 episodes)"},
      {"episode_return_max", "episode return (highest of last 100 episodes)"},
      {"episode_len_mean", "episode length in steps (mean of last 100 episodes)"},
      {"env_steps_per_s", "environment steps per second"},
      {"learner/policy_loss", "policy loss (learner/policy_loss)"},
      {"learner/vf_loss", "value function loss (learner/vf_loss)"},
      {"learner/entropy", "policy entropy in nats (learner/entropy)"},
      {"learner/approx_kl", "approximate KL divergence, new from old policy (learner/approx_kl)"},
      {"learner/lr", "learning rate (learner/lr)"},
  };
  for (const auto& [name, label] : kLabels) {
    if (column == name) return label;
  }
  return column;
}

std::string column_title(const std::string& column) {
  if (column == "episode_return_mean") return "episode return";
  if (column == "episode_len_mean") return "episode length";
  return column;
}

}  // namespace rlx
