#include "serve/request_decoding.h"

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/did_you_mean.h"
#include "core/observation_layout.h"

using nlohmann::json;

namespace rlx {

namespace {

const std::vector<std::string> kJsonFields = {"observation",   "observations", "action_mask", "action_masks",
                                              "deterministic", "session",      "episode_start"};

std::string type_name(const json& value) { return value.type_name(); }

// Writes one observation (JSON, shaped as its space) into its stored floats and bytes.
class ObservationReader {
 public:
  ObservationReader(const Space& space, const ObservationLayout& layout) : space_(space), layout_(layout) {}

  void read(const json& value, const std::string& field, float* floats, uint8_t* bytes) {
    leaf_ = 0;
    floats_ = floats;
    bytes_ = bytes;
    walk(value, space_, field);
  }

 private:
  void walk(const json& value, const Space& space, const std::string& field) {
    if (space.kind == SpaceKind::kDict) {
      if (!value.is_object()) throw RequestError(400, field + " must be an object with the keys of " + space.to_string(), field);
      for (const auto& item : value.items()) {
        if (std::find(space.keys.begin(), space.keys.end(), item.key()) == space.keys.end()) {
          const std::optional<std::string> close = closest_match(item.key(), space.keys);
          throw RequestError(400, field + " has the key '" + item.key() + "', which " + space.to_string() + " does not" +
                                      (close ? " (did you mean '" + *close + "'?)" : ""),
                             field + "['" + item.key() + "']");
        }
      }
      for (size_t i = 0; i < space.children.size(); ++i) {
        const std::string child = field + "['" + space.keys[i] + "']";
        if (!value.contains(space.keys[i])) throw RequestError(400, child + " is missing", child);
        walk(value.at(space.keys[i]), space.children[i], child);
      }
      return;
    }
    if (space.kind == SpaceKind::kTuple) {
      if (!value.is_array() || value.size() != space.children.size()) {
        throw RequestError(400, field + " must be an array of " + std::to_string(space.children.size()) + " (the parts of " +
                                    space.to_string() + ")", field);
      }
      for (size_t i = 0; i < space.children.size(); ++i) walk(value[i], space.children[i], field + "[" + std::to_string(i) + "]");
      return;
    }
    const ObsLeaf& leaf = layout_.leaves.at(leaf_++);
    std::vector<const json*> elements;
    collect(value, space, field, elements);
    for (size_t i = 0; i < elements.size(); ++i) store(*elements[i], leaf, i, field, elements.size() > 1 || space.is_box());
  }

  // The leaf's scalars in row-major order, shaped as the space (or flat).
  static void collect(const json& value, const Space& space, const std::string& field, std::vector<const json*>& out) {
    if (space.is_discrete()) {
      out.push_back(&value);
      return;
    }
    const std::vector<int64_t>& shape = space.shape;
    const int64_t total = space.size();
    if (shape.empty()) {  // a scalar Box: a number or [number]
      if (value.is_array() && value.size() == 1) {
        out.push_back(&value[0]);
      } else {
        out.push_back(&value);
      }
      return;
    }
    if (value.is_array() && shape.size() > 1 && static_cast<int64_t>(value.size()) == total && total > 0 &&
        !value[0].is_array()) {
      for (const json& element : value) out.push_back(&element);  // flat, in row-major order
      return;
    }
    nest(value, shape, 0, field, space, out);
  }

  static void nest(const json& value, const std::vector<int64_t>& shape, size_t dim, const std::string& field,
                   const Space& space, std::vector<const json*>& out) {
    if (dim == shape.size()) {
      out.push_back(&value);
      return;
    }
    if (!value.is_array() || static_cast<int64_t>(value.size()) != shape[dim]) {
      throw RequestError(400,
                         field + " must be an array of " + std::to_string(shape[dim]) + " (" + space.to_string() + "), got " +
                             (value.is_array() ? std::to_string(value.size()) + " elements" : type_name(value)),
                         field);
    }
    for (size_t i = 0; i < value.size(); ++i) nest(value[i], shape, dim + 1, field + "[" + std::to_string(i) + "]", space, out);
  }

