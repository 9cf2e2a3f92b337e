// The membership of an elastic learner group, kept in rank 0's c10d store. Every process that
// wants to learn takes a ticket (a number the store's counter hands out; rank 0, the driver, is
// ticket 0) and beats a heartbeat counter under it. Rank 0 alone decides who is in the group: it
// publishes numbered generations, each the list of tickets whose position is their rank, and the
// ranks build that generation's communicators under the prefix rlx/gen/<generation>/. A rank whose
// generation fails takes a fresh ticket and reports it as lost/<generation>/<old ticket>, which
// tells rank 0 it survived; it then waits for a generation that lists its new ticket. Keys:
//
//   rlx/elastic/tickets            the counter (add 1 takes a ticket)
//   rlx/elastic/ticket/<t>         who holds ticket t: {"host", "pid", "rank_hint"}
//   rlx/elastic/beat/<t>           t's heartbeat counter
//   rlx/elastic/generation/<g>     {"generation": g, "tickets": [0, t1, t2, ...]}
//   rlx/elastic/latest             the newest generation published (written after it)
//   rlx/elastic/lost/<g>/<t>       t survived generation g's failure and now holds this ticket
//   rlx/elastic/finished           the run is over: waiting ranks leave
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <c10/util/intrusive_ptr.h>

namespace c10d {
class Store;
}  // namespace c10d

namespace rlx {

// One generation of the group: rank r is held by tickets[r] (rank 0 by the driver's ticket 0).
struct GenerationPlan {
  int64_t generation = 0;
  std::vector<int64_t> tickets;

  int size() const { return static_cast<int>(tickets.size()); }
  // The rank of `ticket` in this generation; -1 when it is not in it.
  int rank_of(int64_t ticket) const;
};

// Who took a ticket.
struct TicketHolder {
  std::string host;
  int64_t pid = 0;
  int rank_hint = -1;  // the rank its launcher meant it for (orders the first generation); -1: none

  // "host:pid" for messages.
  std::string describe() const;
};

// The membership keys of one store; every method is one or two store calls and none blocks.
class ElasticMembership {
 public:
  explicit ElasticMembership(c10::intrusive_ptr<c10d::Store> store);
  ~ElasticMembership();
  ElasticMembership(const ElasticMembership&) = delete;
  ElasticMembership& operator=(const ElasticMembership&) = delete;

  // Takes the next ticket (1, 2, ...) and records its holder.
  int64_t take_ticket(const TicketHolder& holder);
  // Tickets taken so far (the highest ticket).
  int64_t tickets_taken();
  // The holder of `ticket`; nullopt while it has not written itself (or never will).
  std::optional<TicketHolder> holder(int64_t ticket);

  // Writes generation plan.generation, then moves latest to it.
  void publish(const GenerationPlan& plan);
  // The newest generation published; 0 before the first.
  int64_t latest_generation();
  // Generation `generation`'s plan; nullopt while unpublished. std::runtime_error naming the key
  // when the stored plan is malformed.
  std::optional<GenerationPlan> plan(int64_t generation);

  // `ticket` survived generation `generation` and now holds `new_ticket`.
  void report_lost(int64_t generation, int64_t ticket, int64_t new_ticket);
  // What report_lost wrote for (generation, ticket).
  std::optional<int64_t> lost_report(int64_t generation, int64_t ticket);

  // Adds one to ticket's heartbeat counter.
  void beat(int64_t ticket);
  // Ticket's heartbeat count (0 before its first beat).
  int64_t beats(int64_t ticket);

  // The run is over: ranks waiting for a generation leave.
  void mark_finished();
  bool finished();

 private:
  c10::intrusive_ptr<c10d::Store> store_;
};

// Beats a ticket's heartbeat from a thread of its own, on a store client of its own (so that a
// store call the owner blocks in never stops the beats).
class StoreHeartbeat {
 public:
  // Connects to the store at host:port and beats every `period`; ticket() may change later.
  StoreHeartbeat(const std::string& host, int port, int64_t ticket, std::chrono::milliseconds period);
  ~StoreHeartbeat();
  StoreHeartbeat(const StoreHeartbeat&) = delete;
  StoreHeartbeat& operator=(const StoreHeartbeat&) = delete;

  // Beats `ticket` from now on (a rank that rejoined holds a new one).
  void set_ticket(int64_t ticket) { ticket_.store(ticket); }

 private:
  void run(std::chrono::milliseconds period);

  std::unique_ptr<ElasticMembership> membership_;
  std::atomic<int64_t> ticket_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Rank 0's view of the heartbeats: a ticket is alive while its counter moved within `stale_after`.
class HeartbeatWatch {
 public:
  explicit HeartbeatWatch(std::chrono::milliseconds stale_after) : stale_after_(stale_after) {}

  // Reads ticket's counter; true while it moved within stale_after of now (or was first seen
  // less than stale_after ago).
  bool alive(ElasticMembership& membership, int64_t ticket);
  // True once ticket's counter was seen to move (after alive() read it twice): a rank whose
  // heartbeat connection is still stuck (TCP backoff after a cut) is not taken in before it beats.
  bool seen_beating(int64_t ticket) const;

 private:
  struct Seen {
    int64_t beats = -1;
    std::chrono::steady_clock::time_point changed;
    bool moved = false;
  };
  std::chrono::milliseconds stale_after_;
  std::map<int64_t, Seen> seen_;
};

// The period of a follower's heartbeat, and how long rank 0 waits past a stopped one.
constexpr std::chrono::milliseconds kHeartbeatPeriod{200};
constexpr std::chrono::milliseconds kHeartbeatStaleAfter{1500};

}  // namespace rlx
