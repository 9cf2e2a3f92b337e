// The serve load generator (bench/serve_load_generator.h): its percentiles, and short loads
// against bench/peers/python_policy_server.py serving a real .rlxp file and against an in-process
// ZeroMQ ROUTER that answers as docs/serve.md says.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "bench/serve_load_generator.h"
#include "core/child_process.h"
#include "core/temp_dir.h"
#include "models/network_layout.h"
#include "models/policy_file.h"

namespace rlx {
namespace {

// A CartPole-shaped actor-critic (4 floats in, Discrete(2) out) with seeded weights, written to dir.
std::string write_policy_file(const TempDir& dir) {
  PolicyFile file;
  file.model.kind = ModelKind::kActorCritic;
  file.model.obs_size = 4;
  file.model.action_space = Space::discrete(2);
  file.model.hidden_sizes = {16, 16};
  file.parameters = initial_parameters(actor_critic_layout(file.model), 3);
  file.algorithm = "PPO";
  file.env_id = "CartPole-v1";
  const std::string path = (dir / "cartpole.rlxp").string();
  std::ofstream(path, std::ios::binary) << encode_policy_file(file);
  return path;
}

// bench/peers/python_policy_server.py serving cartpole=FILE on a free port, ready to answer.
struct PythonServer {
  TempDir dir{"rlx-serve-load-test-"};
  int port = free_tcp_port();
  std::unique_ptr<ChildProcess> process;

