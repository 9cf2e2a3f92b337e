// Encode -> decode round trips of every message type, and zero-copy frame lifetimes.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/transport/transport_test_util.h"
#include "transport/decode.h"
#include "transport/encode.h"

namespace rlx {
namespace {

// The accepted message as a T (a copy: callers pass temporaries).
template <typename T>
T decoded_as(const DecodeResult& result) {
  INFO("rejected: " << (result.reject ? reject_reason_name(*result.reject) : "-") << " " << result.detail);
  REQUIRE(result.ok());
  REQUIRE(!result.reject);
  REQUIRE(std::holds_alternative<T>(*result.message));
  return std::get<T>(*result.message);
}

TEST_CASE("a hello round-trips with its worker id and env description", "[transport]") {
  Hello hello;
  hello.worker_id = 12;
  hello.env_id = "Hopper-v4";
  hello.num_envs = 16;
  hello.obs_size = 11;
  hello.action_size = 3;
  hello.num_actions = 0;
  hello.pid = 4242;
  hello.hostname = "worker-node-7";
  const auto frames = encode_hello(hello, 5);
  const DecodeResult result = decode_message(frames);
  const Hello got = decoded_as<Hello>(result);
  CHECK(result.info.type == MessageType::kHello);
  CHECK(result.info.sequence == 5);
  CHECK(got.worker_id == 12);
  CHECK(got.protocol_version == kProtocolVersion);
  CHECK(got.env_id == "Hopper-v4");
  CHECK(got.num_envs == 16);
  CHECK(got.obs_size == 11);
  CHECK(got.action_size == 3);
  CHECK(got.num_actions == 0);
  CHECK(got.pid == 4242);
  CHECK(got.hostname == "worker-node-7");

  hello.action_size = 0;
  hello.num_actions = 2;
  const Hello discrete = decoded_as<Hello>(decode_message(encode_hello(hello, 6)));
  CHECK(discrete.num_actions == 2);
}

TEST_CASE("heartbeat and stop round-trip with their header fields", "[transport]") {
  const DecodeResult beat = decode_message(encode_heartbeat(99, 1234));
  decoded_as<Heartbeat>(beat);
  CHECK(beat.info.sender_id == 99);
  CHECK(beat.info.sequence == 1234);
  decoded_as<Join>(decode_message(encode_join(8, 9)));
  const DecodeResult stop = decode_message(encode_stop(3, 4));
  decoded_as<Stop>(stop);
  CHECK(stop.info.type == MessageType::kStop);
  CHECK(stop.info.sender_id == 3);
}

TEST_CASE("a welcome round-trips its setup text and refuses what is not a JSON object", "[transport]") {
  const Welcome welcome{R"({"env_id": "CartPole-v1", "fragment_length": 64})"};
  const DecodeResult result = decode_message(encode_welcome(welcome, 1, 2));
  CHECK(decoded_as<Welcome>(result).setup_json == welcome.setup_json);
  CHECK(result.info.type == MessageType::kWelcome);
  CHECK_THROWS_AS(encode_welcome(Welcome{"[1, 2]"}, 1, 2), std::invalid_argument);
  CHECK_THROWS_AS(encode_welcome(Welcome{std::string(kMaxWelcomeInfoBytes + 1, ' ')}, 1, 2), std::invalid_argument);
  DecodeLimits small;
  small.max_welcome_bytes = 8;
  CHECK(decode_message(encode_welcome(welcome, 1, 2), small).reject == RejectReason::kLimitExceeded);
}

TEST_CASE("sample fragments round-trip for discrete and Box actions", "[transport]") {
  const bool discrete = GENERATE(true, false);
  const bool with_policy_outputs = GENERATE(true, false);
  auto batch = test::make_batch(5, 3, 4, discrete, with_policy_outputs);
  const auto frames = encode_sample_fragment(batch, 77);
  const DecodeResult result = decode_message(frames);
  const SampleBatch got = decoded_as<SampleBatch>(result);
  CHECK(result.info.sender_id == 17);
  CHECK(result.info.policy_version == 42);
  CHECK(result.info.sequence == 77);
  test::require_same_batch(*batch, got);
  got.validate();
}

TEST_CASE("an empty fragment and one without episode ends round-trip", "[transport]") {
  auto empty = test::make_batch(0, 2, 3, true);
  test::require_same_batch(*empty, decoded_as<SampleBatch>(decode_message(encode_sample_fragment(empty, 0))));
  auto single = test::make_batch(1, 1, 2, false, false);
  REQUIRE(single->final_obs_index.empty());
  test::require_same_batch(*single, decoded_as<SampleBatch>(decode_message(encode_sample_fragment(single, 1))));
}

TEST_CASE("episode statistics round-trip", "[transport]") {
  EpisodeStats stats{{1.5, -2.0, 500.0}, {10, 20, 500}};
  const DecodeResult result = decode_message(encode_episode_stats(stats, 8, 2));
  const EpisodeStats got = decoded_as<EpisodeStats>(result);
  CHECK(got.returns == stats.returns);
  CHECK(got.lengths == stats.lengths);
  CHECK(result.info.sender_id == 8);
  CHECK(decoded_as<EpisodeStats>(decode_message(encode_episode_stats({}, 8, 3))).returns.empty());
  CHECK(got.dropped == 0);
  // Episodes a worker dropped for a non-finite env step travel as a count of their own.
  EpisodeStats with_dropped{{3.0}, {7}, 4};
  CHECK(decoded_as<EpisodeStats>(decode_message(encode_episode_stats(with_dropped, 8, 4))).dropped == 4);
  with_dropped.dropped = -1;
  CHECK_THROWS_AS(encode_episode_stats(with_dropped, 8, 5), std::invalid_argument);
}

TEST_CASE("weights round-trip with and without an observation normalizer", "[transport]") {
  auto weights = std::make_shared<Weights>();
  weights->policy_version = 31;
  weights->params.resize(5000);
  for (size_t i = 0; i < weights->params.size(); ++i) weights->params[i] = 0.001f * static_cast<float>(i);
  weights->obs_mean = {0.5, -0.5, 2.0};
  weights->obs_var = {1.0, 0.25, 4.0};
  weights->obs_count = 1e6;
  const DecodeResult result = decode_message(encode_weights(weights, 0, 9));
  const Weights got = decoded_as<Weights>(result);
  CHECK(got.policy_version == 31);
  CHECK(result.info.policy_version == 31);
  CHECK(got.params == weights->params);
  CHECK(got.obs_mean == weights->obs_mean);
  CHECK(got.obs_var == weights->obs_var);
  CHECK(got.obs_count == 1e6);

  auto plain = std::make_shared<Weights>();
  plain->policy_version = 2;
  plain->params = {1.f, 2.f};
  const Weights got_plain = decoded_as<Weights>(decode_message(encode_weights(plain, 0, 10)));
  CHECK(got_plain.params == plain->params);
  CHECK(got_plain.obs_mean.empty());
  CHECK(got_plain.obs_var.empty());
  CHECK(got_plain.obs_count == 0);
  CHECK_FALSE(got_plain.epsilon.has_value());

  plain->epsilon = 0.25;
  CHECK(decoded_as<Weights>(decode_message(encode_weights(plain, 0, 11))).epsilon == 0.25);
  plain->epsilon = 1.5;
  CHECK_THROWS_AS(encode_weights(plain, 0, 12), std::invalid_argument);
}

TEST_CASE("credit grants round-trip", "[transport]") {
  CHECK(decoded_as<CreditGrant>(decode_message(encode_credit_grant({1}, 0, 1))).credits == 1);
  CHECK(decoded_as<CreditGrant>(decode_message(encode_credit_grant({kMaxCredits}, 0, 1))).credits == kMaxCredits);
}

TEST_CASE("encoders refuse messages a decoder would reject", "[transport]") {
  CHECK_THROWS_AS(encode_credit_grant({0}, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(encode_credit_grant({kMaxCredits + 1}, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(encode_episode_stats({{1.0}, {}}, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(encode_episode_stats({{1.0}, {-1}}, 0, 0), std::invalid_argument);
  Hello hello;
  CHECK_THROWS_AS(encode_hello(hello, 0), std::invalid_argument);  // no env id
  hello.env_id = "CartPole-v1";
  hello.num_envs = 1;
  CHECK_THROWS_AS(encode_hello(hello, 0), std::invalid_argument);  // discrete without num_actions
  hello.num_actions = 2;
  CHECK_NOTHROW(encode_hello(hello, 0));
  hello.hostname = std::string(300, 'h');
  CHECK_THROWS_AS(encode_hello(hello, 0), std::invalid_argument);
  auto batch = test::make_batch(2, 2, 3, true);
  batch->rewards.pop_back();
  CHECK_THROWS_AS(encode_sample_fragment(batch, 0), std::invalid_argument);
  batch = test::make_batch(2, 2, 3, true);
  batch->terminated[0] = 2;
  CHECK_THROWS_AS(encode_sample_fragment(batch, 0), std::invalid_argument);
  auto weights = std::make_shared<Weights>();
  weights->obs_mean = {1.0};
  CHECK_THROWS_AS(encode_weights(weights, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(encode_sample_fragment(nullptr, 0), std::invalid_argument);
}

TEST_CASE("large fragment columns are sent without copies and keep the batch alive", "[transport]") {
  auto batch = test::make_batch(64, 8, 17, true);
  const float* obs = batch->obs.data();
  std::weak_ptr<const SampleBatch> watch = batch;
  auto frames = encode_sample_fragment(batch, 0);
  batch.reset();
  REQUIRE(!watch.expired());  // the frames hold it
  bool obs_frame_aliases = false;
  for (const zmq::message_t& frame : frames) obs_frame_aliases = obs_frame_aliases || frame.data() == obs;
  CHECK(obs_frame_aliases);
  {
    auto survivor = std::move(frames[1]);  // one frame outliving the rest still holds the batch
    frames.clear();
    CHECK(!watch.expired());
  }
  CHECK(watch.expired());
}

TEST_CASE("weights params are sent without copies", "[transport]") {
  auto weights = std::make_shared<Weights>();
  weights->params.assign(4096, 1.f);
  const float* params = weights->params.data();
  std::weak_ptr<const Weights> watch = weights;
  auto frames = encode_weights(std::move(weights), 0, 0);
  REQUIRE(frames.size() == 2);
  CHECK(frames[1].data() == params);
  CHECK(!watch.expired());
  frames.clear();
  CHECK(watch.expired());
}

}  // namespace

TEST_CASE("a fragment marks its dropped episodes, and a mark on a step that did not end one is rejected",
          "[transport]") {
  auto batch = test::make_batch(5, 3, 4, true, true);
  std::vector<int32_t> truncated_rows;
  for (int32_t i = 0; i < static_cast<int32_t>(batch->truncated.size()); ++i) {
    if (batch->truncated[static_cast<size_t>(i)]) truncated_rows.push_back(i);
  }
  REQUIRE_FALSE(truncated_rows.empty());
  // None marked: the column is not sent at all.
  const size_t frames_without = encode_sample_fragment(batch, 1).size();
  batch->dropped_index = {truncated_rows.front()};
  const auto frames = encode_sample_fragment(batch, 2);
  CHECK(frames.size() == frames_without + 1);
  const SampleBatch got = decoded_as<SampleBatch>(decode_message(frames));
  CHECK(got.dropped_index == batch->dropped_index);

  // Marks that a peer could send but that name no dropped episode's end.
  int32_t untruncated = 0;
  while (batch->truncated[static_cast<size_t>(untruncated)] || batch->terminated[static_cast<size_t>(untruncated)]) ++untruncated;
  for (const int32_t mark : {untruncated, -1, 15}) {
    INFO("dropped_index " << mark);
    SampleBatch bad = *batch;
    bad.dropped_index = {mark};
    CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
    // Sent as raw columns (the encoder refuses them): the decoder rejects them by name.
    const auto copy = std::make_shared<SampleBatch>(*batch);
    std::vector<zmq::message_t> raw = encode_sample_fragment(copy, 3);
    REQUIRE(raw.back().size() == sizeof(int32_t));
    std::memcpy(raw.back().data(), &mark, sizeof mark);
    const DecodeResult result = decode_message(raw);
    CHECK_FALSE(result.ok());
    CHECK(result.detail == "dropped_index is not increasing indices of truncated steps");
  }
  SampleBatch repeated = *batch;
  repeated.dropped_index = {truncated_rows.front(), truncated_rows.front()};
  CHECK_THROWS_AS(repeated.validate(), std::invalid_argument);
}

}  // namespace rlx
