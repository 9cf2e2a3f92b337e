// NamedRegistry: a thread-safe map from names to entries that are added once and never removed,
// so a reference to an entry stays valid for the life of the process. rlx's extension points
// (models/layer_kinds.h, learner/torch_layers.h) keep their registrations in one.
#pragma once

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rlx {

template <typename Entry>
class NamedRegistry {
 public:
  // `what` names an entry in messages ("layer kind").
  explicit NamedRegistry(std::string what) : what_(std::move(what)) {}

  // Adds an entry; throws std::invalid_argument when the name is empty or taken.
  void add(const std::string& name, Entry entry) {
    if (name.empty()) throw std::invalid_argument(what_ + ": an empty name");
    std::lock_guard<std::mutex> lock(mutex_);
    if (!entries_.emplace(name, std::move(entry)).second) {
      throw std::invalid_argument(what_ + " '" + name + "' is registered already");
    }
  }

  // The entry of a name; nullptr when there is none. Entries are never removed, so the pointer
  // stays valid.
  const Entry* find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }

  // Every name, sorted.
  std::vector<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> out;
    for (const auto& item : entries_) out.push_back(item.first);
    return out;
  }

 private:
  std::string what_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

// "a, b, c": names joined for a message.
inline std::string joined_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace rlx
