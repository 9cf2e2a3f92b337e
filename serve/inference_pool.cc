#include "serve/inference_pool.h"

#include <algorithm>
#include <stdexcept>

#include "core/log.h"

namespace rlx {

namespace {

bool takeable(const ActRequest& request, const std::set<std::string>& busy_sessions) {
  return !request.session || busy_sessions.count(*request.session) == 0;
}

bool has_takeable(const std::deque<std::unique_ptr<ActRequest>>& waiting, const std::set<std::string>& busy_sessions) {
  return std::any_of(waiting.begin(), waiting.end(), [&](const auto& request) { return takeable(*request, busy_sessions); });
}

int64_t queued_rows(const std::deque<std::unique_ptr<ActRequest>>& waiting) {
  int64_t rows = 0;
  for (const auto& request : waiting) rows += request->rows;
  return rows;
}

}  // namespace

InferencePool::InferencePool(std::vector<PolicySlot*> slots, const BatchingOptions& options, ServeMetrics& metrics)
    : slots_(std::move(slots)), options_(options), metrics_(metrics), queues_(slots_.size()) {
  if (options_.threads < 1) throw std::invalid_argument("the inference pool needs at least 1 thread");
  if (options_.max_batch_rows < 1) throw std::invalid_argument("max_batch_rows must be at least 1");
  for (int t = 0; t < options_.threads; ++t) threads_.emplace_back([this, t] { run(t); });
}

InferencePool::~InferencePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

bool InferencePool::submit(std::unique_ptr<ActRequest>& request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Queue& queue = queues_.at(request->slot);
    if (stopping_ || queue.waiting.size() >= options_.max_queue) return false;
    queue.waiting.push_back(std::move(request));
  }
  work_ready_.notify_one();
  return true;
}

bool InferencePool::run_inline(std::unique_ptr<ActRequest>& request, int lane) {
  if (lane < 0 || lane >= options_.inline_lanes) throw std::out_of_range("run_inline: no lane " + std::to_string(lane));
  if (request->rows * request->model->act_micros() > options_.max_inline_act_micros) return false;
  Batch batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Queue& queue = queues_.at(request->slot);
    if (stopping_ || running_ > 0 || !queue.waiting.empty() || options_.max_wait.count() > 0) return false;
    if (request->session && !queue.busy_sessions.insert(*request->session).second) return false;
    batch.slot = request->slot;
    batch.requests.push_back(std::move(request));
    running_ = 1;
  }
  answer(batch, options_.threads + lane);
  finish(batch);
  return true;
}

void InferencePool::finish(const Batch& batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ -= batch.requests.size();
  bool freed_session = false;
  for (const auto& request : batch.requests) {
    if (request->session) freed_session = queues_[batch.slot].busy_sessions.erase(*request->session) > 0 || freed_session;
  }
  if (freed_session) work_ready_.notify_all();
  idle_.notify_all();
}

size_t InferencePool::queue_depth(size_t slot) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queues_.at(slot).waiting.size();
}

size_t InferencePool::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t total = running_;
  for (const Queue& queue : queues_) total += queue.waiting.size();
  return total;
}

bool InferencePool::wait_idle(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return idle_.wait_for(lock, timeout, [&] {
    if (running_ > 0) return false;
    return std::all_of(queues_.begin(), queues_.end(), [](const Queue& queue) { return queue.waiting.empty(); });
  });
}

void InferencePool::run(int thread) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] {
      if (stopping_) return true;
      return std::any_of(queues_.begin(), queues_.end(),
                         [](const Queue& queue) { return has_takeable(queue.waiting, queue.busy_sessions); });
    });
    const bool empty = std::all_of(queues_.begin(), queues_.end(), [](const Queue& queue) { return queue.waiting.empty(); });
    if (stopping_ && empty) break;
    Batch batch = take_batch(lock);
    if (batch.requests.empty()) {
      if (stopping_) work_ready_.wait_for(lock, std::chrono::milliseconds(1));  // busy sessions finish elsewhere
      continue;
    }
    lock.unlock();
    answer(batch, thread);
    finish(batch);
    lock.lock();
  }
}

