#include "bench/real_scale_benchmark.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "bench/fragment_consumer.h"
#include "bench/process_memory.h"
#include "bench/scale_benchmark.h"
#include "core/fd_limit.h"
#include "core/temp_dir.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/worker_pool.h"
#include "rollout/worker_setup.h"
#include "transport/sample_receiver.h"

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kFdSlack = 256;                        // beyond one descriptor per worker connection
constexpr std::chrono::milliseconds kTick{20};        // weights and join checks
constexpr std::chrono::milliseconds kPoolPollEvery{500};  // waitpid over every worker: not every tick

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
std::chrono::milliseconds millis(double seconds) { return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)); }

void validate(const RealScaleOptions& o) {
  const auto require = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("real-worker scale benchmark: ") + what);
  };
  require(!o.worker_program.empty(), "worker_program (the rlx binary) is required");
  require(o.workers >= 1, "workers must be >= 1");
  require(o.envs_per_worker >= 1 && o.fragment_length >= 1, "envs_per_worker and fragment_length must be >= 1");
  require(o.credits_per_worker >= 1, "credits_per_worker must be >= 1");
  require(std::isfinite(o.seconds) && o.seconds > 0, "seconds must be > 0");
  require(std::isfinite(o.warmup_seconds) && o.warmup_seconds >= 0, "warmup_seconds must be >= 0");
  require(std::isfinite(o.weights_interval_seconds) && o.weights_interval_seconds >= 0,
          "weights_interval_seconds must be >= 0");
  require(std::isfinite(o.join_timeout_seconds) && o.join_timeout_seconds > 0 && std::isfinite(o.stop_timeout_seconds) &&
              o.stop_timeout_seconds > 0,
          "join and stop timeouts must be > 0");
}

WorkerSetup setup_for(const RealScaleOptions& o, int worker_index) {
  WorkerSetup setup;
  setup.env_id = o.env_id;
  setup.num_envs = o.envs_per_worker;
  setup.fragment_length = o.fragment_length;
  setup.seed = o.seed;
  setup.worker_index = worker_index;
  setup.model = ModelSpec::for_env(global_env_registry().spec(o.env_id));  // the default network
  setup.behaviour_values = false;  // as PPO's workers: the learner recomputes V(s)
  return setup;
}

// The number after the last "key=" in text; nothing when absent.
std::optional<uint64_t> last_count(const std::string& text, const std::string& key) {
  const size_t at = text.rfind(key + "=");
  if (at == std::string::npos) return std::nullopt;
  size_t end = at + key.size() + 1;
  uint64_t value = 0;
  bool digits = false;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') {
    value = value * 10 + static_cast<uint64_t>(text[end++] - '0');
    digits = true;
  }
  return digits ? std::optional<uint64_t>(value) : std::nullopt;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Throws std::runtime_error describing the first exit when any worker exited (they must not
// before they are told to stop).
void require_none_exited(WorkerPool& pool, const SampleReceiver& receiver) {
  const std::vector<WorkerExitReport> exits = pool.poll();
  if (exits.empty()) return;
  const ReceiverStats s = receiver.stats();
  const WorkerExitReport& first = exits.front();
  std::string text = "real-worker scale benchmark: worker " + std::to_string(first.worker_index + 1) + " (pid " +
                     std::to_string(first.pid) + ") exited early: " + first.exit.describe();
  if (exits.size() > 1) text += " (and " + std::to_string(exits.size() - 1) + " more)";
  for (const std::string& line : first.last_lines) text += "\n    | " + line;
  text += "\n  the receiver: " + std::to_string(s.workers_joined) + " joined, " + std::to_string(s.workers_active) +
          " active, " + std::to_string(s.joins_refused_full) + " joins refused (max_workers), " +
          std::to_string(s.workers_lost) + " lost, " + std::to_string(s.workers_restarted) + " re-joined, " +
          std::to_string(s.hellos_refused) + " hellos refused, " + std::to_string(s.peers_dropped) + " peers dropped";
  throw std::runtime_error(text);
}

}  // namespace

