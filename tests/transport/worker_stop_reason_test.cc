// A worker's goodbye that says why it stops: the stop_info codec (bounded, validated and
// sanitised both ways), WorkerStops' grouping and bounds, and a SampleReceiver that counts and
// names the reasons of workers that joined, and only theirs.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "tests/transport/hostile_peer.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/frame_builder.h"
#include "transport/sample_receiver.h"
#include "transport/worker_stops.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;

StopReason python_error(const std::string& detail) { return StopReason{StopCause::kPythonError, detail, "node7", 4242}; }

// The message a Stop carrying `info` as its stop_info text decodes to.
DecodeResult decode_stop_info(const std::string& info) {
  FrameBuilder builder(MessageType::kStop, 9, 1, 0);
  builder.add_copied(ColumnId::kStopInfo, DType::kUInt8, {static_cast<int64_t>(info.size())}, info.data(), info.size());
  return decode_message(builder.finish());
}

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5000ms;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

TEST_CASE("a goodbye carries its reason through the codec, and a learner's Stop carries none", "[transport][stop_reason]") {
  DecodeResult plain = decode_message(encode_stop(0, 1));
  REQUIRE(plain.ok());
  CHECK_FALSE(std::get<Stop>(*plain.message).reason);

  DecodeResult with_reason = decode_message(encode_stop(5, 2, python_error("step raised ValueError: bad")));
  REQUIRE(with_reason.ok());
  const std::optional<StopReason>& reason = std::get<Stop>(*with_reason.message).reason;
  REQUIRE(reason);
  CHECK(reason->cause == StopCause::kPythonError);
  CHECK(reason->detail == "step raised ValueError: bad");
  CHECK(reason->hostname == "node7");
  CHECK(reason->pid == 4242);
}

TEST_CASE("stop info that is not a valid reason is rejected by name", "[transport][stop_reason]") {
  const auto rejected = [](const std::string& info) {
    const DecodeResult result = decode_stop_info(info);
    INFO(info);
    CHECK_FALSE(result.ok());
    return result.reject;
  };
  CHECK(rejected("not json") == RejectReason::kBadHelloInfo);
  CHECK(rejected(R"(["cause"])") == RejectReason::kBadHelloInfo);
  CHECK(rejected(R"({"cause": "meteor", "detail": "x", "hostname": "h", "pid": 1})") == RejectReason::kBadHelloInfo);
  CHECK(rejected(R"({"cause": "error", "detail": 7, "hostname": "h", "pid": 1})") == RejectReason::kBadHelloInfo);
  CHECK(rejected(R"({"cause": "error", "detail": "x", "hostname": "h", "pid": -1})") == RejectReason::kBadHelloInfo);
  CHECK(rejected(R"({"cause": "error", "detail": "x", "pid": 1})") == RejectReason::kBadHelloInfo);
  const std::string long_detail(kMaxStopDetailBytes + 1, 'x');
  CHECK(rejected(R"({"cause": "error", "detail": ")" + long_detail + R"(", "hostname": "h", "pid": 1})") ==
        RejectReason::kBadHelloInfo);
  CHECK(rejected(std::string(kMaxStopInfoBytes + 1, ' ')) == RejectReason::kLimitExceeded);
  CHECK(decode_stop_info(R"({"cause": "error", "detail": "x", "hostname": "h", "pid": 1})").ok());
}

TEST_CASE("a stop detail is one bounded line of printable ASCII", "[transport][stop_reason]") {
  CHECK(sanitize_stop_detail("line one\n\n  line two\r\n") == "line one line two");
  CHECK(sanitize_stop_detail("bell\a and \x1b[31mred\x1b[0m") == "bell and [31mred [0m");
  CHECK(sanitize_stop_detail("caf\xc3\xa9") == "caf??");
  const std::string cut = sanitize_stop_detail(std::string(1000, 'y'), 20);
  CHECK(cut == std::string(17, 'y') + "...");
  // What the codec carries is sanitised on the way out and again on the way in.
  DecodeResult result = decode_message(encode_stop(5, 2, python_error("a\nb\x7f" + std::string(600, 'z'))));
  REQUIRE(result.ok());
  const std::string& detail = std::get<Stop>(*result.message).reason->detail;
  CHECK(detail.size() == kMaxStopDetailBytes);
  CHECK(detail.rfind("a b z", 0) == 0);
  CHECK(decode_stop_info("{\"cause\": \"error\", \"detail\": \"x\\u001b\", \"hostname\": \"h\\nx\", \"pid\": 1}").ok());
}