InferencePool::Batch InferencePool::take_batch(std::unique_lock<std::mutex>& lock) {
  Batch batch;
  size_t chosen = queues_.size();
  for (size_t i = 0; i < queues_.size(); ++i) {
    const size_t s = (next_slot_ + i) % queues_.size();
    if (has_takeable(queues_[s].waiting, queues_[s].busy_sessions)) {
      chosen = s;
      break;
    }
  }
  if (chosen == queues_.size()) return batch;
  next_slot_ = chosen + 1;
  Queue& queue = queues_[chosen];
  if (options_.max_wait.count() > 0 && !stopping_ && queued_rows(queue.waiting) < options_.max_batch_rows) {
    const auto deadline = queue.waiting.front()->received + options_.max_wait;
    work_ready_.wait_until(lock, deadline, [&] { return stopping_ || queued_rows(queue.waiting) >= options_.max_batch_rows; });
    if (queue.waiting.empty()) return batch;  // another thread took them
  }
  batch.slot = chosen;
  int64_t rows = 0;
  const ServedModel* model = nullptr;
  for (auto it = queue.waiting.begin(); it != queue.waiting.end();) {
    ActRequest& request = **it;
    const bool fits = batch.requests.empty() || rows + request.rows <= options_.max_batch_rows;
    if (!fits) break;
    if (!takeable(request, queue.busy_sessions) || (model != nullptr && request.model.get() != model)) {
      ++it;  // a session's earlier step runs, or another version: a later batch
      continue;
    }
    model = request.model.get();
    rows += request.rows;
    if (request.session) queue.busy_sessions.insert(*request.session);
    batch.requests.push_back(std::move(*it));
    it = queue.waiting.erase(it);
  }
  running_ += batch.requests.size();
  return batch;
}

void InferencePool::answer(const Batch& batch, int thread) {
  std::vector<ActReply> replies = act(batch, thread);
  for (size_t i = 0; i < batch.requests.size(); ++i) batch.requests[i]->done(std::move(replies[i]));
}

std::vector<ActReply> InferencePool::act(const Batch& batch, int thread) {
  const ServedModel& model = *batch.requests.front()->model;
  Policy& policy = model.policy(thread);
  const ServedSpaces& spaces = model.spaces();
  const auto float_size = static_cast<size_t>(spaces.float_size);
  const auto byte_size = static_cast<size_t>(spaces.byte_size);
  const auto mask_size = static_cast<size_t>(spaces.mask_size);
  const auto now = SessionStore::Clock::now();
  SessionStore& sessions = slots_[batch.slot]->sessions();
  std::vector<ActReply> replies(batch.requests.size());
  std::vector<std::vector<float>> states(batch.requests.size());
  std::vector<bool> refused(batch.requests.size(), false);
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    const ActRequest& request = *batch.requests[i];
    replies[i].version = model.version();
    if (spaces.state_size == 0) continue;
    std::optional<std::vector<float>> state =
        sessions.state_of(*request.session, request.episode_start, static_cast<size_t>(spaces.state_size), now);
    if (!state) {
      replies[i] = error_reply(429, "the session table is full (--max-sessions live sessions): end sessions or wait for their time-to-live",
                               "session");
      refused[i] = true;
      continue;
    }
    states[i] = std::move(*state);
  }
  size_t total_rows = 0;
  for (const bool deterministic : {true, false}) {
    std::vector<PolicyObservation> observations;
    std::vector<const std::vector<float>*> state_of_row;
    std::vector<size_t> owner;  // the request of each row
    for (size_t i = 0; i < batch.requests.size(); ++i) {
      const ActRequest& request = *batch.requests[i];
      if (refused[i] || request.deterministic != deterministic) continue;
      for (int64_t r = 0; r < request.rows; ++r) {
        PolicyObservation row;
        row.floats = request.floats.data() + static_cast<size_t>(r) * float_size;
        row.float_count = float_size;
        row.bytes = request.bytes.data() + static_cast<size_t>(r) * byte_size;
        row.byte_count = byte_size;
        if (!request.masks.empty()) {
          row.mask = request.masks.data() + static_cast<size_t>(r) * mask_size;
          row.mask_count = mask_size;
        }
        observations.push_back(row);
        if (spaces.state_size > 0) state_of_row.push_back(&states[i]);
        owner.push_back(i);
      }
    }
    if (observations.empty()) continue;
    total_rows += observations.size();
    try {
      std::vector<PolicyAction> actions = policy.act_batch(observations, state_of_row, deterministic);
      for (size_t row = 0; row < actions.size(); ++row) replies[owner[row]].actions.push_back(std::move(actions[row]));
    } catch (const std::exception& error) {  // decoding checked every row: this is the server's fault
      logger().error("policy {}: a batch of {} rows failed: {}", slots_[batch.slot]->name(), observations.size(), error.what());
      for (size_t i : owner) replies[i] = error_reply(500, std::string("inference failed: ") + error.what());
    }
  }
  for (size_t i = 0; i < batch.requests.size(); ++i) {
    const ActRequest& request = *batch.requests[i];
    if (spaces.state_size == 0 || refused[i] || replies[i].status != 200) continue;
    sessions.keep(*request.session, replies[i].actions.front().state, now);
  }
  metrics_.count_batch(total_rows);
  return replies;
}

}  // namespace rlx
