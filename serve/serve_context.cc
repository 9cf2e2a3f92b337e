#include "serve/serve_context.h"

namespace rlx {

namespace {

thread_local int current_inline_lane = -1;

std::vector<PolicySlot*> pointers(const std::vector<std::unique_ptr<PolicySlot>>& slots) {
  std::vector<PolicySlot*> out;
  for (const auto& slot : slots) out.push_back(slot.get());
  return out;
}

}  // namespace

void set_inline_lane(int lane) { current_inline_lane = lane; }

ServeContext::ServeContext(std::vector<std::unique_ptr<PolicySlot>> slots, const BatchingOptions& batching,
                           const RequestLimits& limits)
    : slots_(std::move(slots)),
      metrics_(slots_.size()),
      limits_(limits),
      pool_(std::make_unique<InferencePool>(pointers(slots_), batching, metrics_)),
      reload_thread_([this] { run_reloads(); }) {}

ServeContext::~ServeContext() {
  {
    std::lock_guard<std::mutex> lock(reload_mutex_);
    reload_stopping_ = true;
    reload_jobs_.clear();
  }
  reload_ready_.notify_all();
  reload_thread_.join();
  pool_.reset();
}

std::optional<size_t> ServeContext::slot_index(const std::string& name) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i]->name() == name) return i;
  }
  return std::nullopt;
}

std::vector<std::string> ServeContext::slot_names() const {
  std::vector<std::string> names;
  for (const auto& slot : slots_) names.push_back(slot->name());
  return names;
}

void ServeContext::submit(std::unique_ptr<ActRequest> request) {
  if (draining()) {
    request->done(error_reply(503, "the server is shutting down"));
    return;
  }
  if (current_inline_lane >= 0 && pool_->run_inline(request, current_inline_lane)) return;
  if (!pool_->submit(request)) {
    request->done(error_reply(503, "policy " + slots_.at(request->slot)->name() + " has a full queue: retry later"));
  }
}

void ServeContext::reload(size_t index, bool force, std::function<void(const ReloadOutcome&)> done) {
  {
    std::lock_guard<std::mutex> lock(reload_mutex_);
    if (reload_stopping_) return;
    reload_jobs_.push_back({index, force, std::move(done)});
  }
  reload_ready_.notify_one();
}

void ServeContext::run_reloads() {
  std::unique_lock<std::mutex> lock(reload_mutex_);
  while (true) {
    reload_ready_.wait(lock, [&] { return reload_stopping_ || !reload_jobs_.empty(); });
    if (reload_jobs_.empty()) return;
    ReloadJob job = std::move(reload_jobs_.front());
    reload_jobs_.pop_front();
    lock.unlock();
    const ReloadOutcome outcome = slots_.at(job.index)->reload(job.force);
    if (outcome.result != ReloadOutcome::Result::kUnchanged) {
      metrics_.count_reload(job.index, outcome.result == ReloadOutcome::Result::kSwapped);
    }
    if (job.done) job.done(outcome);
    lock.lock();
  }
}

std::string ServeContext::metrics_text(size_t connections) const {
  std::vector<PolicyGauges> gauges;
  for (size_t i = 0; i < slots_.size(); ++i) {
    PolicyGauges g;
    g.name = slots_[i]->name();
    g.version = slots_[i]->model()->version();
    g.queue_depth = pool_->queue_depth(i);
    g.sessions = slots_[i]->sessions().size();
    gauges.push_back(std::move(g));
  }
  return metrics_.prometheus(gauges, connections, draining());
}

}  // namespace rlx
