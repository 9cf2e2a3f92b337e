// A request for actions once decoded and checked (from HTTP JSON, HTTP binary or ZeroMQ), and
// its answer. The inference pool (serve/inference_pool.h) batches requests and answers each.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/policy.h"
#include "serve/served_model.h"

namespace rlx {

// The answer to one ActRequest: status 200 with one action per row, or an error status with
// the reason (and the field at fault, where one is).
struct ActReply {
  int status = 200;
  std::string error;
  std::string field;
  uint64_t version = 0;
  std::vector<PolicyAction> actions;
};

struct ActRequest {
  size_t slot = 0;  // which served policy (its index in the server)
  std::shared_ptr<const ServedModel> model;  // the version the request started on, which answers it
  int64_t rows = 0;
  std::vector<float> floats;   // [rows, float_size]
  std::vector<uint8_t> bytes;  // [rows, byte_size]
  std::vector<uint8_t> masks;  // [rows, mask_size]; empty: every action legal
  bool deterministic = true;
  std::optional<std::string> session;  // a recurrent policy's episode (rows == 1)
  bool episode_start = false;          // the session's episode starts here: its state is zeroed
  std::chrono::steady_clock::time_point received;
  // Called once with the answer, from an inference thread (or the submitting thread when the
  // request is refused); must not block.
  std::function<void(ActReply&&)> done;
};

// An answer with an error status and message (and the field at fault).
inline ActReply error_reply(int status, std::string error, std::string field = "") {
  ActReply reply;
  reply.status = status;
  reply.error = std::move(error);
  reply.field = std::move(field);
  return reply;
}

}  // namespace rlx
