#include <string>

#include <catch2/catch.hpp>

#include "transport/peer_guard.h"

namespace rlx {
namespace {

TEST_CASE("a peer is dropped after too many consecutive bad messages", "[transport]") {
  PeerGuard guard(PeerGuardOptions{3, 100, 16});
  CHECK(!guard.record_bad("a"));
  CHECK(!guard.record_bad("a"));
  guard.record_good("a");  // the run of bad messages starts over
  CHECK(!guard.record_bad("a"));
  CHECK(!guard.record_bad("a"));
  CHECK(!guard.should_drop("a"));
  CHECK(guard.record_bad("a"));
  CHECK(guard.should_drop("a"));
  CHECK(!guard.should_drop("b"));
  CHECK(guard.dropped_total() == 1);
  guard.forget("a");
  CHECK(!guard.should_drop("a"));
  CHECK(guard.tracked_peers() == 0);
}

TEST_CASE("a peer is dropped after too many bad messages in all", "[transport]") {
  PeerGuard guard(PeerGuardOptions{100, 4, 16});
  for (int i = 0; i < 3; ++i) {
    CHECK(!guard.record_bad("p"));
    guard.record_good("p");
  }
  CHECK(guard.record_bad("p"));
  CHECK(guard.dropped_total() == 1);
}

TEST_CASE("the guard remembers a bounded number of peers, oldest forgotten first", "[transport]") {
  PeerGuard guard(PeerGuardOptions{2, 100, 3});
  guard.record_bad("a");
  guard.record_bad("b");
  guard.record_bad("c");
  guard.record_bad("a");  // a is now the newest; b the oldest
  CHECK(guard.should_drop("a"));
  guard.record_bad("d");  // evicts b
  CHECK(guard.tracked_peers() == 3);
  CHECK(!guard.record_bad("b"));  // b starts over (and evicts c)
  CHECK(guard.record_bad("d"));
  CHECK(guard.should_drop("a"));
  for (int i = 0; i < 1000; ++i) guard.record_bad("peer-" + std::to_string(i));
  CHECK(guard.tracked_peers() == 3);
  guard.record_good("never-seen");
  CHECK(guard.tracked_peers() == 3);
}

TEST_CASE("peer guard options must be positive", "[transport]") {
  CHECK_THROWS_AS(PeerGuard(PeerGuardOptions{0, 1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(PeerGuard(PeerGuardOptions{1, 0, 1}), std::invalid_argument);
  CHECK_THROWS_AS(PeerGuard(PeerGuardOptions{1, 1, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace rlx
