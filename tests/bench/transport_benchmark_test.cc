// The transport benchmark runs end to end (figures are printed by `rlx bench`, never asserted).
#include <catch2/catch.hpp>

#include "bench/transport_benchmark.h"

namespace rlx {
namespace {

TEST_CASE("the transport benchmark moves fragments and measures memcpy", "[bench][transport]") {
  const TransportRun run = measure_transport(64 * 1024, 0.05);
  CHECK(run.messages > 0);
  CHECK(run.payload_bytes == run.messages * 64 * 1024);
  CHECK(run.gbytes_per_s > 0);
  CHECK(measure_memcpy_gbytes_per_s(4096, 0.01) > 0);
  TransportBenchmarkOptions options;
  options.bytes = 100;  // copied rather than zero-copy: small frames take the other path
  options.seconds = 0.02;
  options.repeats = 2;
  const TransportBenchmarkResult result = run_transport_benchmark(options);
  CHECK(result.runs.size() == 2);
  CHECK(result.msgs_per_s > 0);
  CHECK(result.ratio_to_memcpy() > 0);
}

TEST_CASE("the transport benchmark refuses empty settings", "[bench][transport]") {
  TransportBenchmarkOptions options;
  options.repeats = 0;
  CHECK_THROWS_AS(run_transport_benchmark(options), std::invalid_argument);
  options = {};
  options.bytes = 0;
  CHECK_THROWS_AS(run_transport_benchmark(options), std::invalid_argument);
  options = {};
  options.seconds = 0;
  CHECK_THROWS_AS(run_transport_benchmark(options), std::invalid_argument);
}

}  // namespace
}  // namespace rlx
