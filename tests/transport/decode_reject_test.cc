// Malformed input: every structural and semantic violation is rejected with its reason and
// counted; random bytes and random mutations never crash the decoder.
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "tests/transport/transport_test_util.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/frame_builder.h"

namespace rlx {
namespace {

using test::descriptor_index;
using test::with_descriptor;
using test::with_header;

// Decodes frames, requires the given rejection, and that the counters counted it.
void require_reject(const std::vector<zmq::message_t>& frames, RejectReason expected, const DecodeLimits& limits = {}) {
  RejectCounters counters;
  const DecodeResult result = decode_message(frames, limits, &counters);
  INFO("expected " << reject_reason_name(expected) << ", got "
                   << (result.reject ? reject_reason_name(*result.reject) : "acceptance") << " (" << result.detail << ")");
  REQUIRE(!result.ok());
  REQUIRE(result.reject == expected);
  CHECK(!result.detail.empty());
  CHECK(counters.count(expected) == 1);
  CHECK(counters.total() == 1);
}

std::vector<zmq::message_t> fragment() { return encode_sample_fragment(test::make_batch(4, 3, 5, true), 1); }

TEST_CASE("structurally broken messages are rejected before any data is read", "[transport]") {
  const auto good = fragment();
  REQUIRE(decode_message(good).ok());

  SECTION("no frames") { require_reject({}, RejectReason::kNoFrames); }
  SECTION("truncated header") {
    std::vector<zmq::message_t> frames;
    frames.emplace_back(good[0].data(), sizeof(WireHeader) - 1);
    require_reject(frames, RejectReason::kHeaderTruncated);
  }
  SECTION("header frame cut inside the descriptors") {
    auto frames = test::deep_copy(good);
    frames[0] = zmq::message_t(good[0].data(), good[0].size() - 8);
    require_reject(frames, RejectReason::kHeaderSizeMismatch);
  }
  SECTION("wrong magic") { require_reject(with_header(good, [](WireHeader& h) { h.magic ^= 1; }), RejectReason::kBadMagic); }
  SECTION("wrong version") {
    require_reject(with_header(good, [](WireHeader& h) { h.protocol_version = kProtocolVersion + 1; }),
                   RejectReason::kBadVersion);
  }
  SECTION("unknown type") {
    require_reject(with_header(good, [](WireHeader& h) { h.type = 0; }), RejectReason::kUnknownType);
    require_reject(with_header(good, [](WireHeader& h) { h.type = 200; }), RejectReason::kUnknownType);
  }
  SECTION("reserved flags") { require_reject(with_header(good, [](WireHeader& h) { h.flags = 1; }), RejectReason::kBadFlags); }
  SECTION("num_columns disagrees with the header frame") {
    require_reject(with_header(good, [](WireHeader& h) { h.num_columns -= 1; }), RejectReason::kHeaderSizeMismatch);
  }
  SECTION("num_columns over the limit") {
    require_reject(with_header(good, [](WireHeader& h) { h.num_columns = 1000000; }), RejectReason::kTooManyColumns);
  }
  SECTION("a column frame missing") {
    auto frames = test::deep_copy(good);
    frames.pop_back();
    require_reject(frames, RejectReason::kFrameCountMismatch);
  }
  SECTION("more frames than any message has") {
    auto frames = test::deep_copy(good);
    while (frames.size() < 40) frames.emplace_back();
    require_reject(frames, RejectReason::kTooManyFrames);
  }
  SECTION("a truncated column frame") {
    auto frames = test::deep_copy(good);
    const size_t obs = descriptor_index(good, ColumnId::kObs) + 1;
    frames[obs] = zmq::message_t(good[obs].data(), good[obs].size() - 1);
    require_reject(frames, RejectReason::kFrameSizeMismatch);
  }
  SECTION("a column frame longer than its descriptor") {
    auto frames = test::deep_copy(good);
    const size_t rewards = descriptor_index(good, ColumnId::kRewards) + 1;
    frames[rewards] = zmq::message_t(frames[rewards].size() + 4);
    require_reject(frames, RejectReason::kFrameSizeMismatch);
  }
  SECTION("descriptor bytes disagree with its dims") {
    require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) { d.bytes += 4; }), RejectReason::kColumnSizeMismatch);
  }
  SECTION("dims and bytes agree with each other but not with the frame") {
    require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) {
                     d.dims[0] += 1;
                     d.bytes += static_cast<uint64_t>(d.dims[1] * d.dims[2]) * 4;
                   }),
                   RejectReason::kFrameSizeMismatch);
  }
  SECTION("payload_bytes disagrees with the columns") {
    require_reject(with_header(good, [](WireHeader& h) { h.payload_bytes += 1; }), RejectReason::kPayloadSizeMismatch);
  }
  SECTION("unknown dtype") { require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) { d.dtype = 99; }), RejectReason::kUnknownDType); }
  SECTION("too many dims") { require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) { d.ndim = 5; }), RejectReason::kBadShape); }
  SECTION("a negative dim") { require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) { d.dims[0] = -4; }), RejectReason::kBadShape); }
  SECTION("a dim set beyond ndim") { require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) { d.dims[3] = 1; }), RejectReason::kBadShape); }
  SECTION("reserved descriptor bits") { require_reject(with_descriptor(good, 0, [](ColumnDescriptor& d) { d.reserved = 1; }), RejectReason::kBadFlags); }
  SECTION("dims whose product overflows") {
    require_reject(with_descriptor(good, 0,
                                   [](ColumnDescriptor& d) {
                                     d.dims[0] = std::numeric_limits<int64_t>::max();
                                     d.dims[1] = 4;
                                   }),
                   RejectReason::kSizeOverflow);
    require_reject(with_descriptor(good, 0,
                                   [](ColumnDescriptor& d) {
                                     d.dims[0] = int64_t{1} << 62;
                                     d.dims[1] = 1;
                                     d.dims[2] = 1;  // elements fit, bytes (x4) do not
                                   }),
                   RejectReason::kSizeOverflow);
  }
  SECTION("a column given twice") {
    require_reject(with_descriptor(good, 1, [&](ColumnDescriptor& d) { d.column = static_cast<uint16_t>(ColumnId::kObs); }),
                   RejectReason::kDuplicateColumn);
  }
  SECTION("a message over max_message_bytes") {
    DecodeLimits limits;
    limits.max_message_bytes = 256;
    require_reject(good, RejectReason::kMessageTooLarge, limits);
  }
}

