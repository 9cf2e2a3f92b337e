// PeerGuard: tracks bad messages per peer (e.g. a ROUTER identity) and says when a peer
// should be dropped. Memory is bounded: at most max_peers peers with bad messages are
// remembered, the one whose last bad message is oldest is forgotten first. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

namespace rlx {

struct PeerGuardOptions {
  uint32_t max_consecutive_bad = 8;  // drop after this many bad messages in a row
  uint64_t max_total_bad = 64;       // or after this many in all
  size_t max_peers = 4096;           // peers remembered at once
};

class PeerGuard {
 public:
  // Throws std::invalid_argument if a threshold or max_peers is 0.
  explicit PeerGuard(PeerGuardOptions options = {});

  // Records a good message; ends the peer's run of bad ones.
  void record_good(const std::string& peer);
  // Records a bad message; returns true when the peer should now be dropped.
  bool record_bad(const std::string& peer);
  // Drops a peer at once (e.g. it broke the protocol's contract); true if it was not dropped yet.
  bool drop(const std::string& peer);
  // Whether the peer has crossed a threshold or was dropped (and has not been forgotten since).
  bool should_drop(const std::string& peer) const;
  // Forgets a peer, e.g. once it has been disconnected.
  void forget(const std::string& peer);

  // Peers remembered now (never more than max_peers).
  size_t tracked_peers() const { return peers_.size(); }
  // Peers that crossed a threshold since construction.
  uint64_t dropped_total() const { return dropped_total_; }

 private:
  struct Record {
    uint32_t consecutive_bad = 0;
    uint64_t total_bad = 0;
    bool dropped = false;
    std::list<std::string>::iterator age;  // position in recency_, newest at the front
  };

  PeerGuardOptions options_;
  std::unordered_map<std::string, Record> peers_;
  std::list<std::string> recency_;
  uint64_t dropped_total_ = 0;

  // The peer's record, made (forgetting the oldest when full) if needed, now the newest.
  Record& touch(const std::string& peer);
};

}  // namespace rlx