  void store(const json& element, const ObsLeaf& leaf, size_t i, const std::string& field, bool indexed) {
    const Space& space = leaf.space;
    const std::string where = indexed ? field + "[" + std::to_string(i) + "]" : field;
    if (space.is_multi_binary()) {
      if (element.is_boolean()) {
        bytes_[leaf.offset + static_cast<int64_t>(i)] = element.get<bool>() ? 1 : 0;
        return;
      }
      if (!element.is_number_integer() || (element.get<int64_t>() != 0 && element.get<int64_t>() != 1)) {
        throw RequestError(400, where + " must be 0 or 1 (" + space.to_string() + "), got " + element.dump(), where);
      }
      bytes_[leaf.offset + static_cast<int64_t>(i)] = static_cast<uint8_t>(element.get<int64_t>());
      return;
    }
    if (space.is_box() && leaf.storage == LeafStorage::kBytes) {
      if (!element.is_number_integer() || element.get<int64_t>() < 0 || element.get<int64_t>() > 255) {
        throw RequestError(400, where + " must be an integer in [0, 255] (" + space.to_string() + "), got " + element.dump(), where);
      }
      bytes_[leaf.offset + static_cast<int64_t>(i)] = static_cast<uint8_t>(element.get<int64_t>());
      return;
    }
    if (space.is_box()) {
      if (!element.is_number()) throw RequestError(400, where + " must be a number, got " + type_name(element), where);
      const auto number = static_cast<float>(element.get<double>());
      if (!std::isfinite(number)) throw RequestError(400, where + " is not finite: " + element.dump(), where);
      floats_[leaf.offset + static_cast<int64_t>(i)] = number;
      return;
    }
    const int64_t low = space.is_discrete() ? space.start : space.starts.at(i);
    const int64_t count = space.is_discrete() ? space.n : space.nvec.at(i);
    if (!element.is_number_integer() || element.get<int64_t>() < low || element.get<int64_t>() >= low + count) {
      throw RequestError(400,
                         where + " must be an integer in [" + std::to_string(low) + ", " + std::to_string(low + count - 1) +
                             "] (" + space.to_string() + "), got " + element.dump(),
                         where);
    }
    floats_[leaf.offset + static_cast<int64_t>(i)] = static_cast<float>(element.get<int64_t>());
  }

