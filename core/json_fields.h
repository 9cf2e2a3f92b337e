// Typed reading of the members of rlx's own JSON files (a tuner's state, a checkpoint's
// manifest): a missing member, or one of another type, is a JsonFieldError naming the member's
// path ("trials[2].status") and what was expected, instead of nlohmann's bare type error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace rlx {

// "PATH: expected WHAT, got VALUE"; the reader of a file adds the file's name.
class JsonFieldError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Marks a member that must be a JSON object or array (read as nlohmann::json).
struct JsonObject {};
struct JsonArray {};

namespace json_fields_detail {

// What a T of json_value_as expects, and the test a value must pass (none: any value).
struct Expectation {
  const char* what;
  bool (nlohmann::json::*is)() const noexcept;
};

template <typename T>
constexpr Expectation expectation() {
  using J = nlohmann::json;
  if constexpr (std::is_same_v<T, std::string>) return {"a string", &J::is_string};
  if constexpr (std::is_same_v<T, bool>) return {"true or false", &J::is_boolean};
  if constexpr (std::is_same_v<T, int64_t>) return {"an integer", &J::is_number_integer};
  if constexpr (std::is_same_v<T, double>) return {"a number", &J::is_number};
  if constexpr (std::is_same_v<T, JsonObject>) return {"an object", &J::is_object};
  if constexpr (std::is_same_v<T, JsonArray>) return {"an array", &J::is_array};
  if constexpr (std::is_same_v<T, J>) return {"a value", nullptr};
}

// The markers and nlohmann::json read as the value itself; the rest as T.
template <typename T>
constexpr bool kAsJson = std::is_same_v<T, JsonObject> || std::is_same_v<T, JsonArray> || std::is_same_v<T, nlohmann::json>;

inline std::string shown(const nlohmann::json& value) {
  const std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

}  // namespace json_fields_detail

// What json_field<T> returns, by value.
template <typename T>
using JsonFieldType = std::conditional_t<json_fields_detail::kAsJson<T>, nlohmann::json, T>;

// `path` + "." + `key` ("key" alone for the top level).
inline std::string json_member_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// `path` + "[" + index + "]".
inline std::string json_element_path(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// `value` (found at `path`) as T: std::string, bool, int64_t, double, JsonObject or JsonArray
// (returned as the nlohmann::json itself) or nlohmann::json (any value); JsonFieldError otherwise.
template <typename T>
std::conditional_t<json_fields_detail::kAsJson<T>, const nlohmann::json&, T> json_value_as(const nlohmann::json& value,
                                                                                          const std::string& path) {
  constexpr json_fields_detail::Expectation expected = json_fields_detail::expectation<T>();
  if (expected.is && !(value.*expected.is)()) {
    throw JsonFieldError(path + ": expected " + expected.what + ", got " + json_fields_detail::shown(value));
  }
  if constexpr (json_fields_detail::kAsJson<T>) {
    return value;
  } else {
    return value.template get<T>();
  }
}

// object[key] as T (see json_value_as); `path` is the object's own path ("" for the top level).
// JsonFieldError when `object` is not an object, has no `key`, or holds another type there.
template <typename T>
decltype(auto) json_field(const nlohmann::json& object, const std::string& key, const std::string& path = "") {
  if (!object.is_object()) {
    throw JsonFieldError((path.empty() ? std::string("the top level") : path) + ": expected an object, got " +
                         json_fields_detail::shown(object));
  }
  const auto it = object.find(key);
  if (it == object.end()) {
    throw JsonFieldError(json_member_path(path, key) + ": missing (expected " + json_fields_detail::expectation<T>().what + ")");
  }
  return json_value_as<T>(*it, json_member_path(path, key));
}

// Like json_field, but nullopt when the member is missing or null.
template <typename T>
std::optional<JsonFieldType<T>> json_optional_field(const nlohmann::json& object, const std::string& key, const std::string& path = "") {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::nullopt;
  }
  return json_field<T>(object, key, path);
}

}  // namespace rlx
