#include "serve/policy_server.h"

#include <thread>

#include "core/config_error.h"
#include "core/log.h"

namespace rlx {

namespace {

std::vector<std::unique_ptr<PolicySlot>> load_slots(const std::vector<ServedSource>& sources, const CheckpointExporter& exporter,
                                                    const PolicySlotOptions& options) {
  std::vector<std::unique_ptr<PolicySlot>> slots;
  for (const ServedSource& served : sources) {
    try {
      slots.push_back(std::make_unique<PolicySlot>(served.name, served.source, exporter, options));
    } catch (const std::exception& error) {
      // A MODEL that cannot be served is the user's input: exit status 2, as a refused checkpoint.
      throw ConfigError("policy " + served.name + " (" + served.source.path.string() + "): " + error.what());
    }
    const ServedModel& model = *slots.back()->model();
    logger().info("policy {}: {} -> {} from {} ({}; one act {:.1f} us)", served.name, model.spaces().observation_space,
                  model.spaces().action_space, model.origin().string(), model.fingerprint(), model.act_micros());
  }
  return slots;
}

}  // namespace

PolicyServer::PolicyServer(const std::vector<ServedSource>& sources, const CheckpointExporter& exporter, ServeOptions options)
    : options_(std::move(options)) {
  if (sources.empty()) throw std::invalid_argument("rlx serve needs at least one MODEL");
  // Endpoint threads answer lone requests of an idle server themselves (no hand-off): each
  // has its own policy instances after the inference threads'.
  options_.http.first_inline_lane = 0;
  if (options_.zmq) options_.zmq->inline_lane = options_.http.io_threads;
  options_.batching.inline_lanes = options_.http.io_threads + (options_.zmq ? 1 : 0);
  options_.slot.threads = options_.batching.threads + options_.batching.inline_lanes;
  context_ = std::make_unique<ServeContext>(load_slots(sources, exporter, options_.slot), options_.batching, options_.limits);
  http_ = std::make_unique<HttpServer>(*context_, options_.http);
  if (options_.zmq) zmq_ = std::make_unique<ZmqEndpoint>(*context_, *options_.zmq);
}

PolicyServer::~PolicyServer() {
  zmq_.reset();
  http_.reset();
  context_.reset();
}

size_t PolicyServer::run(const std::function<bool()>& should_stop) {
  auto next_watch = std::chrono::steady_clock::now() + options_.watch_interval;
  while (!should_stop()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (options_.watch_interval.count() <= 0 || std::chrono::steady_clock::now() < next_watch) continue;
    next_watch = std::chrono::steady_clock::now() + options_.watch_interval;
    for (size_t i = 0; i < context_->slot_count(); ++i) {
      if (context_->slot(i).source().kind == ModelSourceKind::kTrial) context_->reload(i, /*force=*/false, nullptr);
    }
  }
  return drain();
}

size_t PolicyServer::drain() {
  logger().info("draining: no new connections or requests; answering the {} accepted", context_->pool().pending());
  context_->start_draining();
  http_->start_draining();
  const auto deadline = std::chrono::steady_clock::now() + options_.drain_timeout;
  context_->pool().wait_idle(options_.drain_timeout);
  // The answers are out of the pool; let the endpoints write them.
  while (std::chrono::steady_clock::now() < deadline &&
         (http_->connections() > 0 || (zmq_ && zmq_->pending() > 0))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const size_t left = context_->pool().pending() + (zmq_ ? zmq_->pending() : 0);
  logger().info("drained ({} connections open, {} requests unanswered)", http_->connections(), left);
  return left;
}

}  // namespace rlx
