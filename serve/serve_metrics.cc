#include "serve/serve_metrics.h"

#include <cmath>
#include <sstream>

namespace rlx {

namespace {

std::string number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::string quoted(const std::string& text) {  // a Prometheus label value
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

const char* protocol_label(ServeProtocol protocol) {
  switch (protocol) {
    case ServeProtocol::kHttpJson:
      return "http_json";
    case ServeProtocol::kHttpBinary:
      return "http_binary";
    case ServeProtocol::kZmq:
      return "zmq";
  }
  return "unknown";
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1) {}

void Histogram::observe(double value) {
  size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_micro_.fetch_add(static_cast<uint64_t>(std::llround(std::max(value, 0.0) * 1e6)), std::memory_order_relaxed);
}

std::string Histogram::render(const std::string& name, const std::string& labels) const {
  std::ostringstream out;
  const std::string prefix = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= bounds_.size(); ++b) {
    cumulative += buckets_[b].load(std::memory_order_relaxed);
    out << name << "_bucket{" << prefix << "le=\"" << (b < bounds_.size() ? number(bounds_[b]) : "+Inf") << "\"} "
        << cumulative << "\n";
  }
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out << name << "_sum" << braces << " " << number(static_cast<double>(sum_micro_.load(std::memory_order_relaxed)) * 1e-6)
      << "\n";
  out << name << "_count" << braces << " " << cumulative << "\n";
  return out.str();
}

ServeMetrics::ServeMetrics(size_t policies) : policies_(policies) {
  const std::vector<double> seconds = {25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 50e-3, 0.25, 1.0};
  for (auto& histogram : latency_) histogram = std::make_unique<Histogram>(seconds);
  batch_rows_ = std::make_unique<Histogram>(std::vector<double>{1, 2, 4, 8, 16, 32, 64, 128, 256, 1024});
}

void ServeMetrics::count_answer(size_t policy, ServeProtocol protocol, int status, double seconds) {
  const auto p = static_cast<size_t>(protocol);
  if (policy < policies_.size()) policies_[policy].requests[p].fetch_add(1, std::memory_order_relaxed);
  if (status >= 0 && status < static_cast<int>(kStatuses)) statuses_[static_cast<size_t>(status)].fetch_add(1, std::memory_order_relaxed);
  latency_[p]->observe(seconds);
}

void ServeMetrics::count_batch(size_t rows) { batch_rows_->observe(static_cast<double>(rows)); }

void ServeMetrics::count_reload(size_t policy, bool swapped) {
  if (policy >= policies_.size()) return;
  (swapped ? policies_[policy].reloads : policies_[policy].reloads_refused).fetch_add(1, std::memory_order_relaxed);
}

void ServeMetrics::count_refused_connection() { refused_connections_.fetch_add(1, std::memory_order_relaxed); }

uint64_t ServeMetrics::answers_with_status(int status) const {
  if (status < 0 || status >= static_cast<int>(kStatuses)) return 0;
  return statuses_[static_cast<size_t>(status)].load(std::memory_order_relaxed);
}

std::string ServeMetrics::prometheus(const std::vector<PolicyGauges>& gauges, size_t connections, bool draining) const {
  std::ostringstream out;
  out << "# HELP rlx_serve_requests_total Requests answered, by policy and protocol.\n"
      << "# TYPE rlx_serve_requests_total counter\n";
  for (size_t i = 0; i < gauges.size() && i < policies_.size(); ++i) {
    for (size_t p = 0; p < kServeProtocols; ++p) {
      out << "rlx_serve_requests_total{policy=" << quoted(gauges[i].name) << ",protocol=\""
          << protocol_label(static_cast<ServeProtocol>(p)) << "\"} " << policies_[i].requests[p].load() << "\n";
    }
  }
  out << "# HELP rlx_serve_responses_total Answers by HTTP status (ZeroMQ answers carry the same codes).\n"
      << "# TYPE rlx_serve_responses_total counter\n";
  for (size_t s = 0; s < kStatuses; ++s) {
    const uint64_t count = statuses_[s].load(std::memory_order_relaxed);
    if (count > 0) out << "rlx_serve_responses_total{code=\"" << s << "\"} " << count << "\n";
  }
  out << "# HELP rlx_serve_latency_seconds From a request's arrival to its answer.\n"
      << "# TYPE rlx_serve_latency_seconds histogram\n";
  for (size_t p = 0; p < kServeProtocols; ++p) {
    out << latency_[p]->render("rlx_serve_latency_seconds",
                               std::string("protocol=\"") + protocol_label(static_cast<ServeProtocol>(p)) + "\"");
  }
  out << "# HELP rlx_serve_batch_rows Rows per batch the inference threads ran.\n"
      << "# TYPE rlx_serve_batch_rows histogram\n"
      << batch_rows_->render("rlx_serve_batch_rows", "");
  out << "# HELP rlx_serve_queue_depth Requests waiting for an inference thread.\n# TYPE rlx_serve_queue_depth gauge\n";
  for (const PolicyGauges& g : gauges) out << "rlx_serve_queue_depth{policy=" << quoted(g.name) << "} " << g.queue_depth << "\n";
  out << "# HELP rlx_serve_model_version The version serving (1 at the start, +1 per reload).\n"
      << "# TYPE rlx_serve_model_version gauge\n";
  for (const PolicyGauges& g : gauges) out << "rlx_serve_model_version{policy=" << quoted(g.name) << "} " << g.version << "\n";
  out << "# HELP rlx_serve_sessions Recurrent sessions held.\n# TYPE rlx_serve_sessions gauge\n";
  for (const PolicyGauges& g : gauges) out << "rlx_serve_sessions{policy=" << quoted(g.name) << "} " << g.sessions << "\n";
  out << "# HELP rlx_serve_reloads_total Reloads by outcome.\n# TYPE rlx_serve_reloads_total counter\n";
  for (size_t i = 0; i < gauges.size() && i < policies_.size(); ++i) {
    out << "rlx_serve_reloads_total{policy=" << quoted(gauges[i].name) << ",outcome=\"swapped\"} " << policies_[i].reloads.load()
        << "\n";
    out << "rlx_serve_reloads_total{policy=" << quoted(gauges[i].name) << ",outcome=\"refused\"} "
        << policies_[i].reloads_refused.load() << "\n";
  }
  out << "# HELP rlx_serve_connections Open HTTP connections.\n# TYPE rlx_serve_connections gauge\n"
      << "rlx_serve_connections " << connections << "\n";
  out << "# HELP rlx_serve_connections_refused_total Connections closed at once for the connection limit.\n"
      << "# TYPE rlx_serve_connections_refused_total counter\n"
      << "rlx_serve_connections_refused_total " << refused_connections_.load() << "\n";
  out << "# HELP rlx_serve_draining 1 after SIGTERM, while the server answers what it accepted.\n"
      << "# TYPE rlx_serve_draining gauge\n"
      << "rlx_serve_draining " << (draining ? 1 : 0) << "\n";
  return out.str();
}

}  // namespace rlx
