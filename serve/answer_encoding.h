// Answers as they leave: JSON, binary rows, and the JSON error object every protocol shares.
#pragma once

#include <string>

#include "serve/act_request.h"
#include "serve/served_model.h"

namespace rlx {

// {"action": A, "version": V} (one observation asked) or {"actions": [A, ...], "version": V}.
// A is an integer (Discrete), an array of integers (MultiDiscrete, MultiBinary) or of floats (Box).
std::string json_answer(const ActReply& reply, const ServedSpaces& spaces, bool one);

// One action per row, little-endian: an int64 (Discrete), action_size int64 (MultiDiscrete,
// MultiBinary) or action_size float32 (Box).
std::string binary_answer(const ActReply& reply, const ServedSpaces& spaces);

// {"error": "...", "field": "..."} (field only where one is at fault).
std::string json_error(const std::string& error, const std::string& field);

}  // namespace rlx
