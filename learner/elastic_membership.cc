#include "learner/elastic_membership.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "core/error_text.h"
#include "core/log.h"
#include "core/parse_number.h"

namespace rlx {

namespace {

constexpr const char* kPrefix = "rlx/elastic/";

std::string key(const std::string& name) { return kPrefix + name; }

std::vector<uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

// The value at `name`; nullopt while it is unset (check, then get: never blocks).
std::optional<std::string> read(c10d::Store& store, const std::string& name) {
  if (!store.check({name})) return std::nullopt;
  const std::vector<uint8_t> value = store.get(name);
  return std::string(value.begin(), value.end());
}

int64_t parse_count(const std::string& text, const std::string& name) {
  const std::optional<int64_t> value = parse_whole_int64(text);
  if (!value || *value < 0) throw std::runtime_error("elastic group: key " + name + " holds '" + text + "', not a count");
  return *value;
}

}  // namespace

int GenerationPlan::rank_of(int64_t ticket) const {
  for (size_t r = 0; r < tickets.size(); ++r) {
    if (tickets[r] == ticket) return static_cast<int>(r);
  }
  return -1;
}

std::string TicketHolder::describe() const { return host + ":" + std::to_string(pid); }

ElasticMembership::ElasticMembership(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {}

ElasticMembership::~ElasticMembership() = default;

int64_t ElasticMembership::take_ticket(const TicketHolder& holder) {
  const int64_t ticket = store_->add(key("tickets"), 1);
  const nlohmann::json who = {{"host", holder.host}, {"pid", holder.pid}, {"rank_hint", holder.rank_hint}};
  store_->set(key("ticket/" + std::to_string(ticket)), bytes_of(who.dump()));
  return ticket;
}

int64_t ElasticMembership::tickets_taken() { return store_->add(key("tickets"), 0); }

std::optional<TicketHolder> ElasticMembership::holder(int64_t ticket) {
  const std::string name = key("ticket/" + std::to_string(ticket));
  const std::optional<std::string> text = read(*store_, name);
  if (!text) return std::nullopt;
  try {
    const nlohmann::json who = nlohmann::json::parse(*text);
    return TicketHolder{who.at("host").get<std::string>(), who.at("pid").get<int64_t>(), who.at("rank_hint").get<int>()};
  } catch (const std::exception& e) {
    throw std::runtime_error("elastic group: key " + name + " is not a ticket holder: " + error_text(e));
  }
}

void ElasticMembership::publish(const GenerationPlan& plan) {
  const nlohmann::json json = {{"generation", plan.generation}, {"tickets", plan.tickets}};
  store_->set(key("generation/" + std::to_string(plan.generation)), bytes_of(json.dump()));
  store_->set(key("latest"), bytes_of(std::to_string(plan.generation)));
}

int64_t ElasticMembership::latest_generation() {
  const std::optional<std::string> text = read(*store_, key("latest"));
  return text ? parse_count(*text, key("latest")) : 0;
}

std::optional<GenerationPlan> ElasticMembership::plan(int64_t generation) {
  const std::string name = key("generation/" + std::to_string(generation));
  const std::optional<std::string> text = read(*store_, name);
  if (!text) return std::nullopt;
  GenerationPlan plan;
  try {
    const nlohmann::json json = nlohmann::json::parse(*text);
    plan.generation = json.at("generation").get<int64_t>();
    plan.tickets = json.at("tickets").get<std::vector<int64_t>>();
  } catch (const std::exception& e) {
    throw std::runtime_error("elastic group: key " + name + " is not a generation plan: " + error_text(e));
  }
  if (plan.generation != generation || plan.tickets.empty() || plan.tickets.front() != 0) {
    throw std::runtime_error("elastic group: key " + name + " holds generation " + std::to_string(plan.generation) +
                             " with " + std::to_string(plan.tickets.size()) + " tickets, expected generation " +
                             std::to_string(generation) + " led by ticket 0");
  }
  return plan;
}

void ElasticMembership::report_lost(int64_t generation, int64_t ticket, int64_t new_ticket) {
  store_->set(key("lost/" + std::to_string(generation) + "/" + std::to_string(ticket)), bytes_of(std::to_string(new_ticket)));
}

std::optional<int64_t> ElasticMembership::lost_report(int64_t generation, int64_t ticket) {
  const std::string name = key("lost/" + std::to_string(generation) + "/" + std::to_string(ticket));
  const std::optional<std::string> text = read(*store_, name);
  if (!text) return std::nullopt;
  return parse_count(*text, name);
}

void ElasticMembership::beat(int64_t ticket) { store_->add(key("beat/" + std::to_string(ticket)), 1); }

int64_t ElasticMembership::beats(int64_t ticket) { return store_->add(key("beat/" + std::to_string(ticket)), 0); }

void ElasticMembership::mark_finished() { store_->set(key("finished"), bytes_of("1")); }

bool ElasticMembership::finished() { return store_->check({key("finished")}); }

StoreHeartbeat::StoreHeartbeat(const std::string& host, int port, int64_t ticket, std::chrono::milliseconds period)
    : ticket_(ticket) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(port);
  options.isServer = false;
  options.waitWorkers = false;
  options.timeout = std::chrono::milliseconds(30000);
  membership_ = std::make_unique<ElasticMembership>(c10::make_intrusive<c10d::TCPStore>(host, options));
  thread_ = std::thread([this, period] { run(period); });
}

StoreHeartbeat::~StoreHeartbeat() {
  stop_ = true;
  thread_.join();
}

void StoreHeartbeat::run(std::chrono::milliseconds period) {
  const auto step = std::chrono::milliseconds(20);
  while (!stop_) {
    try {
      membership_->beat(ticket_.load());
    } catch (const std::exception& e) {  // rank 0 gone: the owner finds out on its own calls
      logger().debug("heartbeat stopped: {}", error_text(e));
      return;
    }
    for (auto waited = std::chrono::milliseconds(0); waited < period && !stop_; waited += step) std::this_thread::sleep_for(step);
  }
}

bool HeartbeatWatch::alive(ElasticMembership& membership, int64_t ticket) {
  const auto now = std::chrono::steady_clock::now();
  const int64_t beats = membership.beats(ticket);
  auto [seen, first] = seen_.try_emplace(ticket);
  if (first) {
    seen->second = Seen{beats, now, false};
  } else if (seen->second.beats != beats) {
    seen->second = Seen{beats, now, true};
  }
  return now - seen->second.changed < stale_after_;
}

bool HeartbeatWatch::seen_beating(int64_t ticket) const {
  const auto seen = seen_.find(ticket);
  return seen != seen_.end() && seen->second.moved;
}

}  // namespace rlx