  PythonServer() {
    const std::string policy = write_policy_file(dir);
    process = std::make_unique<ChildProcess>(
        std::vector<std::string>{RLX_SYSTEM_PYTHON, std::string(RLX_SOURCE_DIR) + "/bench/peers/python_policy_server.py",
                                 "--port", std::to_string(port), "cartpole=" + policy},
        dir / "server.log");
    wait_until_ready("127.0.0.1", port, process.get(), 30);
  }
};

ServeLoadOptions short_load(ServeProtocol protocol, int port) {
  ServeLoadOptions options;
  options.protocol = protocol;
  options.port = port;
  options.policy = "cartpole";
  options.observations = pseudo_random_observations(16, 4, 1);
  options.connections = 2;
  options.warmup_seconds = 0.1;
  options.seconds = 0.4;
  return options;
}

TEST_CASE("latency percentiles are the nearest rank of the samples", "[bench]") {
  std::vector<int64_t> samples;
  for (int64_t v = 1000; v >= 1; --v) samples.push_back(v);  // 1..1000, reversed
  CHECK(latency_percentile(samples, 50) == 500);
  CHECK(latency_percentile(samples, 90) == 900);
  CHECK(latency_percentile(samples, 99) == 990);
  CHECK(latency_percentile(samples, 99.9) == 999);
  CHECK(latency_percentile(samples, 100) == 1000);
  CHECK(latency_percentile(samples, 0.01) == 1);
  std::vector<int64_t> one = {7};
  CHECK(latency_percentile(one, 50) == 7);
  CHECK(latency_percentile(one, 99.9) == 7);
  std::vector<int64_t> none;
  CHECK(latency_percentile(none, 50) == 0);
  CHECK_THROWS_AS(latency_percentile(samples, 0), std::invalid_argument);
  CHECK_THROWS_AS(latency_percentile(samples, 101), std::invalid_argument);
}

TEST_CASE("a latency summary gives microseconds from nanosecond samples", "[bench]") {
  std::vector<int64_t> samples;
  for (int64_t v = 1; v <= 2000; ++v) samples.push_back(v * 1000);  // 1..2000 us
  const LatencySummary summary = summarize_latencies(samples);
  CHECK(summary.count == 2000);
  CHECK(summary.p50_us == 1000);
  CHECK(summary.p90_us == 1800);
  CHECK(summary.p99_us == 1980);
  CHECK(summary.p999_us == 1998);
  CHECK(summary.max_us == 2000);
  CHECK(summary.mean_us == Approx(1000.5));
  std::vector<int64_t> none;
  CHECK(summarize_latencies(none).count == 0);
}

TEST_CASE("the load generator gets every request answered by the Python baseline server", "[bench]") {
  PythonServer server;
  const HttpAnswer listed = http_exchange("127.0.0.1", server.port, "GET", "/v1/policies");
  CHECK(listed.status == 200);
  CHECK(listed.body.find("\"float_size\":4") != std::string::npos);
  for (ServeProtocol protocol : {ServeProtocol::kHttpJson, ServeProtocol::kHttpBinary}) {
    INFO(serve_protocol_name(protocol));
    const ServeLoadResult closed = run_serve_load(short_load(protocol, server.port));
    CHECK(closed.ok > 0);
    CHECK(closed.errors() == 0);
    CHECK(closed.requests_per_s > 0);
    CHECK(closed.latency.count == closed.ok);
    CHECK(closed.latency.p50_us > 0);
    CHECK(closed.latency.p50_us <= closed.latency.p99_us);
  }
  ServeLoadOptions open = short_load(ServeProtocol::kHttpJson, server.port);
  open.rate = 200;  // well below what the server sustains: every due request goes out
  const ServeLoadResult scheduled = run_serve_load(open);
  CHECK(scheduled.ok == Approx(200 * open.seconds).margin(2));
  CHECK(scheduled.errors() == 0);
  CHECK(scheduled.unsent == 0);
}

TEST_CASE("the load generator counts answers of a non-2xx status by status", "[bench]") {
  PythonServer server;
  ServeLoadOptions options = short_load(ServeProtocol::kHttpJson, server.port);
  options.policy = "no-such-policy";
  const ServeLoadResult result = run_serve_load(options);
  CHECK(result.ok == 0);
  CHECK(result.statuses.count(404) == 1);
  CHECK(result.statuses.at(404) > 0);
  CHECK(result.transport_errors == 0);
}

TEST_CASE("the load generator counts a port nobody listens on as transport errors", "[bench]") {
  ServeLoadOptions options = short_load(ServeProtocol::kHttpJson, free_tcp_port());
  options.seconds = 0.1;
  const ServeLoadResult result = run_serve_load(options);
  CHECK(result.ok == 0);
  CHECK(result.transport_errors > 0);
}

TEST_CASE("the load generator speaks the two-frame ZeroMQ protocol", "[bench]") {
  zmq::context_t context(1);
  zmq::socket_t router(context, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  router.bind("tcp://127.0.0.1:*");
  const std::string endpoint = router.get(zmq::sockopt::last_endpoint);
  std::atomic<bool> stop{false};
  std::atomic<int> malformed{0};
  // Answers each request [identity, "RLXQ" header, one row of 4 floats] with a 200 and one int64.
  std::thread answering([&] {
    router.set(zmq::sockopt::rcvtimeo, 50);
    while (!stop) {
      zmq::message_t identity, header, body;
      if (!router.recv(identity)) continue;
      const bool whole = identity.more() && router.recv(header) && header.more() && router.recv(body) && !body.more();
      const std::string head = whole ? std::string(header.data<char>(), header.size()) : "";
      if (!whole || head.substr(0, 4) != "RLXQ" || head.substr(16) != "cartpole" || body.size() != 16) ++malformed;
      const char reply[20] = {'R', 'L', 'X', 'A', 1, 0, static_cast<char>(200), 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
      const char action[8] = {1, 0, 0, 0, 0, 0, 0, 0};
      router.send(identity, zmq::send_flags::sndmore);
      router.send(zmq::const_buffer(reply, sizeof reply), zmq::send_flags::sndmore);
      router.send(zmq::const_buffer(action, sizeof action), zmq::send_flags::none);
    }
  });
  ServeLoadOptions options = short_load(ServeProtocol::kZmq, std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  options.in_flight = 2;
  const ServeLoadResult result = run_serve_load(options);
  stop = true;
  answering.join();
  CHECK(result.ok > 0);
  CHECK(result.errors() == 0);
  CHECK(malformed == 0);
}

TEST_CASE("the load generator refuses options it cannot run", "[bench]") {
  ServeLoadOptions options = short_load(ServeProtocol::kHttpJson, 8000);
  options.observations.clear();
  CHECK_THROWS_AS(run_serve_load(options), std::invalid_argument);
  options = short_load(ServeProtocol::kHttpJson, 0);
  CHECK_THROWS_AS(run_serve_load(options), std::invalid_argument);
  options = short_load(ServeProtocol::kHttpJson, 8000);
  options.connections = 0;
  CHECK_THROWS_AS(run_serve_load(options), std::invalid_argument);
  options = short_load(ServeProtocol::kHttpJson, 8000);
  options.rate = -1;
  CHECK_THROWS_AS(run_serve_load(options), std::invalid_argument);
  CHECK_THROWS_AS(parse_serve_protocol("grpc"), std::invalid_argument);
  CHECK(parse_serve_protocol("http-binary") == ServeProtocol::kHttpBinary);
}

}  // namespace
}  // namespace rlx
