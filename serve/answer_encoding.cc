#include "serve/answer_encoding.h"

#include <cstring>

#include <nlohmann/json.hpp>

namespace rlx {

namespace {

nlohmann::json action_json(const PolicyAction& action, const ServedSpaces& spaces) {
  if (spaces.discrete_actions) return action.index;
  if (spaces.indexed_actions) return action.indices;
  return action.values;
}

}  // namespace

std::string json_answer(const ActReply& reply, const ServedSpaces& spaces, bool one) {
  nlohmann::json answer = nlohmann::json::object();
  if (one) {
    answer["action"] = action_json(reply.actions.at(0), spaces);
  } else {
    nlohmann::json actions = nlohmann::json::array();
    for (const PolicyAction& action : reply.actions) actions.push_back(action_json(action, spaces));
    answer["actions"] = std::move(actions);
  }
  answer["version"] = reply.version;
  return answer.dump();
}

std::string binary_answer(const ActReply& reply, const ServedSpaces& spaces) {
  std::string out;
  if (spaces.discrete_actions) {
    out.resize(reply.actions.size() * sizeof(int64_t));
    for (size_t r = 0; r < reply.actions.size(); ++r) std::memcpy(&out[r * sizeof(int64_t)], &reply.actions[r].index, sizeof(int64_t));
    return out;
  }
  const auto width = static_cast<size_t>(spaces.action_size);
  const size_t element = spaces.indexed_actions ? sizeof(int64_t) : sizeof(float);
  out.resize(reply.actions.size() * width * element);
  for (size_t r = 0; r < reply.actions.size(); ++r) {
    const void* data = spaces.indexed_actions ? static_cast<const void*>(reply.actions[r].indices.data())
                                              : static_cast<const void*>(reply.actions[r].values.data());
    std::memcpy(&out[r * width * element], data, width * element);
  }
  return out;
}

std::string json_error(const std::string& error, const std::string& field) {
  nlohmann::json body = {{"error", error}};
  if (!field.empty()) body["field"] = field;
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace rlx
