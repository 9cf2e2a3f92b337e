// LearnerGroup's elastic side (rank 0): the first generation, taking joiners in at iteration
// boundaries, and re-forming the group after a generation failed.
#include <algorithm>
#include <thread>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "core/atomic_file.h"
#include "core/error_text.h"
#include "core/log.h"
#include "learner/learner_group.h"
#include "learner/rank_commands.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

constexpr std::chrono::milliseconds kPoll{50};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string ticket_list(ElasticMembership& membership, const std::vector<int64_t>& tickets) {
  std::string text;
  for (const int64_t ticket : tickets) {
    const std::optional<TicketHolder> holder = membership.holder(ticket);
    text += (text.empty() ? "" : ", ") + std::string("ticket ") + std::to_string(ticket) +
            (holder ? " (" + holder->describe() + ")" : "");
  }
  return text.empty() ? "none" : text;
}

}  // namespace

void LearnerGroup::start_elastic(int port) {
  const std::optional<RankPlacement>& placement = options_.placement;
  if (options_.max_learners == 0) options_.max_learners = options_.num_learners;
  if (options_.min_learners > options_.num_learners || options_.num_learners > options_.max_learners) {
    throw std::invalid_argument("an elastic learner group needs min_learners <= num_learners <= max_learners, got " +
                                std::to_string(options_.min_learners) + ", " + std::to_string(options_.num_learners) +
                                ", " + std::to_string(options_.max_learners));
  }
  const std::string host = placement ? placement->master_addr : local_host_name();
  if (!options_.join_file.empty()) write_file_atomic(options_.join_file, host + ":" + std::to_string(port) + "\n");
  file_logger().info("elastic learner group: rank 0 serves the rendezvous at {}:{}; more ranks join with `rlx learner --join {}:{}`{}",
                     host, port, host, port,
                     options_.join_file.empty() ? "" : " or --join-file " + options_.join_file.string());
  const GlooEndpoint gloo = placement ? gloo_endpoint_from_environment(placement->master_addr) : GlooEndpoint{};
  member_ = std::make_unique<LearnerGroupMember>(store_, learner_device(options_.device, placement ? placement->local_rank : 0),
                                                 options_.timeout, gloo, std::nullopt);
  watch_ = std::make_unique<HeartbeatWatch>(kHeartbeatStaleAfter);
  if (!placement) launch_children(port, /*elastic=*/true);
  form_first_generation();
}

void LearnerGroup::form_first_generation() {
  ElasticMembership& membership = member_->membership();
  const auto deadline = Clock::now() + options_.timeout;
  const auto wanted = static_cast<size_t>(options_.num_learners - 1);
  std::vector<int64_t> joined = waiting_joiners();
  while (joined.size() < wanted && Clock::now() < deadline) {
    reap_exited_children();
    std::this_thread::sleep_for(kPoll);
    joined = waiting_joiners();
  }
  if (static_cast<int>(joined.size()) + 1 < options_.min_learners) {
    throw CommunicatorError("only " + std::to_string(joined.size() + 1) + " of " + std::to_string(options_.num_learners) +
                            " learner ranks joined within " + std::to_string(options_.timeout.count() / 1000) +
                            " s (learner_timeout_s), fewer than min_learners " + std::to_string(options_.min_learners));
  }
  // The launcher's order: ranks by the hint they were started with, then by ticket.
  const auto hint = [&](int64_t ticket) {
    const std::optional<TicketHolder> holder = membership.holder(ticket);
    return holder && holder->rank_hint >= 0 ? holder->rank_hint : options_.max_learners + 1;
  };
  std::stable_sort(joined.begin(), joined.end(), [&](int64_t a, int64_t b) { return hint(a) < hint(b); });
  joined.resize(std::min(joined.size(), static_cast<size_t>(options_.max_learners - 1)));
  GenerationPlan plan{1, {0}};
  plan.tickets.insert(plan.tickets.end(), joined.begin(), joined.end());
  form(plan);
  stats_ = ElasticGroupStats{plan.generation};  // the first generation is no regroup
}

std::vector<int64_t> LearnerGroup::waiting_joiners() {
  ElasticMembership& membership = member_->membership();
  std::vector<int64_t> waiting;
  const int64_t taken = membership.tickets_taken();
  for (int64_t ticket = 1; ticket <= taken; ++ticket) {
    if (dead_tickets_.count(ticket) != 0 || current_.rank_of(ticket) >= 0) continue;
    const std::optional<TicketHolder> holder = membership.holder(ticket);
    if (!holder) continue;  // taken a moment ago: its holder is being written
    if (!watch_->alive(membership, ticket)) {
      dead_tickets_.insert(ticket);  // waited, then went away
      continue;
    }
    if (watch_->seen_beating(ticket)) waiting.push_back(ticket);  // else: not yet seen to beat
  }
  return waiting;
}

