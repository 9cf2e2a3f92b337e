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

template <typename T>
struct Kind;
template <>
struct Kind<std::string> {
  static constexpr const char* kWhat = "a string";
  static bool fits(const nlohmann::json& v) { return v.is_string(); }
  static std::string get(const nlohmann::json& v) { return v.get<std::string>(); }
};
template <>
struct Kind<bool> {
  static constexpr const char* kWhat = "true or false";
  static bool fits(const nlohmann::json& v) { return v.is_boolean(); }
  static bool get(const nlohmann::json& v) { return v.get<bool>(); }
};
template <>
struct Kind<int64_t> {
  static constexpr const char* kWhat = "an integer";
  static bool fits(const nlohmann::json& v) { return v.is_number_integer(); }
  static int64_t get(const nlohmann::json& v) { return v.get<int64_t>(); }
};
template <>
struct Kind<double> {
  static constexpr const char* kWhat = "a number";
  static bool fits(const nlohmann::json& v) { return v.is_number(); }
  static double get(const nlohmann::json& v) { return v.get<double>(); }
};
template <>
struct Kind<JsonObject> {
  static constexpr const char* kWhat = "an object";
  static bool fits(const nlohmann::json& v) { return v.is_object(); }
  static const nlohmann::json& get(const nlohmann::json& v) { return v; }
};
template <>
struct Kind<JsonArray> {
  static constexpr const char* kWhat = "an array";
  static bool fits(const nlohmann::json& v) { return v.is_array(); }
  static const nlohmann::json& get(const nlohmann::json& v) { return v; }
};
template <>
struct Kind<nlohmann::json> {
  static constexpr const char* kWhat = "a value";
  static bool fits(const nlohmann::json&) { return true; }
  static const nlohmann::json& get(const nlohmann::json& v) { return v; }
};

inline std::string shown(const nlohmann::json& value) {
  const std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

}  // namespace json_fields_detail

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
decltype(auto) json_value_as(const nlohmann::json& value, const std::string& path) {
  using Kind = json_fields_detail::Kind<T>;
  if (!Kind::fits(value)) {
    throw JsonFieldError(path + ": expected " + Kind::kWhat + ", got " + json_fields_detail::shown(value));
  }
  return Kind::get(value);
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
    throw JsonFieldError(json_member_path(path, key) + ": missing (expected " + json_fields_detail::Kind<T>::kWhat + ")");
  }
  return json_value_as<T>(*it, json_member_path(path, key));
}

// What json_field<T> returns, by value.
template <typename T>
using JsonFieldType = std::decay_t<decltype(json_fields_detail::Kind<T>::get(std::declval<const nlohmann::json&>()))>;

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
