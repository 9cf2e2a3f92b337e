#include "serve/session_store.h"

namespace rlx {

SessionStore::SessionStore(size_t max_sessions, std::chrono::milliseconds ttl) : max_sessions_(max_sessions), ttl_(ttl) {}

std::optional<std::vector<float>> SessionStore::state_of(const std::string& id, bool episode_start, size_t state_size,
                                                         Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = sessions_.find(id);
  if (found != sessions_.end() && now - found->second.last_used > ttl_) {
    sessions_.erase(found);
    ++expired_total_;
    found = sessions_.end();
  }
  if (found == sessions_.end()) {
    if (sessions_.size() >= max_sessions_ && expire_locked(now) == 0) return std::nullopt;
    return std::vector<float>(state_size, 0.0f);
  }
  if (episode_start || found->second.state.size() != state_size) return std::vector<float>(state_size, 0.0f);
  return found->second.state;
}

void SessionStore::keep(const std::string& id, std::vector<float> state, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& entry = sessions_[id];
  entry.state = std::move(state);
  entry.last_used = now;
}

size_t SessionStore::expire(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  return expire_locked(now);
}

size_t SessionStore::expire_locked(Clock::time_point now) {
  size_t removed = 0;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > ttl_) {
      it = sessions_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  expired_total_ += removed;
  return removed;
}

size_t SessionStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size();
}

uint64_t SessionStore::expired_total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return expired_total_;
}

}  // namespace rlx