void LearnerGroup::form(const GenerationPlan& plan) {
  const auto start = Clock::now();
  member_->membership().publish(plan);
  current_ = plan;  // a failure from here on is this generation's
  member_->form(plan);
  stats_.generation = plan.generation;
  ++stats_.regroups;
  stats_.regroup_s += seconds_since(start);
  logger().info("learner group generation {}: {} ranks ({})", plan.generation, plan.size(),
                ticket_list(member_->membership(), {plan.tickets.begin() + 1, plan.tickets.end()}));
}

void LearnerGroup::reap_exited_children() {
  for (size_t rank = 1; rank < ranks_.size(); ++rank) {
    if (!ranks_[rank]) continue;
    const std::optional<ChildExit> exit = ranks_[rank]->poll();
    if (!exit) continue;
    logger().warn("{}", describe_exit(rank, *exit));
    reaped_pids_.insert(ranks_[rank]->pid());
    ranks_[rank].reset();
  }
}

bool LearnerGroup::admit_joiners() {
  if (!options_.elastic) return false;
  reap_exited_children();
  ElasticMembership& membership = member_->membership();
  for (int rank = 1; rank < current_.size(); ++rank) {
    const int64_t ticket = current_.tickets[static_cast<size_t>(rank)];
    if (!watch_->alive(membership, ticket)) {
      throw CommunicatorError("learner rank " + std::to_string(rank) + " (" + ticket_list(membership, {ticket}) +
                              ") stopped its heartbeat");
    }
  }
  if (current_.size() >= options_.max_learners) return false;
  std::vector<int64_t> joiners = waiting_joiners();
  if (joiners.empty()) return false;
  joiners.resize(std::min(joiners.size(), static_cast<size_t>(options_.max_learners - current_.size())));
  GenerationPlan next{membership.latest_generation() + 1, current_.tickets};
  next.tickets.insert(next.tickets.end(), joiners.begin(), joiners.end());
  logger().info("learner group: {} joins at the iteration boundary", ticket_list(membership, joiners));
  membership.publish(next);  // before the followers read it
  const std::string regroup = encode_rank_command(RegroupCommand{next.generation}, 0);
  for (int rank = 1; rank < current_.size(); ++rank) send_bytes(member_->host(), regroup, rank);
  form(next);
  stats_.ranks_joined += static_cast<int64_t>(joiners.size());
  return true;
}

void LearnerGroup::recover(const std::string& reason) {
  const auto start = Clock::now();
  ElasticMembership& membership = member_->membership();
  member_->abandon();  // closes this rank's connections: followers waiting on it notice at once
  logger().warn("learner group generation {} failed: {}; re-forming it", current_.generation, reason);
  std::vector<int64_t> pending(current_.tickets.begin() + 1, current_.tickets.end());
  std::vector<std::pair<int, int64_t>> survivors;  // (old rank, new ticket)
  std::vector<int64_t> lost;
  const auto deadline = start + options_.timeout;
  while (!pending.empty()) {
    reap_exited_children();
    for (auto it = pending.begin(); it != pending.end();) {
      const std::optional<TicketHolder> holder = membership.holder(*it);
      const bool exited = holder && reaped_pids_.count(static_cast<pid_t>(holder->pid)) != 0;
      if (const std::optional<int64_t> now_holds = membership.lost_report(current_.generation, *it)) {
        survivors.emplace_back(current_.rank_of(*it), *now_holds);
      } else if (exited || !watch_->alive(membership, *it) || Clock::now() >= deadline) {
        lost.push_back(*it);
      } else {
        ++it;
        continue;
      }
      dead_tickets_.insert(*it);
      it = pending.erase(it);
    }
    if (!pending.empty()) std::this_thread::sleep_for(kPoll);
  }
  std::sort(survivors.begin(), survivors.end());
  GenerationPlan next{membership.latest_generation() + 1, {0}};
  for (const auto& survivor : survivors) next.tickets.push_back(survivor.second);
  for (const int64_t ticket : waiting_joiners()) {
    if (next.size() < options_.max_learners && next.rank_of(ticket) < 0) next.tickets.push_back(ticket);
  }
  stats_.ranks_lost += static_cast<int64_t>(lost.size());
  if (!lost.empty()) logger().warn("learner group: lost {}", ticket_list(membership, lost));
  if (next.size() < options_.min_learners) {
    stats_.regroup_s += seconds_since(start);
    throw LearnerGroupTooSmall("the elastic learner group is down to " + std::to_string(next.size()) +
                               " ranks, fewer than min_learners " + std::to_string(options_.min_learners) +
                               " (generation " + std::to_string(current_.generation) + " failed: " + reason +
                               "); resume from the last checkpoint when ranks are back");
  }
  stats_.regroup_s += seconds_since(start);
  try {
    form(next);
  } catch (const CommunicatorError& e) {  // a rank went away while forming: once more without it
    recover(error_text(e));
  }
}

}  // namespace rlx