TEST_CASE("fragments whose columns disagree with each other are rejected", "[transport]") {
  const auto good = fragment();
  const auto descriptor_of = [&](ColumnId id) { return descriptor_index(good, id); };

  SECTION("a column of another message type") {
    require_reject(with_descriptor(good, descriptor_of(ColumnId::kValues),
                                   [](ColumnDescriptor& d) { d.column = static_cast<uint16_t>(ColumnId::kCredits); }),
                   RejectReason::kUnexpectedColumn);
  }
  SECTION("a required column missing") {
    require_reject(with_descriptor(good, descriptor_of(ColumnId::kRewards),
                                   [](ColumnDescriptor& d) { d.column = static_cast<uint16_t>(ColumnId::kLogProbs) + 100; }),
                   RejectReason::kUnexpectedColumn);
    auto stripped = encode_sample_fragment(test::make_batch(4, 3, 5, true, false), 1);
    require_reject(with_descriptor(stripped, descriptor_index(stripped, ColumnId::kRewards),
                                   [](ColumnDescriptor& d) { d.column = static_cast<uint16_t>(ColumnId::kLogProbs); }),
                   RejectReason::kMissingColumn);
  }
  SECTION("a wrong dtype of the right size") {
    require_reject(with_descriptor(good, descriptor_of(ColumnId::kRewards),
                                   [](ColumnDescriptor& d) { d.dtype = static_cast<uint8_t>(DType::kInt32); }),
                   RejectReason::kWrongDType);
  }
  SECTION("a wrong rank of the right size") {
    require_reject(with_descriptor(good, descriptor_of(ColumnId::kRewards),
                                   [](ColumnDescriptor& d) {
                                     d.ndim = 1;
                                     d.dims[0] *= d.dims[1];
                                     d.dims[1] = 0;
                                   }),
                   RejectReason::kWrongRank);
  }
  SECTION("[T, K] columns that disagree on T and K") {
    require_reject(with_descriptor(good, descriptor_of(ColumnId::kRewards),
                                   [](ColumnDescriptor& d) { std::swap(d.dims[0], d.dims[1]); }),
                   RejectReason::kInconsistentDims);
  }
  SECTION("final observations that disagree with their indices") {
    auto batch = test::make_batch(4, 3, 5, true);
    batch->final_obs_index = {1};
    batch->final_obs.resize(5);
    auto frames = encode_sample_fragment(batch, 1);
    auto bad = with_descriptor(frames, descriptor_index(frames, ColumnId::kFinalObs), [](ColumnDescriptor& d) {
      d.dims[0] = 5;
      d.dims[1] = 1;
    });
    require_reject(bad, RejectReason::kInconsistentDims);
  }
  SECTION("obs over max_obs_size") {
    DecodeLimits limits;
    limits.max_obs_size = 4;
    require_reject(good, RejectReason::kLimitExceeded, limits);
  }
  SECTION("T * K over max_transitions") {
    DecodeLimits limits;
    limits.max_transitions = 11;
    require_reject(good, RejectReason::kLimitExceeded, limits);
  }
  SECTION("final_obs_index out of range") {
    auto batch = test::make_batch(4, 3, 5, true);
    auto frames = test::deep_copy(encode_sample_fragment(batch, 1));
    const size_t index_frame = descriptor_index(frames, ColumnId::kFinalObsIndex) + 1;
    const int32_t past_end = 12;
    std::memcpy(frames[index_frame].data(), &past_end, sizeof past_end);
    require_reject(frames, RejectReason::kValueOutOfRange);
    const int32_t negative = -1;
    std::memcpy(frames[index_frame].data(), &negative, sizeof negative);
    require_reject(frames, RejectReason::kValueOutOfRange);
  }
  SECTION("a terminated flag other than 0 or 1") {
    auto frames = test::deep_copy(good);
    static_cast<uint8_t*>(frames[descriptor_of(ColumnId::kTerminated) + 1].data())[0] = 2;
    require_reject(frames, RejectReason::kValueOutOfRange);
  }
  SECTION("an action index outside the announced action count") {
    DecodeLimits limits;
    limits.num_actions = 2;  // make_batch uses actions 0..2
    require_reject(good, RejectReason::kValueOutOfRange, limits);
    limits.num_actions = 3;
    CHECK(decode_message(good, limits).ok());
  }
}

