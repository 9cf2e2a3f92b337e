#include "algorithms/progress_line.h"

#include <unistd.h>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/log.h"

namespace rlx {

namespace {

std::string one_decimal(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << v;
  return s.str();
}

}  // namespace

spdlog::logger& progress_logger(bool progress) { return progress ? logger() : file_logger(); }

ProgressLine::ProgressLine(bool enabled) : enabled_(enabled), tty_(::isatty(2)) {}

void ProgressLine::show(const std::string& algorithm, const std::string& env, const TrainingCounters& counters,
                        double return_mean, double steps_per_s) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!tty_ && now - last_ < std::chrono::seconds(5)) return;
  last_ = now;
  std::ostringstream line;
  line << "[" << algorithm << " " << env << "] iter " << counters.iteration << "  steps " << counters.timesteps
       << "  return " << (std::isnan(return_mean) ? std::string("-") : one_decimal(return_mean)) << "  " << std::fixed
       << std::setprecision(0) << steps_per_s << " steps/s  " << std::setprecision(1) << counters.time_s << " s";
  std::cerr << (tty_ ? "\r\033[K" : "") << line.str() << (tty_ ? "" : "\n") << std::flush;
  shown_ = true;
}

void ProgressLine::finish() {
  if (enabled_ && tty_ && shown_) std::cerr << "\n";
}

}  // namespace rlx
