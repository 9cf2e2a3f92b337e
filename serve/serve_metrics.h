// The server's counters and histograms, rendered as Prometheus text for GET /metrics.
// Lock-free to update from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rlx {

// How a request arrived.
enum class ServeProtocol { kHttpJson = 0, kHttpBinary = 1, kZmq = 2 };
constexpr size_t kServeProtocols = 3;
// "http_json", "http_binary", "zmq".
const char* protocol_label(ServeProtocol protocol);

// A cumulative histogram with fixed upper bounds (Prometheus' `le`), counts atomic.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // The `NAME_bucket{LABELS,le=..}`, `NAME_sum` and `NAME_count` lines; labels without braces.
  std::string render(const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> buckets_;  // one per bound, then +Inf
  std::atomic<uint64_t> sum_micro_{0};           // sum in millionths
};

// What /metrics reports of one policy besides the counters: read when it is rendered.
struct PolicyGauges {
  std::string name;
  uint64_t version = 0;
  size_t queue_depth = 0;
  size_t sessions = 0;
};

class ServeMetrics {
 public:
  explicit ServeMetrics(size_t policies);

  // One request answered: its policy (npos: none, e.g. an unknown name), protocol, status and
  // seconds from its arrival to its answer.
  void count_answer(size_t policy, ServeProtocol protocol, int status, double seconds);
  // One batch run of `rows` rows.
  void count_batch(size_t rows);
  // A reload of a policy: swapped in or refused.
  void count_reload(size_t policy, bool swapped);
  // A connection refused for the connection limit.
  void count_refused_connection();
  // Requests answered with this status so far (any policy, any protocol).
  uint64_t answers_with_status(int status) const;
  // The Prometheus text exposition of everything, with the gauges given.
  std::string prometheus(const std::vector<PolicyGauges>& gauges, size_t connections, bool draining) const;

 private:
  static constexpr size_t kStatuses = 600;
  struct PerPolicy {
    std::array<std::atomic<uint64_t>, kServeProtocols> requests{};
    std::atomic<uint64_t> reloads{0}, reloads_refused{0};
  };
  std::vector<PerPolicy> policies_;
  std::array<std::atomic<uint64_t>, kStatuses> statuses_{};
  std::array<std::unique_ptr<Histogram>, kServeProtocols> latency_;  // seconds, one per protocol
  std::unique_ptr<Histogram> batch_rows_;
  std::atomic<uint64_t> refused_connections_{0};
};

}  // namespace rlx