  const Space& space_;
  const ObservationLayout& layout_;
  size_t leaf_ = 0;
  float* floats_ = nullptr;
  uint8_t* bytes_ = nullptr;
};

void read_mask(const json& value, const std::string& field, size_t mask_size, uint8_t* out) {
  if (!value.is_array() || value.size() != mask_size) {
    throw RequestError(400,
                       field + " must be an array of " + std::to_string(mask_size) + " entries (1 = legal), got " +
                           (value.is_array() ? std::to_string(value.size()) : type_name(value)),
                       field);
  }
  for (size_t i = 0; i < mask_size; ++i) {
    const json& entry = value[i];
    if (entry.is_boolean()) {
      out[i] = entry.get<bool>() ? 1 : 0;
    } else if (entry.is_number_integer() && (entry.get<int64_t>() == 0 || entry.get<int64_t>() == 1)) {
      out[i] = static_cast<uint8_t>(entry.get<int64_t>());
    } else {
      const std::string where = field + "[" + std::to_string(i) + "]";
      throw RequestError(400, where + " must be 0, 1, true or false, got " + entry.dump(), where);
    }
  }
}

// Checks each row's mask leaves an action (Policy::check_observation), naming the field.
void check_masks(const ServedModel& model, const ActRequest& request, const std::string& field, bool one) {
  if (request.masks.empty()) return;
  const ServedSpaces& spaces = model.spaces();
  for (int64_t r = 0; r < request.rows; ++r) {
    PolicyObservation row;
    row.floats = request.floats.data() + r * spaces.float_size;
    row.float_count = static_cast<size_t>(spaces.float_size);
    row.bytes = request.bytes.data() + r * spaces.byte_size;
    row.byte_count = static_cast<size_t>(spaces.byte_size);
    row.mask = request.masks.data() + r * spaces.mask_size;
    row.mask_count = static_cast<size_t>(spaces.mask_size);
    try {
      model.policy(0).check_observation(row);
    } catch (const std::invalid_argument& error) {
      const std::string where = one ? field : field + "[" + std::to_string(r) + "]";
      throw RequestError(400, where + ": " + error.what(), where);
    }
  }
}

// The session fields every protocol shares: a recurrent policy needs a session and one row.
void check_session(const ServedModel& model, const RequestLimits& limits, const ActRequest& request) {
  const ServedSpaces& spaces = model.spaces();
  if (request.session && request.session->size() > limits.max_session_chars) {
    throw RequestError(400, "session must be at most " + std::to_string(limits.max_session_chars) + " characters", "session");
  }
  if (request.session && request.session->empty()) throw RequestError(400, "session must not be empty", "session");
  if (spaces.state_size == 0) {
    if (request.session) {
      throw RequestError(400, "session: this policy is memoryless (it keeps no state between steps): leave session out", "session");
    }
    return;
  }
  if (!request.session) {
    throw RequestError(400,
                       "this policy is recurrent (" + std::to_string(spaces.state_size) +
                           " floats of state per episode): give each episode a \"session\" id (and \"episode_start\": true at its first step)",
                       "session");
  }
  if (request.rows != 1) throw RequestError(400, "a recurrent policy's request is one step of one session: one observation", "observations");
}

}  // namespace

bool decode_json_request(std::string_view body, const ServedModel& model, const RequestLimits& limits, ActRequest& request) {
  json document;
  try {
    document = json::parse(body.begin(), body.end());
  } catch (const json::exception& error) {  // a syntax error, or a number beyond a double
    throw RequestError(400, std::string("the body is not valid JSON: ") + error.what());
  }
  if (!document.is_object()) throw RequestError(400, "the body must be a JSON object, got " + type_name(document));
  for (const auto& item : document.items()) {
    if (std::find(kJsonFields.begin(), kJsonFields.end(), item.key()) != kJsonFields.end()) continue;
    const std::optional<std::string> close = closest_match(item.key(), kJsonFields);
    throw RequestError(400, "unknown field '" + item.key() + "'" + (close ? " (did you mean '" + *close + "'?)" : ""), item.key());
  }
  const bool one = document.contains("observation");
  if (one == document.contains("observations")) {
    throw RequestError(400, one ? "give \"observation\" or \"observations\", not both" : "missing \"observation\" (or \"observations\")",
                       "observation");
  }
  const std::string field = one ? "observation" : "observations";
  const json& observations = document.at(field);
  if (!one && (!observations.is_array() || observations.empty())) {
    throw RequestError(400, "observations must be a non-empty array of observations", field);
  }
  request.rows = one ? 1 : static_cast<int64_t>(observations.size());
  if (request.rows > limits.max_rows) {
    throw RequestError(400, "at most " + std::to_string(limits.max_rows) + " observations per request, got " + std::to_string(request.rows), field);
  }
  const ServedSpaces& spaces = model.spaces();
  request.floats.assign(static_cast<size_t>(request.rows * spaces.float_size), 0.0f);
  request.bytes.assign(static_cast<size_t>(request.rows * spaces.byte_size), 0);
  ObservationReader reader(model.observation_space(), model.layout());
  for (int64_t r = 0; r < request.rows; ++r) {
    reader.read(one ? observations : observations[static_cast<size_t>(r)], one ? field : field + "[" + std::to_string(r) + "]",
                request.floats.data() + r * spaces.float_size, request.bytes.data() + r * spaces.byte_size);
  }
  const std::string mask_field = one ? "action_mask" : "action_masks";
  if (document.contains(one ? "action_masks" : "action_mask")) {
    throw RequestError(400, std::string("with \"") + field + "\" give \"" + mask_field + "\"", one ? "action_masks" : "action_mask");
  }
  if (document.contains(mask_field)) {
    if (spaces.mask_size == 0) {
      throw RequestError(400, mask_field + ": the action space " + spaces.action_space + " takes no mask", mask_field);
    }
    const json& masks = document.at(mask_field);
    request.masks.assign(static_cast<size_t>(request.rows * spaces.mask_size), 0);
    if (!one && (!masks.is_array() || static_cast<int64_t>(masks.size()) != request.rows)) {
      throw RequestError(400, "action_masks must be an array of one mask per observation (" + std::to_string(request.rows) + ")",
                         mask_field);
    }
    for (int64_t r = 0; r < request.rows; ++r) {
      read_mask(one ? masks : masks[static_cast<size_t>(r)], one ? mask_field : mask_field + "[" + std::to_string(r) + "]",
                static_cast<size_t>(spaces.mask_size), request.masks.data() + r * spaces.mask_size);
    }
    check_masks(model, request, mask_field, one);
  }
  if (document.contains("deterministic")) {
    if (!document.at("deterministic").is_boolean()) throw RequestError(400, "deterministic must be true or false", "deterministic");
    request.deterministic = document.at("deterministic").get<bool>();
  }
  if (document.contains("session")) {
    if (!document.at("session").is_string()) throw RequestError(400, "session must be a string", "session");
    request.session = document.at("session").get<std::string>();
  }
  if (document.contains("episode_start")) {
    if (!document.at("episode_start").is_boolean()) throw RequestError(400, "episode_start must be true or false", "episode_start");
    request.episode_start = document.at("episode_start").get<bool>();
  }
  check_session(model, limits, request);
  return one;
}

void decode_binary_request(std::string_view body, const BinaryRequestOptions& options, const ServedModel& model,
                           const RequestLimits& limits, ActRequest& request) {
  const ServedSpaces& spaces = model.spaces();
  if (options.masks && spaces.mask_size == 0) {
    throw RequestError(400, "rows with masks, but the action space " + spaces.action_space + " takes no mask", "X-Rlx-Action-Mask");
  }
  const size_t float_bytes = static_cast<size_t>(spaces.float_size) * sizeof(float);
  const size_t row_bytes = float_bytes + static_cast<size_t>(spaces.byte_size) + (options.masks ? static_cast<size_t>(spaces.mask_size) : 0);
  if (body.empty() || row_bytes == 0 || body.size() % row_bytes != 0) {
    throw RequestError(400,
                       "the body's " + std::to_string(body.size()) + " bytes are not a whole number of rows of " +
                           std::to_string(row_bytes) + " bytes (" + std::to_string(spaces.float_size) + " float32, " +
                           std::to_string(spaces.byte_size) + " uint8" +
                           (options.masks ? ", " + std::to_string(spaces.mask_size) + " mask bytes" : std::string()) + ")",
                       "body");
  }
  request.rows = static_cast<int64_t>(body.size() / row_bytes);
  if (request.rows > limits.max_rows) {
    throw RequestError(400, "at most " + std::to_string(limits.max_rows) + " rows per request, got " + std::to_string(request.rows), "body");
  }
  request.floats.resize(static_cast<size_t>(request.rows * spaces.float_size));
  request.bytes.resize(static_cast<size_t>(request.rows * spaces.byte_size));
  if (options.masks) request.masks.resize(static_cast<size_t>(request.rows * spaces.mask_size));
  const ObservationLayout& layout = model.layout();
  for (int64_t r = 0; r < request.rows; ++r) {
    const char* row = body.data() + static_cast<size_t>(r) * row_bytes;
    float* floats = request.floats.data() + r * spaces.float_size;
    if (float_bytes > 0) std::memcpy(floats, row, float_bytes);  // little-endian float32, as x86-64 holds them
    for (const ObsLeaf& leaf : layout.leaves) {
      if (leaf.storage != LeafStorage::kFloats) continue;
      for (int64_t i = 0; i < leaf.slots; ++i) {
        const float value = floats[leaf.offset + i];
        const auto where = [&] { return "row " + std::to_string(r) + " float " + std::to_string(leaf.offset + i); };
        if (!std::isfinite(value)) throw RequestError(400, where() + " is not finite (" + std::to_string(value) + ")", where());
        if (leaf.space.is_box()) continue;
        const int64_t low = leaf.space.is_discrete() ? leaf.space.start : leaf.space.starts.at(static_cast<size_t>(i));
        const int64_t count = leaf.space.is_discrete() ? leaf.space.n : leaf.space.nvec.at(static_cast<size_t>(i));
        if (value != std::floor(value) || value < static_cast<float>(low) || value >= static_cast<float>(low + count)) {
          throw RequestError(400, where() + " must be an integer in [" + std::to_string(low) + ", " + std::to_string(low + count - 1) +
                                      "] (" + leaf.space.to_string() + ")", where());
        }
      }
    }
    if (spaces.byte_size > 0) {
      std::memcpy(request.bytes.data() + r * spaces.byte_size, row + float_bytes, static_cast<size_t>(spaces.byte_size));
    }
    if (options.masks) {
      std::memcpy(request.masks.data() + r * spaces.mask_size, row + float_bytes + spaces.byte_size, static_cast<size_t>(spaces.mask_size));
    }
  }
  request.deterministic = options.deterministic;
  request.session = options.session;
  request.episode_start = options.episode_start;
  check_masks(model, request, "row", false);
  check_session(model, limits, request);
}

}  // namespace rlx
