// initial_states on the wire: a recurrent policy's state before a fragment's first step travels as
// the optional float32 column [K, S]. It round trips bit for bit; the decoder rejects it when its
// shape disagrees with the fragment's, and the run's contract refuses it when it is missing for a
// recurrent model, present for a memoryless one, of another S, or not finite. Each is counted.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/transport/hostile_peer.h"
#include "tests/transport/transport_test_util.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/fragment_contract.h"
#include "transport/sample_receiver.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;
using test::descriptor_index;
using test::with_descriptor;

constexpr int32_t kSteps = 16;
constexpr int32_t kEnvs = 4;
constexpr int64_t kStateSize = 8;  // an LSTM of 4 cells: h and c

// A CartPole fragment that keeps the contract, with S = state_size floats of state per env,
// values that catch any reordering or rounding (a negative zero, a subnormal, the extremes).
SampleBatch recurrent_fragment(int64_t state_size, uint64_t version = 1) {
  SampleBatch batch = test::contract_fragment(kSteps, kEnvs, version);
  batch.worker_id = 666;  // HostilePeer's
  batch.state_size = state_size;
  batch.initial_states.resize(static_cast<size_t>(kEnvs * state_size));
  for (size_t i = 0; i < batch.initial_states.size(); ++i) {
    batch.initial_states[i] = (i % 2 ? -1.f : 1.f) * (0.125f + 0.001f * static_cast<float>(i));
  }
  if (batch.initial_states.size() >= 4) {
    batch.initial_states[0] = -0.f;
    batch.initial_states[1] = std::numeric_limits<float>::denorm_min();
    batch.initial_states[2] = std::numeric_limits<float>::max();
    batch.initial_states[3] = std::numeric_limits<float>::lowest();
  }
  return batch;
}

// Sequence 1000: after any hello a HostilePeer sends (an earlier one is dropped as another setup's).
std::vector<zmq::message_t> encode(const SampleBatch& batch) {
  return encode_sample_fragment(std::make_shared<const SampleBatch>(batch), 1000);
}

// The fragment's contract for a learner whose model has S floats of state per env.
FragmentContract contract_with_state(int64_t state_size) {
  FragmentContract contract;
  contract.num_steps = kSteps;
  contract.num_envs = kEnvs;
  contract.obs_size = 4;
  contract.action_categories = {2};
  contract.policy_outputs = true;
  contract.state_size = state_size;
  return contract;
}

// Decodes frames, requires the given rejection, counted once, with a detail containing `names`.
void require_reject(const std::vector<zmq::message_t>& frames, RejectReason expected, const std::string& names,
                    const DecodeLimits& limits = {}) {
  RejectCounters counters;
  const DecodeResult result = decode_message(frames, limits, &counters);
  INFO("expected " << reject_reason_name(expected) << ", got "
                   << (result.reject ? reject_reason_name(*result.reject) : "acceptance") << " (" << result.detail << ")");
  REQUIRE(!result.ok());
  REQUIRE(result.reject == expected);
  CHECK_THAT(result.detail, Catch::Contains(names));
  CHECK(counters.count(expected) == 1);
  CHECK(counters.total() == 1);
}

// A deep copy of frames whose initial_states column is re-described as dtype/dims and given a
// zeroed frame of the bytes that description implies (header payload_bytes kept consistent).
std::vector<zmq::message_t> with_states_column(const std::vector<zmq::message_t>& frames, DType dtype,
                                               std::vector<int64_t> dims) {
  const size_t index = descriptor_index(frames, ColumnId::kInitialStates);
  uint64_t bytes = dtype_size(static_cast<uint8_t>(dtype));
  for (int64_t dim : dims) bytes *= static_cast<uint64_t>(dim);
  uint64_t old_bytes = 0;
  auto out = with_descriptor(frames, index, [&](ColumnDescriptor& d) {
    old_bytes = d.bytes;
    d.dtype = static_cast<uint8_t>(dtype);
    d.ndim = static_cast<uint8_t>(dims.size());
    for (size_t i = 0; i < kMaxColumnDims; ++i) d.dims[i] = i < dims.size() ? dims[i] : 0;
    d.bytes = bytes;
  });
  out = test::with_header(out, [&](WireHeader& h) { h.payload_bytes = h.payload_bytes - old_bytes + bytes; });
  out[index + 1] = zmq::message_t(static_cast<size_t>(bytes));
  std::memset(out[index + 1].data(), 0, out[index + 1].size());
  return out;
}

