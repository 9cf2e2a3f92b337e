#include "rollout/worker_pool.h"

#include <thread>

#include "core/stop_signal.h"

namespace rlx {

namespace {

constexpr size_t kReportedLines = 8;

}  // namespace

WorkerPool::WorkerPool(WorkerPoolOptions options, ArgvFn argv_for)
    : options_(std::move(options)), argv_for_(std::move(argv_for)), launcher_(launcher_or_local(options_.launcher)) {
  workers_.resize(static_cast<size_t>(options_.num_workers));
  starts_.assign(static_cast<size_t>(options_.num_workers), 0);
  for (int i = 0; i < options_.num_workers; ++i) spawn(i);
}

WorkerPool::~WorkerPool() { stop(); }

std::filesystem::path WorkerPool::log_path(int worker_index) const {
  if (options_.log_dir.empty()) return {};
  return options_.log_dir / ("worker_" + std::to_string(worker_index + 1) + ".log");
}

void WorkerPool::spawn(int worker_index) {
  const auto i = static_cast<size_t>(worker_index);
  ++starts_[i];
  const std::string banner = log_banner("start " + std::to_string(starts_[i]) + " of worker " + std::to_string(worker_index + 1));
  workers_[i] = launcher_.launch({argv_for_(worker_index), options_.env, log_path(worker_index), banner});
}

std::vector<WorkerExitReport> WorkerPool::poll() {
  std::vector<WorkerExitReport> reports;
  for (size_t i = 0; i < workers_.size(); ++i) {
    if (!workers_[i]) continue;
    const std::optional<ChildExit> exit = workers_[i]->poll();
    if (!exit) continue;
    ++deaths_;
    WorkerExitReport report;
    report.worker_index = static_cast<int>(i);
    report.pid = workers_[i]->pid();
    report.exit = *exit;
    report.log = workers_[i]->log();
    if (!report.log.empty()) report.last_lines = lines_since_banner(report.log, kReportedLines);  // before a restart appends
    workers_[i].reset();
    const bool stays_down = !exit->signaled && (exit->code == kWorkerExitStopped || exit->code == kWorkerExitBadInput);
    if (exit->clean()) ++clean_exits_;
    // While the process stops (SIGTERM/SIGINT), a worker that died, most likely of the same
    // signal, would only be restarted to be stopped.
    if (!stays_down && !stop_requested() && restarts_ < options_.max_restarts) {
      ++restarts_;
      spawn(static_cast<int>(i));
      report.restarted = true;
    }
    report.restarts_used = restarts_;
    reports.push_back(std::move(report));
  }
  return reports;
}

int WorkerPool::num_running() const {
  int running = 0;
  for (const auto& worker : workers_) running += worker != nullptr;
  return running;
}

pid_t WorkerPool::pid(int worker_index) const {
  const auto& worker = workers_.at(static_cast<size_t>(worker_index));
  return worker ? worker->pid() : -1;
}

void WorkerPool::stop() {
  for (auto& worker : workers_) {
    if (worker) worker->terminate();
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.stop_grace;
  for (;;) {
    bool running = false;
    for (auto& worker : workers_) running = running || (worker && !worker->poll());
    if (!running || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& worker : workers_) worker.reset();  // SIGKILLs and reaps what still runs
}

}  // namespace rlx