TEST_CASE("other message types reject bad columns and values", "[transport]") {
  SECTION("credit grants out of range") {
    const auto grant = encode_credit_grant({5}, 0, 0);
    for (int64_t credits : {int64_t{0}, int64_t{-3}, kMaxCredits + 1}) {
      auto frames = test::deep_copy(grant);
      std::memcpy(frames[1].data(), &credits, sizeof credits);
      require_reject(frames, RejectReason::kValueOutOfRange);
    }
  }
  SECTION("a heartbeat carrying a column") {
    auto frames = encode_credit_grant({5}, 0, 0);
    require_reject(with_header(frames, [](WireHeader& h) { h.type = static_cast<uint16_t>(MessageType::kHeartbeat); }),
                   RejectReason::kUnexpectedColumn);
  }
  SECTION("episode stats of different lengths") {
    auto frames = encode_episode_stats({{1.0, 2.0}, {1, 2}}, 0, 0);
    auto bad = with_descriptor(frames, 1, [](ColumnDescriptor& d) {
      d.dims[0] = 1;
      d.bytes = 4;
    });
    bad[2] = zmq::message_t(4);
    require_reject(with_header(bad, [](WireHeader& h) { h.payload_bytes -= 4; }), RejectReason::kInconsistentDims);
  }
  SECTION("weights with half a normalizer") {
    auto weights = std::make_shared<Weights>();
    weights->params = {1.f};
    weights->obs_mean = {0.0};
    weights->obs_var = {1.0};
    auto frames = encode_weights(weights, 0, 0);
    require_reject(with_descriptor(frames, descriptor_index(frames, ColumnId::kObsCount),
                                   [](ColumnDescriptor& d) { d.column = static_cast<uint16_t>(ColumnId::kObs); }),
                   RejectReason::kUnexpectedColumn);
    FrameBuilder builder(MessageType::kWeights, 0, 0, 1);
    builder.add_copied(ColumnId::kParams, {1}, weights->params);
    builder.add_copied(ColumnId::kObsMean, {1}, weights->obs_mean);
    builder.add_copied(ColumnId::kObsVar, {1}, weights->obs_var);
    require_reject(builder.finish(), RejectReason::kMissingColumn);
  }
  SECTION("weights with a negative normalizer count") {
    auto weights = std::make_shared<Weights>();
    weights->params = {1.f};
    weights->obs_mean = {0.0};
    weights->obs_var = {1.0};
    auto frames = test::deep_copy(encode_weights(weights, 0, 0));
    const double negative = -1.0;
    std::memcpy(frames[descriptor_index(frames, ColumnId::kObsCount) + 1].data(), &negative, sizeof negative);
    require_reject(frames, RejectReason::kValueOutOfRange);
  }
}

// A hello message around arbitrary info text.
std::vector<zmq::message_t> hello_with_text(const std::string& text) {
  Hello hello;
  hello.env_id = "CartPole-v1";
  hello.num_envs = 1;
  hello.num_actions = 2;
  auto frames = encode_hello(hello, 0);
  frames = with_descriptor(frames, 0, [&](ColumnDescriptor& d) {
    d.dims[0] = static_cast<int64_t>(text.size());
    d.bytes = text.size();
  });
  frames = with_header(frames, [&](WireHeader& h) { h.payload_bytes = text.size(); });
  frames[1] = zmq::message_t(text.data(), text.size());
  return frames;
}

