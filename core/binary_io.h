// Little binary streams for checkpoint files that are too big for JSON (a replay buffer): plain
// values and vectors of plain values appended to a string, read back with every length checked.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace rlx {

// Appends values in host byte order (checkpoints are read on the kind of host that wrote them).
class BinaryWriter {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  // The element count, then the elements.
  template <typename T>
  void put_vector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(values.size());
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reads what a BinaryWriter wrote; std::invalid_argument naming `what` when the bytes run out or
// a vector is longer than `max_elements`.
class BinaryReader {
 public:
  BinaryReader(const std::string& bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}

  template <typename T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  template <typename T>
  std::vector<T> get_vector(uint64_t max_elements) {
    const auto count = get<uint64_t>();
    if (count > max_elements) {
      throw std::invalid_argument(what_ + ": a vector of " + std::to_string(count) + " elements, at most " +
                                  std::to_string(max_elements) + " expected");
    }
    need(count * sizeof(T));
    std::vector<T> values(count);
    std::memcpy(values.data(), bytes_.data() + offset_, count * sizeof(T));
    offset_ += count * sizeof(T);
    return values;
  }
  // Throws unless every byte was read.
  void expect_end() const {
    if (offset_ != bytes_.size()) throw std::invalid_argument(what_ + ": " + std::to_string(bytes_.size() - offset_) + " bytes too many");
  }

 private:
  void need(uint64_t size) const {
    if (size > bytes_.size() - offset_) throw std::invalid_argument(what_ + ": truncated");
  }

  const std::string& bytes_;
  std::string what_;
  size_t offset_ = 0;
};

}  // namespace rlx
