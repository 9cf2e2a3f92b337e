#include "bench/transport_benchmark.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>

#include <zmq.hpp>

#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/frame_builder.h"
#include "transport/sockets.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kSendTimeout{5000};
constexpr std::chrono::milliseconds kRecvTimeout{5000};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Pushes fragments of one shared buffer until seconds pass, then a stop; returns fragments sent.
uint64_t send_fragments(zmq::socket_t& socket, size_t bytes, double seconds) {
  auto buffer = std::make_shared<std::vector<uint8_t>>(bytes, uint8_t{7});
  const std::shared_ptr<const void> owner = buffer;
  const auto start = Clock::now();
  uint64_t sent = 0;
  while (seconds_since(start) < seconds) {
    FrameBuilder builder(MessageType::kSampleFragment, 1, sent, 0);
    builder.add_shared(ColumnId::kObs, DType::kUInt8, {static_cast<int64_t>(bytes)}, buffer->data(), bytes, owner);
    std::vector<zmq::message_t> frames = builder.finish();
    if (!send_frames(socket, frames, kSendTimeout)) throw std::runtime_error("transport benchmark: receiver stalled");
    ++sent;
  }
  std::vector<zmq::message_t> stop = encode_stop(1, sent);
  if (!send_frames(socket, stop, kSendTimeout)) throw std::runtime_error("transport benchmark: receiver stalled");
  return sent;
}

}  // namespace

TransportRun measure_transport(size_t bytes, double seconds) {
  DecodeLimits limits;
  limits.max_message_bytes = std::max<uint64_t>(limits.max_message_bytes, bytes + 4096);
  SocketOptions options = socket_options_for(limits);
  // Bound what is queued to about 64 MiB per side (one message when they are bigger).
  options.send_hwm = options.recv_hwm = static_cast<int>(std::clamp<size_t>((size_t{64} << 20) / bytes, 1, 1000));
  // Two contexts, as in two processes: each side has its own I/O thread.
  zmq::context_t receiver_context(1), sender_context(1);
  zmq::socket_t pull = make_socket(receiver_context, zmq::socket_type::pull, options);
  const std::string endpoint = bind_endpoint(pull, "tcp://127.0.0.1:*");
  zmq::socket_t push = make_socket(sender_context, zmq::socket_type::push, options);
  push.connect(endpoint);
  auto sender = std::async(std::launch::async, [&push, bytes, seconds] { return send_fragments(push, bytes, seconds); });

  TransportRun run;
  FrameLayout layout;
  Clock::time_point start;
  bool started = false;
  for (;;) {
    auto frames = recv_frames(pull, kRecvTimeout);
    if (!frames) {
      sender.wait();
      sender.get();  // rethrows the sender's error, if it had one
      throw std::runtime_error("transport benchmark: no message from the sender for 5 s");
    }
    if (auto reason = inspect_frames(*frames, limits, layout)) {
      throw std::runtime_error(std::string("transport benchmark: bad fragment: ") + reject_reason_name(*reason));
    }
    if (layout.info.type == MessageType::kStop) break;
    if (!started) {  // the clock starts at the first fragment, which is not counted
      started = true;
      start = Clock::now();
      continue;
    }
    ++run.messages;
    run.payload_bytes += layout.info.payload_bytes;
  }
  run.seconds = started ? seconds_since(start) : 0;
  sender.get();
  if (run.seconds > 0) {
    run.msgs_per_s = run.messages / run.seconds;
    run.gbytes_per_s = run.payload_bytes / run.seconds / 1e9;
  }
  return run;
}

double measure_memcpy_gbytes_per_s(size_t bytes, double seconds) {
  std::vector<uint8_t> source(bytes, uint8_t{7}), target(bytes, uint8_t{0});
  const uint64_t batch = std::max<uint64_t>(1, (uint64_t{1} << 20) / std::max<size_t>(bytes, 1));
  uint64_t copies = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    for (uint64_t i = 0; i < batch; ++i) {
      std::memcpy(target.data(), source.data(), bytes);
      asm volatile("" : : "r"(target.data()) : "memory");  // keep every copy
    }
    copies += batch;
    elapsed = seconds_since(start);
  } while (elapsed < seconds);
  return static_cast<double>(copies) * bytes / elapsed / 1e9;
}

TransportBenchmarkResult run_transport_benchmark(const TransportBenchmarkOptions& options) {
  if (options.bytes < 1) throw std::invalid_argument("transport benchmark: bytes must be >= 1");
  if (!(options.seconds > 0)) throw std::invalid_argument("transport benchmark: seconds must be > 0");
  if (options.repeats < 1) throw std::invalid_argument("transport benchmark: repeats must be >= 1");
  TransportBenchmarkResult result;
  std::vector<double> msgs, gbytes, memcpy_gbytes;
  for (int r = 0; r < options.repeats; ++r) {
    TransportRun run = measure_transport(options.bytes, options.seconds);
    run.memcpy_gbytes_per_s = measure_memcpy_gbytes_per_s(options.bytes, std::min(options.seconds, 0.5));
    msgs.push_back(run.msgs_per_s);
    gbytes.push_back(run.gbytes_per_s);
    memcpy_gbytes.push_back(run.memcpy_gbytes_per_s);
    result.runs.push_back(run);
  }
  result.msgs_per_s = median(msgs);
  result.gbytes_per_s = median(gbytes);
  result.memcpy_gbytes_per_s = median(memcpy_gbytes);
  return result;
}

}  // namespace rlx
