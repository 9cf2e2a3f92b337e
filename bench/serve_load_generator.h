// A load generator for `rlx serve` (docs/serve.md) and servers speaking its protocols: HTTP/1.1
// JSON, HTTP binary rows, or ZeroMQ two-frame requests, over `connections` keep-alive connections
// (ZeroMQ: DEALER sockets) driven by one epoll loop per thread.
//
// Closed loop (rate 0): every connection keeps `in_flight` requests outstanding, a new one sent
// as soon as an answer comes. Open loop (rate > 0): request i is due at start + i / rate whatever
// the server does; due requests go out in order on the first connection with room, and a
// request's latency runs from the time it was due, not from when it went out, so a slow server is
// charged for the requests it held back (no coordinated omission). Requests due but never sent by
// the end are counted as `unsent` (the backlog); the generator keeps no queue of them, so its
// memory stays bounded at any rate. A request is measured when it is sent after the warm-up.
//
// Latencies are exact: every measured request's is kept (8 bytes each) and percentiles are read
// from the sorted samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/process_launcher.h"

namespace rlx {

enum class ServeProtocol { kHttpJson, kHttpBinary, kZmq };

// "http-json", "http-binary", "zmq".
const char* serve_protocol_name(ServeProtocol protocol);
// The protocol a name from serve_protocol_name gives; std::invalid_argument naming the three otherwise.
ServeProtocol parse_serve_protocol(const std::string& name);

struct ServeLoadOptions {
  ServeProtocol protocol = ServeProtocol::kHttpJson;
  std::string host = "127.0.0.1";  // a numeric IPv4 address or a name (resolved once)
  int port = 0;                    // the HTTP port, or the ZeroMQ port for kZmq
  std::string policy;              // NAME in /v1/policies/NAME/act (kZmq: the header's name)
  // The observations sent, cycled: each a row of float_size values (docs/serve.md's binary row
  // of a policy whose byte_size is 0; JSON sends it as a flat array).
  std::vector<std::vector<float>> observations;
  int connections = 1;        // closed loop: the concurrency; open loop: the most connections used
  int in_flight = 1;          // requests outstanding per connection (> 1: HTTP pipelining)
  double rate = 0;            // requests per second in all; 0: closed loop
  double warmup_seconds = 0.5;  // requests sent in this first span are not measured
  double seconds = 5;         // the measured span, after the warm-up
  double drain_seconds = 2;   // after it, how long outstanding answers are still awaited
  int threads = 1;            // event loops, each with its share of connections and rate
  bool verify = true;         // check every 2xx answer: JSON has "action", binary has one row
};

// Percentiles of a set of latencies, in microseconds.
struct LatencySummary {
  uint64_t count = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0;
  double mean_us = 0, max_us = 0;
};

struct ServeLoadResult {
  uint64_t sent = 0;               // requests written, the warm-up's included
  uint64_t ok = 0;                 // measured 2xx answers that passed verification
  std::map<int, uint64_t> statuses;  // measured answers by non-2xx status
  uint64_t transport_errors = 0;   // measured requests lost to a refused, reset or closed connection, or a bad answer
  uint64_t verify_failures = 0;    // measured 2xx answers whose body was not what the protocol promises
  uint64_t unanswered = 0;         // measured requests still outstanding when the drain ended
  uint64_t unsent = 0;             // open loop: requests due by the end of the span that never went out
  uint64_t reconnects = 0;         // connections opened again after the server closed one
  double seconds = 0;              // the measured span as it ran
  double requests_per_s = 0;       // answers (of any status) completed within the measured span, per second
  LatencySummary latency;          // of the measured requests answered 2xx
  // Every non-2xx status and error kind counted: the statuses, transport, verify, unanswered.
  uint64_t errors() const;
};

// Runs the load; throws std::invalid_argument for options out of range (no observations, no
// port, connections/in_flight/threads < 1, a negative rate, seconds <= 0) and std::system_error
// when a socket or epoll cannot be made. A server that refuses or drops connections is counted
// in transport_errors, not thrown.
ServeLoadResult run_serve_load(const ServeLoadOptions& options);

// The p-th percentile (0 < p <= 100) of samples by nearest rank: the smallest sample with at
// least p% of samples at or below it; 0 for no samples. Reorders samples.
int64_t latency_percentile(std::vector<int64_t>& samples, double p);

// count, p50, p90, p99, p99.9, mean and max of latencies given in nanoseconds. Reorders samples.
LatencySummary summarize_latencies(std::vector<int64_t>& samples_ns);

// A whole HTTP/1.1 exchange over a fresh connection (Connection: close), for probes and
// set-up (GET /readyz, GET /v1/policies): the status and body. std::system_error when the server
// cannot be reached or does not answer within timeout_seconds; std::runtime_error for an answer
// that is no HTTP.
struct HttpAnswer {
  int status = 0;
  std::string body;
};
HttpAnswer http_exchange(const std::string& host, int port, const std::string& method, const std::string& path,
                         const std::string& body = "", double timeout_seconds = 5);

// Polls GET /readyz at host:port until it answers 200. std::runtime_error when `process` (when
// given) exits first, with its exit and the last lines of its log, or when timeout_seconds pass.
void wait_until_ready(const std::string& host, int port, LaunchedProcess* process, double timeout_seconds);

// A TCP port of 127.0.0.1 that nothing listens on now (the kernel's pick: another process may
// still take it before it is used); std::system_error when no socket can be made.
int free_tcp_port();

// rows deterministic pseudo-random observations of float_size values each, uniform in [-1, 1):
// the same seed gives the same rows on every machine.
std::vector<std::vector<float>> pseudo_random_observations(size_t rows, size_t float_size, uint64_t seed);

}  // namespace rlx
