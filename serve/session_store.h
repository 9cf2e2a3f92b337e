// The recurrent state of a served policy's sessions (one episode each), with a time-to-live and
// a bound on how many live at once. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace rlx {

class SessionStore {
 public:
  using Clock = std::chrono::steady_clock;

  // At most max_sessions sessions; one unused for ttl expires.
  SessionStore(size_t max_sessions, std::chrono::milliseconds ttl);

  // The state session `id` continues from: its last state, or state_size zeros when it is new,
  // expired or its episode starts; nullopt when the store is full of live sessions.
  std::optional<std::vector<float>> state_of(const std::string& id, bool episode_start, size_t state_size, Clock::time_point now);
  // Keeps `state` as the session's, to continue from at its next step.
  void keep(const std::string& id, std::vector<float> state, Clock::time_point now);
  // Removes the sessions unused for ttl; returns how many.
  size_t expire(Clock::time_point now);
  // Sessions held now.
  size_t size() const;
  // Sessions expired since the start.
  uint64_t expired_total() const;

 private:
  struct Entry {
    std::vector<float> state;
    Clock::time_point last_used;
  };
  size_t expire_locked(Clock::time_point now);

  const size_t max_sessions_;
  const std::chrono::milliseconds ttl_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> sessions_;
  uint64_t expired_total_ = 0;
};

}  // namespace rlx
