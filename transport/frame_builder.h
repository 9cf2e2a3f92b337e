// FrameBuilder: assembles one wire message, header frame first, then one frame per column,
// each either copied or referencing the caller's memory without a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include <zmq.hpp>

#include "transport/wire_format.h"

namespace rlx {

// Columns smaller than this are copied even when add_shared is asked: a copy is cheaper than
// the bookkeeping of a zero-copy frame.
constexpr size_t kZeroCopyMinBytes = 1024;

template <typename T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }

class FrameBuilder {
 public:
  // Starts a message of the given type and header fields.
  FrameBuilder(MessageType type, uint64_t sender_id, uint64_t sequence, uint64_t policy_version);

  // Appends a column copied now; throws std::invalid_argument if dims and bytes disagree.
  void add_copied(ColumnId column, DType dtype, std::initializer_list<int64_t> dims, const void* data, size_t bytes);

  // Appends a column sent without a copy: owner keeps data alive until ZeroMQ releases the frame.
  void add_shared(ColumnId column, DType dtype, std::initializer_list<int64_t> dims, const void* data, size_t bytes,
                  const std::shared_ptr<const void>& owner);

  // Typed forms of the two above for a whole vector.
  template <typename T>
  void add_copied(ColumnId column, std::initializer_list<int64_t> dims, const std::vector<T>& values) {
    add_copied(column, dtype_of<T>(), dims, values.data(), values.size() * sizeof(T));
  }
  template <typename T>
  void add_shared(ColumnId column, std::initializer_list<int64_t> dims, const std::vector<T>& values,
                  const std::shared_ptr<const void>& owner) {
    add_shared(column, dtype_of<T>(), dims, values.data(), values.size() * sizeof(T), owner);
  }

  // Returns the message's frames (header first); the builder must not be used afterwards.
  std::vector<zmq::message_t> finish();

 private:
  ColumnDescriptor describe(ColumnId column, DType dtype, std::initializer_list<int64_t> dims, size_t bytes) const;

  WireHeader header_{};
  std::vector<ColumnDescriptor> descriptors_;
  std::vector<zmq::message_t> columns_;
};

}  // namespace rlx
