// Transport throughput: one sender thread pushes fixed-size single-column fragments, sent
// without copies, to a receiver thread over tcp://127.0.0.1; memcpy of the same size is the
// baseline. Figures in messages per second and 1e9 bytes per second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rlx {

struct TransportBenchmarkOptions {
  size_t bytes = size_t{1} << 20;  // column bytes per fragment
  double seconds = 1.0;            // per timed run
  int repeats = 3;                 // the result reports medians
};

struct TransportRun {
  uint64_t messages = 0;        // fragments received in the timed window
  uint64_t payload_bytes = 0;   // their column bytes
  double seconds = 0;
  double msgs_per_s = 0;
  double gbytes_per_s = 0;      // payload, 1e9 bytes per second
  double memcpy_gbytes_per_s = 0;
};

struct TransportBenchmarkResult {
  std::vector<TransportRun> runs;
  double msgs_per_s = 0;           // medians over runs
  double gbytes_per_s = 0;
  double memcpy_gbytes_per_s = 0;
  double ratio_to_memcpy() const { return memcpy_gbytes_per_s > 0 ? gbytes_per_s / memcpy_gbytes_per_s : 0; }
};

// One timed loopback run; the receiver validates every header. Throws std::runtime_error if
// the receiver stops hearing from the sender, zmq::error_t on socket errors.
TransportRun measure_transport(size_t bytes, double seconds);

// memcpy between two buffers of bytes for about seconds; 1e9 bytes per second.
double measure_memcpy_gbytes_per_s(size_t bytes, double seconds);

// repeats runs of both measurements; throws std::invalid_argument for bytes, seconds or repeats < 1.
TransportBenchmarkResult run_transport_benchmark(const TransportBenchmarkOptions& options);

}  // namespace rlx