std::string fault_of(const SampleBatch& batch, const FragmentContract& contract, std::string* detail = nullptr) {
  const std::optional<FragmentRefusal> refusal = check_fragment(batch, contract);
  if (refusal && detail) *detail = refusal->detail;
  return refusal ? fragment_fault_name(refusal->fault) : "kept";
}

// The fragment as the learner sees it: encoded, then decoded.
SampleBatch over_the_wire(const SampleBatch& batch) {
  DecodeResult result = decode_message(encode(batch));
  INFO(result.detail);
  REQUIRE(result.ok());
  return std::get<SampleBatch>(std::move(*result.message));
}

TEST_CASE("a fragment's initial states cross the wire bit for bit", "[transport]") {
  const SampleBatch sent = recurrent_fragment(kStateSize);
  const auto frames = encode(sent);
  ColumnDescriptor states;
  std::memcpy(&states,
              static_cast<const unsigned char*>(frames[0].data()) + sizeof(WireHeader) +
                  descriptor_index(frames, ColumnId::kInitialStates) * sizeof(ColumnDescriptor),
              sizeof states);
  CHECK(states.dtype == static_cast<uint8_t>(DType::kFloat32));
  CHECK(states.ndim == 2);
  CHECK(states.dims[0] == kEnvs);
  CHECK(states.dims[1] == kStateSize);

  const SampleBatch received = over_the_wire(sent);
  test::require_same_batch(sent, received);
  CHECK(received.state_size == kStateSize);
  REQUIRE(received.initial_states.size() == sent.initial_states.size());
  CHECK(std::memcmp(received.initial_states.data(), sent.initial_states.data(),
                    sent.initial_states.size() * sizeof(float)) == 0);  // -0 and the subnormal too
  CHECK_NOTHROW(received.validate());
  CHECK_FALSE(check_fragment(received, contract_with_state(kStateSize)));
  CHECK(fragment_bytes(received) <= max_fragment_bytes(contract_with_state(kStateSize)));
}

TEST_CASE("a memoryless policy's fragment carries no initial_states column", "[transport]") {
  const SampleBatch sent = recurrent_fragment(0);
  const auto frames = encode(sent);
  const size_t columns = (frames[0].size() - sizeof(WireHeader)) / sizeof(ColumnDescriptor);
  for (size_t i = 0; i < columns; ++i) {
    ColumnDescriptor d;
    std::memcpy(&d, static_cast<const unsigned char*>(frames[0].data()) + sizeof(WireHeader) + i * sizeof d, sizeof d);
    CHECK(d.column != static_cast<uint16_t>(ColumnId::kInitialStates));
  }
  const SampleBatch received = over_the_wire(sent);
  CHECK(received.state_size == 0);
  CHECK(received.initial_states.empty());
  CHECK_FALSE(check_fragment(received, contract_with_state(0)));
}