RealScaleResult run_real_scale_benchmark(const RealScaleOptions& options) {
  validate(options);
  require_fd_limit(static_cast<uint64_t>(options.workers) + kFdSlack, "the real-worker scale benchmark");
  const EnvSpec& spec = global_env_registry().spec(options.env_id);

  zmq::context_t context(1);
  ReceiverOptions receiver_options;
  receiver_options.endpoint = options.endpoint;
  receiver_options.env = ExpectedEnv::of(spec);
  receiver_options.fragment_length = options.fragment_length;
  receiver_options.max_envs_per_worker = options.envs_per_worker;
  receiver_options.max_workers = static_cast<size_t>(options.workers);
  receiver_options.credits_per_worker = options.credits_per_worker;
  receiver_options.max_policy_lag = options.max_policy_lag;
  receiver_options.make_welcome = [&options](int index) { return setup_for(options, index).to_json(); };
  SampleReceiver receiver(context, receiver_options);

  // The default network's initial weights; later versions carry the same values (what is
  // measured is their delivery, not learning).
  const ActorCriticPolicy initial(setup_for(options, 0).model, options.seed);
  const std::vector<float> params = initial.weights();
  uint64_t version = 0;
  const auto publish_next = [&] {
    auto weights = std::make_shared<Weights>();
    weights->policy_version = ++version;
    weights->params = params;
    receiver.publish_weights(std::move(weights));
  };
  FragmentConsumer consumer(receiver);

  std::optional<TempDir> temp_logs;
  std::filesystem::path log_dir = options.log_dir;
  if (log_dir.empty()) log_dir = temp_logs.emplace("rlx-scale-workers-").path();
  const std::string endpoint = receiver.endpoint();
  WorkerPoolOptions pool_options;
  pool_options.num_workers = options.workers;
  pool_options.max_restarts = 0;  // an exit before the stop is a failure of the run
  pool_options.stop_grace = 3000ms;
  pool_options.log_dir = log_dir;
  // On two cores the workers already stepping leave little CPU to those still starting (1,000
  // joined in minutes, not seconds): a worker waits for its welcome as long as we wait for it.
  const std::string learner_timeout_s =
      std::to_string(static_cast<int64_t>(options.join_timeout_seconds + options.warmup_seconds + options.seconds +
                                          options.stop_timeout_seconds) + 30);
  const auto started = Clock::now();
  WorkerPool pool(pool_options, [&](int i) {
    return std::vector<std::string>{options.worker_program, "worker", "--connect", endpoint, "--worker-id",
                                    std::to_string(i + 1), "--learner-timeout", learner_timeout_s};
  });
  RealScaleResult result;
  result.workers = options.workers;
  result.spawn_seconds = seconds_between(started, Clock::now());

  // Publishes new weights when due and checks the workers now and then while waiting.
  auto next_weights = Clock::now() + millis(options.weights_interval_seconds);
  auto next_pool_poll = Clock::now();
  const auto tick = [&] {
    if (Clock::now() >= next_pool_poll) {
      require_none_exited(pool, receiver);
      next_pool_poll = Clock::now() + kPoolPollEvery;
    }
    if (version > 0 && options.weights_interval_seconds > 0 && Clock::now() >= next_weights) {
      publish_next();
      next_weights += millis(options.weights_interval_seconds);
    }
    std::this_thread::sleep_for(kTick);
  };

  const auto join_deadline = started + millis(options.join_timeout_seconds);
  while (receiver.stats().workers_joined < static_cast<uint64_t>(options.workers)) {
    if (Clock::now() >= join_deadline) {
      throw std::runtime_error("real-worker scale benchmark: only " + std::to_string(receiver.stats().workers_joined) +
                               " of " + std::to_string(options.workers) + " workers joined within " +
                               std::to_string(options.join_timeout_seconds) + " s (their logs: " + log_dir.string() + ")");
    }
    tick();
  }
  result.join_seconds = seconds_between(started, Clock::now());
  // The first weights once every worker has joined: workers stepping from the start leave the
  // ones still starting too little CPU on a small box (beyond ~700 of 1,000 on two cores, joins
  // stalled for minutes), and the window measures all N anyway.
  publish_next();
  next_weights = Clock::now() + millis(options.weights_interval_seconds);
  const auto warm = Clock::now() + millis(options.warmup_seconds);
  while (Clock::now() < warm) tick();

  const ReceiverStats before = receiver.stats();
  const double cpu_before = process_cpu_seconds();
  const auto window_start = Clock::now();
  const auto window_end = window_start + millis(options.seconds);
  while (Clock::now() < window_end) tick();
  const ReceiverStats after = receiver.stats();
  const double cpu_after = process_cpu_seconds();
  result.seconds = seconds_between(window_start, Clock::now());
  result.window_fragments = after.fragments_received - before.fragments_received;
  result.window_env_steps = after.env_steps_consumed - before.env_steps_consumed;
  result.receiver_cpu_seconds = cpu_after - cpu_before;
  result.cpu_us_per_fragment =
      result.window_fragments > 0 ? 1e6 * result.receiver_cpu_seconds / static_cast<double>(result.window_fragments) : 0;
  result.fragments_per_s = static_cast<double>(result.window_fragments) / result.seconds;
  result.env_steps_per_s = static_cast<double>(result.window_env_steps) / result.seconds;

  // Memory, after the window (reading 1,000 smaps_rollup files is not the receiver's cost).
  for (int i = 0; i < options.workers; ++i) {
    const pid_t pid = pool.pid(i);
    if (pid <= 0) continue;
    const ProcessMemory memory = read_process_memory(pid);
    ++result.memory_read;
    result.total_pss_kb += memory.pss_kb;
    result.total_rss_kb += memory.rss_kb;
    result.max_pss_kb = std::max(result.max_pss_kb, memory.pss_kb);
  }
  result.receiver_rss_kb = read_process_memory(::getpid()).rss_kb;

  // Stop: each worker's goodbye follows its last fragment, and its exit line gives its count.
  receiver.stop_workers();
  const auto stop_deadline = Clock::now() + millis(options.stop_timeout_seconds);
  while (pool.num_running() > 0 && Clock::now() < stop_deadline) {
    pool.poll();
    std::this_thread::sleep_for(50ms);
  }
  while (receiver.stats().queued > 0 && Clock::now() < stop_deadline) std::this_thread::sleep_for(kTick);
  consumer.stop();
  result.clean_exits = pool.clean_exits();
  pool.stop();  // whatever still runs past the deadline

  for (int i = 0; i < options.workers; ++i) {
    const std::string log = read_text(pool.log_path(i));
    const std::optional<uint64_t> sent = last_count(log, "fragments_sent");
    if (!sent) continue;
    ++result.workers_reported;
    result.fragments_sent += *sent;
    result.fragments_unsent += last_count(log, "fragments_unsent").value_or(0);
  }

  const ReceiverStats s = receiver.stats();
  result.fragments_received = s.fragments_received;
  result.fragments_consumed = s.fragments_consumed;
  result.dropped_stale = s.dropped_stale;
  result.dropped_unknown_worker = s.dropped_unknown_worker;
  result.dropped_at_stop = s.dropped_at_stop;
  result.refused = s.refused;
  result.queued = s.queued;
  result.messages_rejected = s.messages_rejected;
  result.workers_joined = s.workers_joined;
  result.workers_left = s.workers_left;
  result.workers_lost = s.workers_lost;
  result.workers_restarted = s.workers_restarted;
  result.weights_published = version;
  result.peak_queued_bytes = s.peak_queued_bytes;
  result.queued_bytes_bound = s.queued_bytes_bound;
  const auto n = static_cast<uint64_t>(options.workers);
  // A worker that heard nothing for its rejoin_after (3 s, a loaded machine) joins again on the
  // same connection: the receiver counts it in workers_restarted at once, and again in
  // workers_joined once its new hello arrives, which a re-join during the stop (1,000 workers
  // take seconds to stop) never sends; nor does it count such a worker's goodbye in
  // workers_left. So n <= joined <= n + restarted; each worker's clean exit (status 0: stopped
  // by us) and its own count are what say it is done.
  result.accounted = result.workers_joined >= n && result.workers_joined <= n + result.workers_restarted &&
                     result.clean_exits == options.workers &&
                     result.workers_reported == options.workers && result.refused == 0 &&
                     result.fragments_sent == result.fragments_received &&
                     result.fragments_received == result.fragments_consumed + result.dropped_stale +
                                                      result.dropped_unknown_worker + result.dropped_at_stop +
                                                      result.refused + result.queued;
  return result;
}

