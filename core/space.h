// Observation and action spaces with Gymnasium's semantics: Box (any rank, float32 or uint8),
// Discrete (with start), MultiDiscrete, MultiBinary, and the composites Tuple and Dict (nested).
// The storage of one observation (which slots are floats, which bytes) and its flattening for a
// model are in core/observation_layout.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rlx {

enum class SpaceKind { kBox, kDiscrete, kMultiDiscrete, kMultiBinary, kTuple, kDict };

// The element type of a Box (Gymnasium's dtype): float32, or uint8 for pixels and grids.
enum class ScalarType { kFloat32, kUint8 };

// "float32" or "uint8".
inline const char* scalar_type_name(ScalarType type) { return type == ScalarType::kUint8 ? "uint8" : "float32"; }

// A Gymnasium-style space. Box holds per-element bounds in row-major order.
struct Space {
  SpaceKind kind = SpaceKind::kBox;
  std::vector<int64_t> shape;       // Box, MultiBinary: the shape; MultiDiscrete: nvec's shape
  std::vector<float> low;           // Box: one bound per element
  std::vector<float> high;          // Box: one bound per element
  ScalarType dtype = ScalarType::kFloat32;  // Box
  int64_t n = 0;                    // Discrete: number of values
  int64_t start = 0;                // Discrete: the smallest value (values start .. start + n - 1)
  std::vector<int64_t> nvec;        // MultiDiscrete: values per element, row-major
  std::vector<int64_t> starts;      // MultiDiscrete: the smallest value per element
  std::vector<Space> children;      // Tuple, Dict: the subspaces in order
  std::vector<std::string> keys;    // Dict: one key per child, in the order given

  // A Box with the same bounds for every element.
  static Space box(std::vector<int64_t> shape, float low, float high, ScalarType dtype = ScalarType::kFloat32) {
    int64_t count = 1;
    for (int64_t d : shape) count *= d > 0 ? d : 1;
    return box(std::move(shape), std::vector<float>(static_cast<size_t>(count), low),
               std::vector<float>(static_cast<size_t>(count), high), dtype);
  }

  // A Box with per-element bounds; low and high must each hold prod(shape) values.
  static Space box(std::vector<int64_t> shape, std::vector<float> low, std::vector<float> high,
                   ScalarType dtype = ScalarType::kFloat32) {
    Space s;
    s.kind = SpaceKind::kBox;
    s.shape = std::move(shape);
    s.low = std::move(low);
    s.high = std::move(high);
    s.dtype = dtype;
    s.validate();
    return s;
  }

  // Discrete(n, start): values start .. start + n - 1.
  static Space discrete(int64_t n, int64_t start = 0) {
    Space s;
    s.kind = SpaceKind::kDiscrete;
    s.n = n;
    s.start = start;
    s.validate();
    return s;
  }