TEST_CASE("hellos with bad info are rejected", "[transport]") {
  const std::string valid =
      R"({"env_id":"CartPole-v1","num_envs":2,"obs_size":4,"action_size":0,"num_actions":2,"pid":1,"hostname":"h"})";
  REQUIRE(decode_message(hello_with_text(valid)).ok());
  require_reject(hello_with_text("not json"), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text("[1, 2]"), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(R"({"env_id":"CartPole-v1"})"), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(valid).replace(valid.find("2,\"obs"), 1, "-2")), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(valid).replace(valid.find("\"h\""), 3, "7")), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(valid).replace(valid.find("2,\"pid"), 1, "0")), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(valid).replace(valid.find("2,\"obs"), 1, "1e3")), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(valid).replace(valid.find("\"h\""), 3, "\"\xff\"")), RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(valid).replace(valid.find("\"h\""), 3, "\"" + std::string(300, 'x') + "\"")),
                 RejectReason::kBadHelloInfo);
  require_reject(hello_with_text(std::string(5000, ' ')), RejectReason::kLimitExceeded);
  require_reject(hello_with_text(std::string(2000, '[') + std::string(2000, ']')), RejectReason::kBadHelloInfo);
}

TEST_CASE("random bytes are rejected and counted, never accepted", "[transport]") {
  std::mt19937_64 rng(12345);
  RejectCounters counters;
  constexpr int kTrials = 3000;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<zmq::message_t> frames(1 + rng() % 5);
    for (zmq::message_t& frame : frames) {
      frame.rebuild(rng() % 300);
      for (size_t i = 0; i < frame.size(); ++i) static_cast<uint8_t*>(frame.data())[i] = static_cast<uint8_t>(rng());
    }
    if (trial % 2) {  // half of them start with a valid magic and version to reach deeper checks
      if (frames[0].size() < sizeof(WireHeader)) frames[0].rebuild(sizeof(WireHeader) + 48);
      WireHeader header;
      std::memcpy(&header, frames[0].data(), sizeof header);
      header.magic = kWireMagic;
      header.protocol_version = kProtocolVersion;
      std::memcpy(frames[0].data(), &header, sizeof header);
    }
    REQUIRE(!decode_message(frames, {}, &counters).ok());
  }
  CHECK(counters.total() == kTrials);
  const std::string snapshot = counters.snapshot();
  CHECK(snapshot.find("rejected_total=3000") == 0);
  CHECK(snapshot.find("bad_magic=") != std::string::npos);
}

TEST_CASE("random mutations of valid messages never crash the decoder", "[transport]") {
  std::mt19937_64 rng(777);
  std::vector<std::vector<zmq::message_t>> seeds;
  seeds.push_back(fragment());
  seeds.push_back(encode_sample_fragment(test::make_batch(3, 2, 4, false), 2));
  seeds.push_back(encode_episode_stats({{1.0, 2.0}, {3, 4}}, 1, 1));
  seeds.push_back(encode_credit_grant({3}, 1, 1));
  RejectCounters counters;
  uint64_t accepted = 0;
  constexpr int kTrials = 4000;
  for (int trial = 0; trial < kTrials; ++trial) {
    auto frames = test::deep_copy(seeds[rng() % seeds.size()]);
    for (int flips = 1 + rng() % 4; flips > 0; --flips) {
      zmq::message_t& frame = frames[rng() % frames.size()];
      if (frame.size() == 0) continue;
      static_cast<uint8_t*>(frame.data())[rng() % frame.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    const DecodeResult result = decode_message(frames, {}, &counters);
    REQUIRE(result.ok() != result.reject.has_value());
    if (result.ok()) {
      ++accepted;
      if (auto* batch = std::get_if<SampleBatch>(&*result.message)) CHECK_NOTHROW(batch->validate());
    }
  }
  CHECK(counters.total() + accepted == kTrials);
  CHECK(counters.total() > 0);
  CHECK(accepted > 0);
}

TEST_CASE("reject reasons have distinct names", "[transport]") {
  std::set<std::string> names;
  for (size_t i = 0; i < kNumRejectReasons; ++i) names.insert(reject_reason_name(static_cast<RejectReason>(i)));
  CHECK(names.size() == kNumRejectReasons);
  CHECK(names.count("unknown") == 0);
}

}  // namespace
}  // namespace rlx
