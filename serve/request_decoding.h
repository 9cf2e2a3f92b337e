// Requests for actions as they arrive (a JSON body, a binary body with its headers) turned into
// checked ActRequests. Everything here is untrusted input: sizes, types, finiteness, ranges and
// masks are checked before anything is queued, and each refusal names the field at fault.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "serve/act_request.h"
#include "serve/served_model.h"

namespace rlx {

// A request refused before it reaches a policy: the HTTP status, the reason and the field
// ("observations[2][3]", "session"; empty when no one field is at fault).
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message, std::string field = "")
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

// Limits on one request.
struct RequestLimits {
  int64_t max_rows = 1024;        // observations per request
  size_t max_session_chars = 256;  // a session id's length
};

// Fills request (rows, floats, bytes, masks, deterministic, session, episode_start) from a JSON
// body: {"observation": OBS} or {"observations": [OBS, ...]}, with the optional fields of
// docs/serve.md. Returns true when the body asked for one observation (answered "action").
// Throws RequestError (400) naming the field.
bool decode_json_request(std::string_view body, const ServedModel& model, const RequestLimits& limits, ActRequest& request);

// The options a binary request carries in its headers (HTTP) or flags (ZeroMQ).
struct BinaryRequestOptions {
  bool masks = false;  // each row ends with mask_size mask bytes
  bool deterministic = true;
  std::optional<std::string> session;
  bool episode_start = false;
};

// Fills request from a binary body: rows of float_size float32, byte_size uint8 and, with
// options.masks, mask_size mask bytes. Throws RequestError (400) naming the row and part.
void decode_binary_request(std::string_view body, const BinaryRequestOptions& options, const ServedModel& model,
                           const RequestLimits& limits, ActRequest& request);

}  // namespace rlx
