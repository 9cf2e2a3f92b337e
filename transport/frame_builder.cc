#include "transport/frame_builder.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace rlx {

namespace {

// ZeroMQ calls this when it has released a zero-copy frame; hint owns one reference.
void release_shared_owner(void* /*data*/, void* hint) { delete static_cast<std::shared_ptr<const void>*>(hint); }

}  // namespace

FrameBuilder::FrameBuilder(MessageType type, uint64_t sender_id, uint64_t sequence, uint64_t policy_version) {
  header_.magic = kWireMagic;
  header_.protocol_version = kProtocolVersion;
  header_.type = static_cast<uint16_t>(type);
  header_.sender_id = sender_id;
  header_.sequence = sequence;
  header_.policy_version = policy_version;
}

ColumnDescriptor FrameBuilder::describe(ColumnId column, DType dtype, std::initializer_list<int64_t> dims,
                                        size_t bytes) const {
  if (dims.size() > kMaxColumnDims) throw std::invalid_argument("FrameBuilder: a column has more than 4 dims");
  ColumnDescriptor d{};
  d.column = static_cast<uint16_t>(column);
  d.dtype = static_cast<uint8_t>(dtype);
  d.ndim = static_cast<uint8_t>(dims.size());
  uint64_t elements = 1;
  size_t i = 0;
  for (int64_t dim : dims) {
    if (dim < 0) throw std::invalid_argument("FrameBuilder: negative column dim");
    d.dims[i++] = dim;
    elements *= static_cast<uint64_t>(dim);
  }
  if (elements * dtype_size(d.dtype) != bytes) {
    throw std::invalid_argument("FrameBuilder: column " + std::to_string(d.column) + " holds " + std::to_string(bytes) +
                                " bytes, its dims need " + std::to_string(elements * dtype_size(d.dtype)));
  }
  d.bytes = bytes;
  return d;
}

void FrameBuilder::add_copied(ColumnId column, DType dtype, std::initializer_list<int64_t> dims, const void* data,
                              size_t bytes) {
  descriptors_.push_back(describe(column, dtype, dims, bytes));
  columns_.emplace_back(data, bytes);
}

void FrameBuilder::add_shared(ColumnId column, DType dtype, std::initializer_list<int64_t> dims, const void* data,
                              size_t bytes, const std::shared_ptr<const void>& owner) {
  if (bytes < kZeroCopyMinBytes || !owner) {
    add_copied(column, dtype, dims, data, bytes);
    return;
  }
  descriptors_.push_back(describe(column, dtype, dims, bytes));
  auto hint = std::make_unique<std::shared_ptr<const void>>(owner);
  // ZeroMQ never writes to the data of a frame it sends; the cast only satisfies its C API.
  columns_.emplace_back(const_cast<void*>(data), bytes, release_shared_owner, hint.get());
  hint.release();  // now owned by the frame, freed by release_shared_owner
}

std::vector<zmq::message_t> FrameBuilder::finish() {
  header_.num_columns = static_cast<uint32_t>(descriptors_.size());
  header_.payload_bytes = 0;
  for (const ColumnDescriptor& d : descriptors_) header_.payload_bytes += d.bytes;
  zmq::message_t head(sizeof(WireHeader) + descriptors_.size() * sizeof(ColumnDescriptor));
  auto* out = static_cast<unsigned char*>(head.data());
  std::memcpy(out, &header_, sizeof(WireHeader));
  if (!descriptors_.empty()) {
    std::memcpy(out + sizeof(WireHeader), descriptors_.data(), descriptors_.size() * sizeof(ColumnDescriptor));
  }
  std::vector<zmq::message_t> frames;
  frames.reserve(1 + columns_.size());
  frames.push_back(std::move(head));
  for (zmq::message_t& column : columns_) frames.push_back(std::move(column));
  columns_.clear();
  descriptors_.clear();
  return frames;
}

}  // namespace rlx