  // MultiDiscrete(nvec): element i takes starts[i] .. starts[i] + nvec[i] - 1 (starts empty: all 0);
  // shape empty means [nvec.size()].
  static Space multi_discrete(std::vector<int64_t> nvec, std::vector<int64_t> starts = {}, std::vector<int64_t> shape = {}) {
    Space s;
    s.kind = SpaceKind::kMultiDiscrete;
    if (starts.empty()) starts.assign(nvec.size(), 0);
    s.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(nvec.size())} : std::move(shape);
    s.nvec = std::move(nvec);
    s.starts = std::move(starts);
    s.validate();
    return s;
  }

  // MultiBinary(shape): prod(shape) elements, each 0 or 1.
  static Space multi_binary(std::vector<int64_t> shape) {
    Space s;
    s.kind = SpaceKind::kMultiBinary;
    s.shape = std::move(shape);
    s.validate();
    return s;
  }

  // Tuple(children).
  static Space tuple(std::vector<Space> children) {
    Space s;
    s.kind = SpaceKind::kTuple;
    s.children = std::move(children);
    s.validate();
    return s;
  }

  // Dict({key: space}) in the order given (Gymnasium sorts the keys of a plain dict; the Python
  // bridge passes them in the env's own order, which is that).
  static Space dict(std::vector<std::pair<std::string, Space>> entries) {
    Space s;
    s.kind = SpaceKind::kDict;
    for (auto& [key, child] : entries) {
      s.keys.push_back(key);
      s.children.push_back(std::move(child));
    }
    s.validate();
    return s;
  }

  bool is_box() const { return kind == SpaceKind::kBox; }
  bool is_discrete() const { return kind == SpaceKind::kDiscrete; }
  bool is_multi_discrete() const { return kind == SpaceKind::kMultiDiscrete; }
  bool is_multi_binary() const { return kind == SpaceKind::kMultiBinary; }
  bool is_composite() const { return kind == SpaceKind::kTuple || kind == SpaceKind::kDict; }
  // A Box of float32, the one kind continuous-action algorithms act in.
  bool is_float_box() const { return is_box() && dtype == ScalarType::kFloat32; }

  // Number of scalars one sample holds: prod(shape) for Box and MultiBinary, 1 for Discrete,
  // nvec.size() for MultiDiscrete, the children's sum for Tuple and Dict.
  int64_t size() const {
    switch (kind) {
      case SpaceKind::kDiscrete: return 1;
      case SpaceKind::kMultiDiscrete: return static_cast<int64_t>(nvec.size());
      case SpaceKind::kTuple:
      case SpaceKind::kDict: {
        int64_t total = 0;
        for (const Space& child : children) total += child.size();
        return total;
      }
      default: return shape_size();
    }
  }

  // Width of gymnasium.spaces.flatten's vector (flatdim): Discrete one-hot (n), MultiDiscrete
  // its one-hots concatenated (sum of nvec), Box and MultiBinary their elements, Tuple and Dict
  // their children's in order.
  int64_t flat_size() const {
    switch (kind) {
      case SpaceKind::kDiscrete: return n;
      case SpaceKind::kMultiDiscrete: {
        int64_t total = 0;
        for (int64_t count : nvec) total += count;
        return total;
      }
      case SpaceKind::kTuple:
      case SpaceKind::kDict: {
        int64_t total = 0;
        for (const Space& child : children) total += child.flat_size();
        return total;
      }
      default: return shape_size();
    }
  }

  // The subspace under a Dict key; nullptr when this is no Dict or has no such key.
  const Space* child(const std::string& key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &children[i];
    }
    return nullptr;
  }

  // Throws std::invalid_argument when the space is malformed, naming `path` (e.g.
  // "observation_space['camera']") and what is wrong.
  void validate(const std::string& path = "space") const {
    auto fail = [&](const std::string& what) { throw std::invalid_argument(path + ": " + what); };
    switch (kind) {
      case SpaceKind::kDiscrete:
        if (n <= 0) fail("Discrete space needs n > 0, got " + std::to_string(n));
        return;
      case SpaceKind::kMultiDiscrete:
        check_shape(path, "MultiDiscrete");
        if (static_cast<int64_t>(nvec.size()) != shape_size() || nvec.empty()) {
          fail("MultiDiscrete space has " + std::to_string(nvec.size()) + " counts for shape of " +
               std::to_string(shape_size()) + " elements");
        }
        if (starts.size() != nvec.size()) fail("MultiDiscrete space has " + std::to_string(starts.size()) + " starts for " + std::to_string(nvec.size()) + " counts");
        for (size_t i = 0; i < nvec.size(); ++i) {
          if (nvec[i] <= 0) fail("MultiDiscrete space needs every count > 0, got " + std::to_string(nvec[i]) + " at element " + std::to_string(i));
        }
        return;
      case SpaceKind::kMultiBinary:
        check_shape(path, "MultiBinary");
        return;
      case SpaceKind::kTuple:
      case SpaceKind::kDict: {
        const bool is_dict = kind == SpaceKind::kDict;
        if (children.empty()) fail(std::string(is_dict ? "Dict" : "Tuple") + " space has no subspaces");
        if (is_dict && keys.size() != children.size()) fail("Dict space has " + std::to_string(keys.size()) + " keys for " + std::to_string(children.size()) + " subspaces");
        for (size_t i = 0; i < children.size(); ++i) {
          if (is_dict) {
            if (keys[i].empty()) fail("Dict space has an empty key");
            for (size_t j = 0; j < i; ++j) {
              if (keys[j] == keys[i]) fail("Dict space has the key '" + keys[i] + "' twice");
            }
          }
          children[i].validate(child_path(path, i));
        }
        return;
      }
      case SpaceKind::kBox:
        break;
    }
    check_shape(path, "Box");
    const auto count = static_cast<size_t>(size());
    if (low.size() != count || high.size() != count) {
      fail("Box space bounds hold " + std::to_string(low.size()) + "/" + std::to_string(high.size()) +
           " values, expected " + std::to_string(count));
    }
    for (size_t i = 0; i < count; ++i) {
      if (!(low[i] <= high[i])) fail("Box space has low > high at element " + std::to_string(i));
      if (dtype == ScalarType::kUint8 && !(low[i] >= 0 && high[i] <= 255 && low[i] == std::floor(low[i]) && high[i] == std::floor(high[i]))) {
        fail("uint8 Box space needs integer bounds within [0, 255], got [" + scalar_text(low[i]) + ", " +
             scalar_text(high[i]) + "] at element " + std::to_string(i));
      }
    }
  }

  // The path of child i: "path['key']" in a Dict, "path[i]" in a Tuple.
  std::string child_path(const std::string& path, size_t i) const {
    return kind == SpaceKind::kDict ? path + "['" + keys.at(i) + "']" : path + "[" + std::to_string(i) + "]";
  }

  // True when every bound is finite.
  bool is_bounded() const {
    for (size_t i = 0; i < low.size(); ++i) {
      if (!std::isfinite(low[i]) || !std::isfinite(high[i])) return false;
    }
    return true;
  }

  // Gymnasium-like text: "Discrete(2)", "Box(-inf, inf, (4,), float32)", "MultiDiscrete([3 2])",
  // "Dict('image': Box(0, 255, (84, 84, 4), uint8), 'speed': Box(...))".
  std::string to_string() const {
    std::ostringstream out;
    switch (kind) {
      case SpaceKind::kDiscrete:
        out << "Discrete(" << n;
        if (start != 0) out << ", start=" << start;
        out << ")";
        return out.str();
      case SpaceKind::kMultiDiscrete:
        out << "MultiDiscrete(" << list_text(nvec);
        if (shape.size() > 1) out << ", shape " << shape_text();
        for (int64_t s : starts) {
          if (s != 0) {
            out << ", start=" << list_text(starts);
            break;
          }
        }
        out << ")";
        return out.str();
      case SpaceKind::kMultiBinary:
        if (shape.size() == 1) return "MultiBinary(" + std::to_string(shape[0]) + ")";
        return "MultiBinary(" + list_text(shape) + ")";
      case SpaceKind::kTuple:
      case SpaceKind::kDict:
        out << (kind == SpaceKind::kDict ? "Dict(" : "Tuple(");
        for (size_t i = 0; i < children.size(); ++i) {
          out << (i ? ", " : "");
          if (kind == SpaceKind::kDict) out << "'" << keys[i] << "': ";
          out << children[i].to_string();
        }
        out << ")";
        return out.str();
      case SpaceKind::kBox:
        break;
    }
    out << "Box(" << bound_text(low) << ", " << bound_text(high) << ", " << shape_text() << ", "
        << scalar_type_name(dtype) << ")";
    return out.str();
  }

  bool operator==(const Space& other) const {
    return kind == other.kind && shape == other.shape && low == other.low && high == other.high &&
           dtype == other.dtype && n == other.n && start == other.start && nvec == other.nvec &&
           starts == other.starts && children == other.children && keys == other.keys;
  }
  bool operator!=(const Space& other) const { return !(*this == other); }

 private:
  int64_t shape_size() const {
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    return count;
  }
  void check_shape(const std::string& path, const char* name) const {
    for (int64_t d : shape) {
      if (d <= 0) throw std::invalid_argument(path + ": " + name + " space has a non-positive dimension " + std::to_string(d));
    }
  }
  // "(4,)", "(84, 84, 4)" or "()".
  std::string shape_text() const {
    std::string text = "(";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + (shape.size() == 1 ? ",)" : ")");
  }
  static std::string list_text(const std::vector<int64_t>& values) {
    std::string text = "[";
    for (size_t i = 0; i < values.size(); ++i) text += (i ? " " : "") + std::to_string(values[i]);
    return text + "]";
  }
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

// The categorical sizes of an indexed action space, one per element: {n} for Discrete, nvec for
// MultiDiscrete, 2 per bit for MultiBinary; empty for a Box.
inline std::vector<int64_t> action_categories(const Space& space) {
  if (space.is_discrete()) return {space.n};
  if (space.is_multi_discrete()) return space.nvec;
  if (space.is_multi_binary()) return std::vector<int64_t>(static_cast<size_t>(space.size()), 2);
  return {};
}

// The smallest value of each element of an indexed action space (an index i means the value
// start + i): {start} for Discrete, starts for MultiDiscrete, 0 per bit for MultiBinary; empty for a Box.
inline std::vector<int64_t> action_starts(const Space& space) {
  if (space.is_discrete()) return {space.start};
  if (space.is_multi_discrete()) return space.starts;
  if (space.is_multi_binary()) return std::vector<int64_t>(static_cast<size_t>(space.size()), 0);
  return {};
}

}  // namespace rlx