TEST_CASE("initial states whose shape disagrees with the fragment are rejected by the decoder and counted",
          "[transport]") {
  const auto good = encode(recurrent_fragment(kStateSize));
  REQUIRE(decode_message(good).ok());

  SECTION("[K', S] for another K") {
    require_reject(with_states_column(good, DType::kFloat32, {kEnvs * 2, kStateSize / 2}), RejectReason::kInconsistentDims,
                   "initial_states is [8, 4], expected [K = 4, S >= 1]");
  }
  SECTION("an empty [K, 0] column (S = 0 is said by leaving the column out)") {
    require_reject(with_states_column(good, DType::kFloat32, {kEnvs, 0}), RejectReason::kInconsistentDims, "initial_states");
  }
  SECTION("float64 states") {
    require_reject(with_states_column(good, DType::kFloat64, {kEnvs, kStateSize}), RejectReason::kWrongDType,
                   "column 15 (initial_states) is float64, expected float32");
  }
  SECTION("int32 states of the right size") {
    require_reject(with_descriptor(good, descriptor_index(good, ColumnId::kInitialStates),
                                   [](ColumnDescriptor& d) { d.dtype = static_cast<uint8_t>(DType::kInt32); }),
                   RejectReason::kWrongDType, "initial_states) is int32, expected float32");
  }
  SECTION("a flat [K * S] column") {
    require_reject(with_states_column(good, DType::kFloat32, {kEnvs * kStateSize}), RejectReason::kWrongRank,
                   "column 15 (initial_states) has 1 dims, expected 2");
  }
  SECTION("a [K, S, 1] column") {
    require_reject(with_states_column(good, DType::kFloat32, {kEnvs, kStateSize, 1}), RejectReason::kWrongRank,
                   "initial_states");
  }
  SECTION("S over max_state_size") {
    DecodeLimits limits;
    limits.max_state_size = kStateSize - 1;
    require_reject(good, RejectReason::kLimitExceeded, "initial_states S = 8 over 7", limits);
  }
  SECTION("dims whose byte count overflows are refused before anything is allocated") {
    require_reject(with_descriptor(good, descriptor_index(good, ColumnId::kInitialStates),
                                   [](ColumnDescriptor& d) { d.dims[1] = int64_t{1} << 62; }),
                   RejectReason::kSizeOverflow, "column 15");
  }
  SECTION("a huge S in a column of no bytes (K = 0 elsewhere) is over the limit, not allocated") {
    require_reject(with_states_column(good, DType::kFloat32, {0, int64_t{1} << 60}), RejectReason::kInconsistentDims,
                   "initial_states");
    SampleBatch no_envs = recurrent_fragment(0);
    no_envs.resize(kSteps, 0, 4, 0, true);
    no_envs.final_obs_index.clear();
    no_envs.final_obs.clear();
    no_envs.state_size = 1;
    const auto frames = encode(no_envs);
    REQUIRE(decode_message(frames).ok());
    require_reject(with_states_column(frames, DType::kFloat32, {0, int64_t{1} << 60}), RejectReason::kLimitExceeded,
                   "initial_states S");
  }
  SECTION("states sent twice") {
    require_reject(with_descriptor(good, descriptor_index(good, ColumnId::kFinalObs),
                                   [](ColumnDescriptor& d) { d.column = static_cast<uint16_t>(ColumnId::kInitialStates); }),
                   RejectReason::kDuplicateColumn, "column 15");
  }
}

TEST_CASE("the run's contract refuses initial states that do not fit the learner's model", "[transport][contract]") {
  std::string detail;
  SECTION("missing where the model is recurrent") {
    CHECK(fault_of(over_the_wire(recurrent_fragment(0)), contract_with_state(kStateSize), &detail) == "wrong_state_size");
    CHECK(detail == "initial_states is missing; the learner's recurrent model needs [K, S = 8] (the policy's state "
                    "before step 0)");
  }
  SECTION("present where the model is memoryless") {
    CHECK(fault_of(over_the_wire(recurrent_fragment(kStateSize)), contract_with_state(0), &detail) == "wrong_state_size");
    CHECK(detail == "initial_states [K, S = 8] sent, but the learner's model is memoryless (no recurrent core)");
  }
  SECTION("of another S") {
    CHECK(fault_of(over_the_wire(recurrent_fragment(6)), contract_with_state(kStateSize), &detail) == "wrong_state_size");
    CHECK(detail == "initial_states S is 6, the run's contract says 8");
  }
  SECTION("a NaN state") {
    SampleBatch batch = recurrent_fragment(kStateSize);
    batch.initial_states[13] = std::numeric_limits<float>::quiet_NaN();
    CHECK(fault_of(over_the_wire(batch), contract_with_state(kStateSize), &detail) == "non_finite");
    CHECK(detail == "initial_states[13] is nan");
  }
  SECTION("an infinite state") {
    SampleBatch batch = recurrent_fragment(kStateSize);
    batch.initial_states.back() = -std::numeric_limits<float>::infinity();
    CHECK(fault_of(over_the_wire(batch), contract_with_state(kStateSize), &detail) == "non_finite");
    CHECK(detail == "initial_states[31] is -inf");
  }
  SECTION("a fragment built in memory whose states disagree with its S") {
    SampleBatch batch = recurrent_fragment(kStateSize);
    batch.initial_states.pop_back();
    CHECK(fault_of(batch, contract_with_state(kStateSize), &detail) == "final_obs_mismatch");  // validate()'s fault
    CHECK_THAT(detail, Catch::Contains("initial_states"));
  }
  CHECK(max_fragment_bytes(contract_with_state(kStateSize)) ==
        max_fragment_bytes(contract_with_state(0)) + static_cast<size_t>(kEnvs * kStateSize) * sizeof(float));
}