TEST_CASE("WorkerStops says each distinct reason once, groups numbers, counts failures apart from signals",
          "[transport][stop_reason]") {
  WorkerStops stops;
  const std::optional<StopNotice> first = stops.record(python_error("the env broke at step 40"), "worker 1 (pid 10 on a)");
  REQUIRE(first);
  CHECK(first->text == "worker 1 (pid 10 on a) stopped: python_error: the env broke at step 40");
  CHECK(first->cause == StopCause::kPythonError);
  CHECK_FALSE(stops.record(python_error("the env broke at step 41"), "worker 2 (pid 11 on b)"));
  CHECK(stops.record(StopReason{StopCause::kEnvContract, "obs[2] is nan", "b", 11}, "worker 3 (pid 12 on b)"));
  const std::optional<StopNotice> signal = stops.record(StopReason{StopCause::kSignal, "stopped by SIGTERM", "c", 13}, "worker 4 (pid 13 on c)");
  REQUIRE(signal);
  CHECK(signal->cause == StopCause::kSignal);  // the sampler prints it as info, not as a warning
  CHECK(stops.failed() == 3);
  CHECK(stops.failures() == std::map<std::string, uint64_t>{{"env_contract", 1}, {"python_error", 2}});
  const std::vector<std::string> summary = stops.summary();
  REQUIRE(summary.size() == 2);  // the signal is no failure
  CHECK(summary[0] == "2 x python_error: the env broke at step 40 (first: worker 1 (pid 10 on a))");
  CHECK(summary[1] == "1 x env_contract: obs[2] is nan (first: worker 3 (pid 12 on b))");
}

TEST_CASE("WorkerStops bounds the notices and the reasons it keeps", "[transport][stop_reason]") {
  WorkerStops stops;
  size_t notices = 0;
  std::string last_notice;
  for (size_t i = 0; i < kMaxDistinctStopReasons + 50; ++i) {
    // Letters, not digits, so that every reason is distinct.
    std::string name;
    for (size_t n = i; n > 0 || name.empty(); n /= 26) name += static_cast<char>('a' + n % 26);
    if (auto notice = stops.record(python_error("reason " + name), "worker")) {
      ++notices;
      last_notice = notice->text;
    }
  }
  CHECK(notices == kMaxStopNotices);
  CHECK_THAT(last_notice, Catch::EndsWith("(further distinct reasons are only counted)"));
  CHECK(stops.failed() == kMaxDistinctStopReasons + 50);
  const std::vector<std::string> summary = stops.summary();
  REQUIRE(summary.size() == kMaxDistinctStopReasons + 1);
  CHECK(summary.back() == "50 x a reason not kept (more than 256 distinct reasons)");
}

ReceiverOptions cartpole_contract() {
  ReceiverOptions options;
  options.env = {"CartPole-v1", 4, 0, 2, 500};
  options.fragment_length = 16;
  options.heartbeat_interval = 100ms;
  options.make_welcome = [](int) { return std::string(R"({"env_id": "CartPole-v1"})"); };
  return options;
}

TEST_CASE("the receiver counts a joined worker's failure, names it with its host, and ignores a stranger's",
          "[transport][stop_reason]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract());
  auto w = std::make_shared<Weights>();
  w->policy_version = 1;
  w->params.assign(8, 0.5f);
  receiver.publish_weights(w);

  test::HostilePeer ready(context, receiver.endpoint());
  REQUIRE(ready.join());
  ready.send(encode_stop(666, 100, StopReason{StopCause::kEnvContract, "CartPole-v1: step: obs[0] is nan", "ignored", 5}));
  REQUIRE(eventually([&] { return receiver.stats().workers_failed == 1; }));
  std::vector<StopNotice> notices = receiver.take_stop_notices();
  REQUIRE(notices.size() == 1);
  // Its hello named it (pid 1 on "hostile"), so that is who it is.
  CHECK(notices[0].text == "worker 666 (pid 1 on hostile) stopped: env_contract: CartPole-v1: step: obs[0] is nan");
  CHECK(notices[0].cause == StopCause::kEnvContract);

  // Failed while setting up, before any hello: where it runs comes with the reason.
  test::HostilePeer unready(context, receiver.endpoint());
  unready.send(encode_join(77, 1));
  unready.read(300ms);  // its welcome: it is known now, not ready
  unready.send(encode_stop(77, 2, StopReason{StopCause::kBadConfig, "unknown env 'Nope-v0'", "node9", 31}));
  REQUIRE(eventually([&] { return receiver.stats().workers_failed == 2; }));
  notices = receiver.take_stop_notices();
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].text == "worker 77 (pid 31 on node9) stopped: bad_config: unknown env 'Nope-v0'");
  CHECK(notices[0].cause == StopCause::kBadConfig);

  // A peer that never joined: its goodbye is not counted.
  test::HostilePeer stranger(context, receiver.endpoint());
  stranger.send(encode_stop(88, 1, python_error("made up")));
  std::this_thread::sleep_for(300ms);
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.workers_failed == 2);
  CHECK(stats.worker_failures == std::map<std::string, uint64_t>{{"bad_config", 1}, {"env_contract", 1}});
  CHECK(stats.workers_left == 0);
  CHECK(receiver.take_stop_notices().empty());
  CHECK(receiver.worker_failure_summary().size() == 2);
}

}  // namespace
}  // namespace rlx
