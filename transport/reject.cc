#include "transport/reject.h"

#include <sstream>

namespace rlx {

const char* reject_reason_name(RejectReason reason) {
  switch (reason) {
    case RejectReason::kNoFrames: return "no_frames";
    case RejectReason::kTooManyFrames: return "too_many_frames";
    case RejectReason::kMessageTooLarge: return "message_too_large";
    case RejectReason::kHeaderTruncated: return "header_truncated";
    case RejectReason::kBadMagic: return "bad_magic";
    case RejectReason::kBadVersion: return "bad_version";
    case RejectReason::kUnknownType: return "unknown_type";
    case RejectReason::kBadFlags: return "bad_flags";
    case RejectReason::kTooManyColumns: return "too_many_columns";
    case RejectReason::kHeaderSizeMismatch: return "header_size_mismatch";
    case RejectReason::kFrameCountMismatch: return "frame_count_mismatch";
    case RejectReason::kUnknownDType: return "unknown_dtype";
    case RejectReason::kBadShape: return "bad_shape";
    case RejectReason::kSizeOverflow: return "size_overflow";
    case RejectReason::kColumnSizeMismatch: return "column_size_mismatch";
    case RejectReason::kFrameSizeMismatch: return "frame_size_mismatch";
    case RejectReason::kPayloadSizeMismatch: return "payload_size_mismatch";
    case RejectReason::kDuplicateColumn: return "duplicate_column";
    case RejectReason::kUnexpectedColumn: return "unexpected_column";
    case RejectReason::kMissingColumn: return "missing_column";
    case RejectReason::kWrongDType: return "wrong_dtype";
    case RejectReason::kWrongRank: return "wrong_rank";
    case RejectReason::kInconsistentDims: return "inconsistent_dims";
    case RejectReason::kLimitExceeded: return "limit_exceeded";
    case RejectReason::kValueOutOfRange: return "value_out_of_range";
    case RejectReason::kBadHelloInfo: return "bad_hello_info";
  }
  return "unknown";
}

void RejectCounters::record(RejectReason reason) {
  const auto index = static_cast<size_t>(reason);
  if (index < counts_.size()) counts_[index].fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(1, std::memory_order_relaxed);
}

uint64_t RejectCounters::count(RejectReason reason) const {
  const auto index = static_cast<size_t>(reason);
  return index < counts_.size() ? counts_[index].load(std::memory_order_relaxed) : 0;
}

uint64_t RejectCounters::total() const { return total_.load(std::memory_order_relaxed); }

std::string RejectCounters::snapshot() const {
  std::ostringstream out;
  out << "rejected_total=" << total();
  for (size_t i = 0; i < kNumRejectReasons; ++i) {
    out << ' ' << reject_reason_name(static_cast<RejectReason>(i)) << '=' << counts_[i].load(std::memory_order_relaxed);
  }
  return out.str();
}

}  // namespace rlx
