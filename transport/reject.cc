#include "transport/reject.h"


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

}  // namespace rlx
