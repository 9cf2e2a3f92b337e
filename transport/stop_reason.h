// Why a worker stopped, as it tells its learner in its goodbye (a Stop with a stop_info
// column): the cause, a one-line detail, and where it ran. At the learner all of it is
// untrusted input: parse_stop_info checks bounds and types, and the detail is sanitised to
// printable ASCII of at most kMaxStopDetailBytes bytes on both sides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rlx {

constexpr size_t kMaxStopDetailBytes = 512;  // the detail, after sanitising
constexpr size_t kMaxStopInfoBytes = 2048;   // the stop_info JSON text on the wire

// What ended a worker. kSignal is a goodbye (a scheduler's SIGTERM); the others are failures.
enum class StopCause : uint8_t {
  kSignal = 1,
  kEnvContract = 2,   // the env broke the env API's contract (EnvContractError)
  kPythonError = 3,   // a Python env raised (PythonEnvError)
  kBadConfig = 4,     // the learner's setup could not be built here (unknown env, bad network)
  kOutOfMemory = 5,   // std::bad_alloc
  kError = 6,         // any other exception
};

// snake_case name of a cause ("env_contract").
const char* stop_cause_name(StopCause cause);

// The cause of a name stop_cause_name gives; nullopt for any other text.
std::optional<StopCause> stop_cause_of_name(std::string_view name);

// True for every cause but kSignal.
inline bool is_failure(StopCause cause) { return cause != StopCause::kSignal; }

struct StopReason {
  StopCause cause = StopCause::kError;
  std::string detail;    // one line, sanitize_stop_detail'd
  std::string hostname;  // at most kMaxHelloStringBytes bytes, sanitised
  int64_t pid = 0;
};

// `text` as one line of printable ASCII: each run of spaces, control characters and line breaks
// becomes one space, other bytes outside 0x20..0x7e become '?', and the result is cut to max_bytes
// (ending in "..." when cut).
std::string sanitize_stop_detail(std::string_view text, size_t max_bytes = kMaxStopDetailBytes);

// The stop_info JSON text of a reason (its strings sanitised and bounded first).
std::string stop_info_json(const StopReason& reason);

// The reason in a stop_info text; nullopt unless it is a JSON object of at most
// kMaxStopInfoBytes bytes with a known "cause", a string "detail" of at most
// kMaxStopDetailBytes bytes, a string "hostname" of at most kMaxHelloStringBytes bytes and a
// non-negative integer "pid". The strings come back sanitised.
std::optional<StopReason> parse_stop_info(std::string_view text);

}  // namespace rlx