std::string format_real_scale_result(const RealScaleResult& r) {
  std::ostringstream out;
  out << "mode=real workers=" << r.workers << " spawn_seconds=" << r.spawn_seconds << " join_seconds=" << r.join_seconds
      << " seconds=" << r.seconds << " total_pss_kb=" << r.total_pss_kb << " total_rss_kb=" << r.total_rss_kb
      << " max_pss_kb=" << r.max_pss_kb << " memory_read=" << r.memory_read << " receiver_rss_kb=" << r.receiver_rss_kb
      << " fragments_sent=" << r.fragments_sent << " workers_reported=" << r.workers_reported
      << " fragments_unsent=" << r.fragments_unsent << " fragments_received=" << r.fragments_received
      << " fragments_consumed=" << r.fragments_consumed << " dropped_stale=" << r.dropped_stale
      << " dropped_unknown_worker=" << r.dropped_unknown_worker << " dropped_at_stop=" << r.dropped_at_stop
      << " refused=" << r.refused << " queued=" << r.queued << " messages_rejected=" << r.messages_rejected
      << " workers_joined=" << r.workers_joined << " workers_left=" << r.workers_left << " workers_lost=" << r.workers_lost
      << " workers_restarted=" << r.workers_restarted << " clean_exits=" << r.clean_exits
      << " weights_published=" << r.weights_published << " peak_queued_bytes=" << r.peak_queued_bytes
      << " queued_bytes_bound=" << r.queued_bytes_bound << " accounted=" << (r.accounted ? "true" : "false")
      << " window_fragments=" << r.window_fragments << " window_env_steps=" << r.window_env_steps
      << " receiver_cpu_seconds=" << r.receiver_cpu_seconds << " receiver_cpu_us_per_fragment=" << r.cpu_us_per_fragment
      << " fragments_per_s=" << r.fragments_per_s << " env_steps_per_s=" << r.env_steps_per_s;
  return out.str();
}

}  // namespace rlx
