// inspect_frames: the structural checks every message passes before its data is read.
#include <algorithm>
#include <cstring>
#include <string>

#include "transport/decode.h"

namespace rlx {

namespace {

bool known_type(uint16_t type) {
  return type >= static_cast<uint16_t>(MessageType::kHello) && type <= static_cast<uint16_t>(MessageType::kJoin);
}

// a * b into out unless it overflows 64 bits.
bool multiply(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool add(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_add_overflow(a, b, &out); }

std::optional<RejectReason> fail(RejectReason reason, std::string* detail, const std::string& what) {
  if (detail) *detail = what;
  return reason;
}

std::optional<RejectReason> check_descriptor(const ColumnDescriptor& d, size_t frame_bytes, uint32_t max_dims,
                                             std::string* detail) {
  const auto bad = [&](RejectReason reason, const std::string& what) {
    return fail(reason, detail, "column " + std::to_string(d.column) + ": " + what);
  };
  if (d.reserved != 0) return bad(RejectReason::kBadFlags, "reserved bits set");
  const size_t element_bytes = dtype_size(d.dtype);
  if (element_bytes == 0) return bad(RejectReason::kUnknownDType, "dtype " + std::to_string(d.dtype));
  if (d.ndim > max_dims) return bad(RejectReason::kBadShape, "ndim " + std::to_string(d.ndim));
  uint64_t elements = 1;
  for (uint32_t i = 0; i < kMaxColumnDims; ++i) {
    if (i >= d.ndim) {
      if (d.dims[i] != 0) return bad(RejectReason::kBadShape, "dim set beyond ndim");
      continue;
    }
    if (d.dims[i] < 0) return bad(RejectReason::kBadShape, "negative dim");
    if (!multiply(elements, static_cast<uint64_t>(d.dims[i]), elements)) {
      return bad(RejectReason::kSizeOverflow, "element count overflows");
    }
  }
  uint64_t bytes = 0;
  if (!multiply(elements, element_bytes, bytes)) return bad(RejectReason::kSizeOverflow, "byte count overflows");
  if (bytes != d.bytes) return bad(RejectReason::kColumnSizeMismatch, "bytes disagree with dims");
  if (frame_bytes != d.bytes) {
    return bad(RejectReason::kFrameSizeMismatch,
               "frame holds " + std::to_string(frame_bytes) + " bytes, descriptor says " + std::to_string(d.bytes));
  }
  return std::nullopt;
}

}  // namespace

std::optional<RejectReason> inspect_frames(const std::vector<zmq::message_t>& frames, const DecodeLimits& limits,
                                           FrameLayout& layout, std::string* detail) {
  const uint32_t max_columns = std::min(limits.max_columns, kMaxColumns);
  const uint32_t max_dims = std::min(limits.max_dims, kMaxColumnDims);
  if (frames.empty()) return fail(RejectReason::kNoFrames, detail, "no frames");
  if (frames.size() > size_t{max_columns} + 1) {
    return fail(RejectReason::kTooManyFrames, detail, std::to_string(frames.size()) + " frames");
  }
  uint64_t total = 0;
  for (const zmq::message_t& frame : frames) {
    if (!add(total, frame.size(), total) || total > limits.max_message_bytes) {
      return fail(RejectReason::kMessageTooLarge, detail, "message over " + std::to_string(limits.max_message_bytes) + " bytes");
    }
  }
  const zmq::message_t& head = frames.front();
  if (head.size() < sizeof(WireHeader)) return fail(RejectReason::kHeaderTruncated, detail, "header frame too short");
  WireHeader header;
  std::memcpy(&header, head.data(), sizeof(WireHeader));
  if (header.magic != kWireMagic) return fail(RejectReason::kBadMagic, detail, "bad magic");
  if (header.protocol_version != kProtocolVersion) {
    return fail(RejectReason::kBadVersion, detail, "protocol version " + std::to_string(header.protocol_version));
  }
  if (!known_type(header.type)) return fail(RejectReason::kUnknownType, detail, "type " + std::to_string(header.type));
  layout.info.type = static_cast<MessageType>(header.type);
  layout.info.sender_id = header.sender_id;
  layout.info.sequence = header.sequence;
  layout.info.policy_version = header.policy_version;
  layout.info.payload_bytes = header.payload_bytes;
  if (header.flags != 0) return fail(RejectReason::kBadFlags, detail, "header flags set");
  if (header.num_columns > max_columns) {
    return fail(RejectReason::kTooManyColumns, detail, std::to_string(header.num_columns) + " columns");
  }
  if (head.size() != sizeof(WireHeader) + size_t{header.num_columns} * sizeof(ColumnDescriptor)) {
    return fail(RejectReason::kHeaderSizeMismatch, detail, "header frame size disagrees with num_columns");
  }
  if (frames.size() != size_t{header.num_columns} + 1) {
    return fail(RejectReason::kFrameCountMismatch, detail, "frame count disagrees with num_columns");
  }
  const auto* descriptors = static_cast<const unsigned char*>(head.data()) + sizeof(WireHeader);
  uint64_t payload = 0;
  uint32_t seen_ids = 0;  // columns are few: a quadratic duplicate check is cheapest
  for (uint32_t i = 0; i < header.num_columns; ++i) {
    ColumnDescriptor& d = layout.columns[i];
    std::memcpy(&d, descriptors + size_t{i} * sizeof(ColumnDescriptor), sizeof(ColumnDescriptor));
    if (auto reason = check_descriptor(d, frames[i + 1].size(), max_dims, detail)) return reason;
    for (uint32_t j = 0; j < seen_ids; ++j) {
      if (layout.columns[j].column == d.column) {
        return fail(RejectReason::kDuplicateColumn, detail, "column " + std::to_string(d.column) + " twice");
      }
    }
    ++seen_ids;
    if (!add(payload, d.bytes, payload)) return fail(RejectReason::kSizeOverflow, detail, "payload overflows");
  }
  if (payload != header.payload_bytes) {
    return fail(RejectReason::kPayloadSizeMismatch, detail, "payload_bytes disagrees with the columns");
  }
  layout.num_columns = header.num_columns;
  return std::nullopt;
}

}  // namespace rlx