std::shared_ptr<Weights> weights(uint64_t version) {
  auto w = std::make_shared<Weights>();
  w->policy_version = version;
  w->params.assign(8, 0.5f);
  return w;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

TEST_CASE("a receiver for a recurrent model takes fragments with their states and counts bad ones by fault",
          "[transport][hostile]") {
  zmq::context_t context(1);
  ReceiverOptions options;
  options.env.env_id = "CartPole-v1";
  options.env.obs_size = 4;
  options.env.num_actions = 2;
  options.env.max_episode_steps = 500;
  options.fragment_length = kSteps;
  options.max_envs_per_worker = 8;
  options.heartbeat_interval = 100ms;
  options.state_size = kStateSize;
  options.make_welcome = [](int) { return std::string(R"({"env_id": "CartPole-v1"})"); };
  SampleReceiver receiver(context, options);
  receiver.publish_weights(weights(3));

  test::HostilePeer honest(context, receiver.endpoint());
  REQUIRE(honest.join());
  honest.send_fragment(recurrent_fragment(kStateSize, 3));
  std::optional<SampleBatch> popped = receiver.pop(2000ms);
  REQUIRE(popped);
  CHECK(popped->state_size == kStateSize);
  CHECK(popped->initial_states == recurrent_fragment(kStateSize, 3).initial_states);

  struct Attack {
    const char* name;
    std::function<std::vector<zmq::message_t>(uint64_t version)> frames;
    const char* counted;  // in fault_counts or reject_counts
  };
  const Attack attacks[] = {
      {"no states", [](uint64_t v) { return encode(recurrent_fragment(0, v)); }, "wrong_state_size=1"},
      {"S = 6", [](uint64_t v) { return encode(recurrent_fragment(6, v)); }, "wrong_state_size=2"},
      {"a NaN state",
       [](uint64_t v) {
         SampleBatch batch = recurrent_fragment(kStateSize, v);
         batch.initial_states[5] = std::numeric_limits<float>::quiet_NaN();
         return encode(batch);
       },
       "non_finite=1"},
      {"states of another K",
       [](uint64_t v) {
         return with_states_column(encode(recurrent_fragment(kStateSize, v)), DType::kFloat32, {2 * kEnvs, kStateSize / 2});
       },
       "inconsistent_dims=1"},
  };
  uint64_t dropped = 0;
  for (const Attack& attack : attacks) {
    INFO(attack.name);
    test::HostilePeer attacker(context, receiver.endpoint());
    REQUIRE(attacker.join());
    std::vector<zmq::message_t> frames = attack.frames(attacker.latest_version());
    attacker.send(std::move(frames));
    ++dropped;
    REQUIRE(eventually([&] { return receiver.stats().peers_dropped == dropped; }));
    const ReceiverStats stats = receiver.stats();
    CHECK_THAT(stats.fault_counts + " " + stats.reject_counts, Catch::Contains(attack.counted));
    REQUIRE(eventually([&] { attacker.read(10ms); return attacker.stopped(); }));
  }
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.refused == 3);
  CHECK(stats.messages_rejected == 1);
  const std::vector<std::string> notices = receiver.take_notices();
  REQUIRE(notices.size() == 4);
  CHECK_THAT(notices[0], Catch::Contains("wrong_state_size: initial_states is missing"));
  CHECK_THAT(notices[2], Catch::Contains("non_finite: initial_states[5] is nan"));
  // The honest worker is still served.
  honest.read(20ms);
  honest.send_fragment(recurrent_fragment(kStateSize, 3));
  REQUIRE(receiver.pop(2000ms));
}

}  // namespace
}  // namespace rlx
