// Observation and action spaces: Box (float32, shape, low, high) and Discrete(n).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {

enum class SpaceKind { kBox, kDiscrete };

// A Gymnasium-style space. Box holds per-element bounds in row-major order.
struct Space {
  SpaceKind kind = SpaceKind::kBox;
  std::vector<int64_t> shape;  // Box: its shape; Discrete: empty
  std::vector<float> low;      // Box: one bound per element
  std::vector<float> high;     // Box: one bound per element
  int64_t n = 0;               // Discrete: number of actions

  // A Box with the same bounds for every element.
  static Space box(std::vector<int64_t> shape, float low, float high) {
    Space s;
    s.kind = SpaceKind::kBox;
    s.shape = std::move(shape);
    const int64_t count = s.size();
    s.low.assign(static_cast<size_t>(count), low);
    s.high.assign(static_cast<size_t>(count), high);
    s.validate();
    return s;
  }

  // A Box with per-element bounds; low and high must each hold prod(shape) values.
  static Space box(std::vector<int64_t> shape, std::vector<float> low, std::vector<float> high) {
    Space s;
    s.kind = SpaceKind::kBox;
    s.shape = std::move(shape);
    s.low = std::move(low);
    s.high = std::move(high);
    s.validate();
    return s;
  }

  // Discrete(n): actions 0 .. n-1.
  static Space discrete(int64_t n) {
    Space s;
    s.kind = SpaceKind::kDiscrete;
    s.n = n;
    s.validate();
    return s;
  }

  bool is_box() const { return kind == SpaceKind::kBox; }
  bool is_discrete() const { return kind == SpaceKind::kDiscrete; }

  // Number of scalars one sample occupies: prod(shape) for Box, 1 for Discrete.
  int64_t size() const {
    if (kind == SpaceKind::kDiscrete) return 1;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    return count;
  }

  // Throws std::invalid_argument when the space is malformed.
  void validate() const {
    if (kind == SpaceKind::kDiscrete) {
      if (n <= 0) throw std::invalid_argument("Discrete space needs n > 0, got " + std::to_string(n));
      return;
    }
    for (int64_t d : shape) {
      if (d <= 0) throw std::invalid_argument("Box space has a non-positive dimension " + std::to_string(d));
    }
    const auto count = static_cast<size_t>(size());
    if (low.size() != count || high.size() != count) {
      throw std::invalid_argument("Box space bounds hold " + std::to_string(low.size()) + "/" +
                                  std::to_string(high.size()) + " values, expected " + std::to_string(count));
    }
    for (size_t i = 0; i < count; ++i) {
      if (!(low[i] <= high[i])) throw std::invalid_argument("Box space has low > high at element " + std::to_string(i));
    }
  }

  // True when every bound is finite.
  bool is_bounded() const {
    for (size_t i = 0; i < low.size(); ++i) {
      if (!std::isfinite(low[i]) || !std::isfinite(high[i])) return false;
    }
    return true;
  }

  // Gymnasium-like text: "Discrete(2)" or "Box(-inf, inf, (4,), float32)".
  std::string to_string() const {
    std::ostringstream out;
    if (kind == SpaceKind::kDiscrete) {
      out << "Discrete(" << n << ")";
      return out.str();
    }
    out << "Box(" << bound_text(low) << ", " << bound_text(high) << ", (";
    for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
    out << (shape.size() == 1 ? ",), float32)" : "), float32)");
    return out.str();
  }

  bool operator==(const Space& other) const {
    return kind == other.kind && shape == other.shape && low == other.low && high == other.high && n == other.n;
  }
  bool operator!=(const Space& other) const { return !(*this == other); }

 private:
  static std::string scalar_text(float v) {
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::ostringstream out;
    out << v;
    return out.str();
  }
  // One number when all bounds agree, else a bracketed list.
  static std::string bound_text(const std::vector<float>& values) {
    bool uniform = true;
    for (float v : values) uniform = uniform && (v == values.front() || (std::isnan(v) && std::isnan(values.front())));
    if (uniform && !values.empty()) return scalar_text(values.front());
    std::string text = "[";
    for (size_t i = 0; i < values.size(); ++i) text += (i ? " " : "") + scalar_text(values[i]);
    return text + "]";
  }
};

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace rlx
