#include "transport/peer_guard.h"

#include <stdexcept>

namespace rlx {

PeerGuard::PeerGuard(PeerGuardOptions options) : options_(options) {
  if (options_.max_consecutive_bad == 0 || options_.max_total_bad == 0 || options_.max_peers == 0) {
    throw std::invalid_argument("PeerGuard thresholds and max_peers must be >= 1");
  }
}

void PeerGuard::record_good(const std::string& peer) {
  auto it = peers_.find(peer);
  if (it != peers_.end()) it->second.consecutive_bad = 0;
}

PeerGuard::Record& PeerGuard::touch(const std::string& peer) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) {
    if (peers_.size() >= options_.max_peers) {
      peers_.erase(recency_.back());
      recency_.pop_back();
    }
    recency_.push_front(peer);
    it = peers_.emplace(peer, Record{}).first;
    it->second.age = recency_.begin();
  } else {
    recency_.splice(recency_.begin(), recency_, it->second.age);
  }
  return it->second;
}

bool PeerGuard::drop(const std::string& peer) {
  Record& record = touch(peer);
  if (record.dropped) return false;
  record.dropped = true;
  ++dropped_total_;
  return true;
}

bool PeerGuard::record_bad(const std::string& peer) {
  Record& record = touch(peer);
  ++record.consecutive_bad;
  ++record.total_bad;
  if (!record.dropped &&
      (record.consecutive_bad >= options_.max_consecutive_bad || record.total_bad >= options_.max_total_bad)) {
    record.dropped = true;
    ++dropped_total_;
  }
  return record.dropped;
}

bool PeerGuard::should_drop(const std::string& peer) const {
  auto it = peers_.find(peer);
  return it != peers_.end() && it->second.dropped;
}

void PeerGuard::forget(const std::string& peer) {
  auto it = peers_.find(peer);
  if (it == peers_.end()) return;
  recency_.erase(it->second.age);
  peers_.erase(it);
}

}  // namespace rlx
