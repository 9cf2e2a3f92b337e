// Why a wire message was rejected, and thread-safe counts of rejections by reason.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/reason_counters.h"

namespace rlx {

enum class RejectReason : uint8_t {
  kNoFrames,            // an empty message
  kTooManyFrames,       // more frames than max_columns + 1
  kMessageTooLarge,     // frames add up to more than max_message_bytes
  kHeaderTruncated,     // frame 0 shorter than the fixed header
  kBadMagic,
  kBadVersion,
  kUnknownType,
  kBadFlags,            // reserved header or descriptor bits set
  kTooManyColumns,      // num_columns over max_columns
  kHeaderSizeMismatch,  // frame 0 is not exactly header + num_columns descriptors
  kFrameCountMismatch,  // frames != 1 + num_columns
  kUnknownDType,
  kBadShape,            // ndim over the limit, a negative dim, or a dim set beyond ndim
  kSizeOverflow,        // an element or byte count overflows 64 bits
  kColumnSizeMismatch,  // descriptor bytes != product(dims) * dtype size
  kFrameSizeMismatch,   // a column frame's size != its descriptor's bytes
  kPayloadSizeMismatch, // header payload_bytes != sum of column bytes
  kDuplicateColumn,
  kUnexpectedColumn,    // a column this message type does not carry
  kMissingColumn,
  kWrongDType,
  kWrongRank,           // a column with the wrong number of dims for its role
  kInconsistentDims,    // columns disagree on T, K, O, A, D or E
  kLimitExceeded,       // a dimension over its DecodeLimits bound
  kValueOutOfRange,     // an index, flag, count or credit outside its range
  kBadHelloInfo,        // hello or stop info JSON unparsable, missing or mistyped fields
};

constexpr size_t kNumRejectReasons = static_cast<size_t>(RejectReason::kBadHelloInfo) + 1;

// snake_case name of a reason ("bad_magic").
const char* reject_reason_name(RejectReason reason);

// Counts of rejected messages by reason ("rejected_total=N bad_magic=N ..."); thread-safe.
class RejectCounters : public ReasonCounters<RejectReason, kNumRejectReasons, reject_reason_name> {
 public:
  RejectCounters() : ReasonCounters("rejected_total") {}
};

}  // namespace rlx
