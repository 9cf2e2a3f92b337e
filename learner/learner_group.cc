#include "learner/learner_group.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/log.h"
#include "core/error_text.h"
#include "learner/gloo_communicator.h"
#include "learner/nccl_communicator.h"

namespace rlx {

namespace {

constexpr const char* kPayloadKey = "rlx/payload";
constexpr const char* kDeviceKey = "rlx/device";          // the device setting ("cpu", "cuda", "cuda:N")
constexpr const char* kTimeoutKey = "rlx/timeout_ms";     // every collective's timeout
constexpr const char* kLogDirKey = "rlx/log_dir";         // where the ranks' logs go ("" for none)
constexpr size_t kReportedLines = 8;

std::vector<uint8_t> as_bytes(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }

std::string read_key(c10d::Store& store, const std::string& key) {
  const std::vector<uint8_t> bytes = store.get(key);
  return std::string(bytes.begin(), bytes.end());
}

c10::intrusive_ptr<c10d::Store> make_store(const std::string& host, int port, bool server, int world,
                                           std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(port);
  store_options.isServer = server;
  store_options.numWorkers = world;
  store_options.waitWorkers = false;
  store_options.timeout = timeout;
  return c10::make_intrusive<c10d::TCPStore>(host, store_options);
}

}  // namespace

torch::Device learner_device(const std::string& device, int rank) {
  if (device == "cpu") return torch::kCPU;
  int base = 0;
  if (device.rfind("cuda:", 0) == 0) {
    base = std::stoi(device.substr(5));
  } else if (device != "cuda") {
    throw std::invalid_argument("learner device '" + device + "' is not \"cpu\", \"cuda\" or \"cuda:N\"");
  }
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(base + rank));
}

LearnerGroupMember::LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, int rank, int size, torch::Device device,
                                       std::chrono::milliseconds timeout, const GlooEndpoint& gloo)
    : store_(std::move(store)), rank_(rank), size_(size), device_(device) {
  host_ = std::make_unique<GlooCommunicator>(store_, rank, size, timeout, gloo);
  if (device_.is_cuda()) device_comm_ = make_nccl_communicator(store_, rank, size, device_.index(), timeout);
}

LearnerGroupMember::~LearnerGroupMember() = default;

std::string LearnerGroupMember::payload() const { return read_key(*store_, kPayloadKey); }

std::string LearnerGroupMember::log_dir() const { return store_->check({kLogDirKey}) ? read_key(*store_, kLogDirKey) : ""; }

std::filesystem::path learner_rank_log(const std::filesystem::path& log_dir, int rank) {
  return log_dir / ("learner_rank_" + std::to_string(rank) + ".log");
}

LearnerGroup::LearnerGroup(LearnerGroupOptions options) : options_(std::move(options)) {
  const int world = options_.num_learners;
  if (world < 2) throw std::invalid_argument("a LearnerGroup needs at least 2 learners");
  if (options_.program.empty()) options_.program = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::optional<RankPlacement>& placement = options_.placement;
  if (placement && (placement->rank != 0 || placement->world_size != world)) {
    throw std::invalid_argument("LearnerGroup: the driver must be rank 0 of " + std::to_string(world) + ", not rank " +
                                std::to_string(placement->rank) + " of " + std::to_string(placement->world_size));
  }
  // A placed group's store listens on every interface at the agreed port; a local one on any free port.
  try {
    store_ = make_store("127.0.0.1", placement ? placement->master_port : 0, true, world, options_.timeout);
  } catch (const std::exception& e) {
    throw CommunicatorError("learner rank 0 cannot serve the rendezvous on port " +
                            std::to_string(placement ? placement->master_port : 0) + ": " + error_text(e));
  }
  store_->set(kPayloadKey, as_bytes(options_.payload));
  store_->set(kDeviceKey, as_bytes(options_.device));
  store_->set(kTimeoutKey, as_bytes(std::to_string(options_.timeout.count())));
  store_->set(kLogDirKey, as_bytes(options_.log_dir.string()));
  ranks_.resize(static_cast<size_t>(world));
  if (placement) {
    file_logger().info("learner rank 0 of {} serves the rendezvous at {}:{} ({})", world, placement->master_addr,
                       placement->master_port, placement->origin);
    member_ = std::make_unique<LearnerGroupMember>(store_, 0, world, learner_device(options_.device, placement->local_rank),
                                                   options_.timeout, gloo_endpoint_from_environment(placement->master_addr));
    return;
  }
  const int port = static_cast<c10d::TCPStore&>(*store_).getPort();

  ProcessLauncher& launcher = launcher_or_local(options_.launcher);
  for (int rank = 1; rank < world; ++rank) {
    ProcessSpec spec;
    spec.argv = {options_.program, "learner", "--store", "127.0.0.1:" + std::to_string(port), "--rank", std::to_string(rank),
                 "--world", std::to_string(world), "--device", options_.device, "--timeout-ms",
                 std::to_string(options_.timeout.count())};
    for (const std::string& arg : log_level_args()) spec.argv.push_back(arg);
    if (!options_.log_dir.empty()) {
      spec.log = learner_rank_log(options_.log_dir, rank);
      spec.env = {{kLogFormatEnv, kLogFormatDetailed}};  // its stderr is its log
      spec.banner = log_banner("learner rank " + std::to_string(rank) + " of " + std::to_string(world));
    }
    ranks_[static_cast<size_t>(rank)] = launcher.launch(spec);
    file_logger().info("learner rank {} of {} started: pid {}{}", rank, world, ranks_[static_cast<size_t>(rank)]->pid(),
                       spec.log.empty() ? "" : ", log " + spec.log.string());
  }
  try {
    member_ = std::make_unique<LearnerGroupMember>(store_, 0, world, learner_device(options_.device, 0), options_.timeout);
  } catch (const CommunicatorError&) {
    check_ranks_for(std::chrono::milliseconds(1000));  // a child that died names itself
    throw;
  }
}

LearnerGroup::~LearnerGroup() {
  member_.reset();
  reap_all(std::chrono::milliseconds(5000));
}

void LearnerGroup::reap_all(std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  const auto running = [this] {
    return std::any_of(ranks_.begin(), ranks_.end(), [](const auto& child) { return child && !child->poll(); });
  };
  while (running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& child : ranks_) child.reset();  // kills and reaps what still runs
}

void LearnerGroup::check_ranks() {
  for (size_t rank = 1; rank < ranks_.size(); ++rank) {
    std::unique_ptr<LaunchedProcess>& child = ranks_[rank];
    if (!child) continue;
    const std::optional<ChildExit> exit = child->poll();
    if (!exit) continue;
    const pid_t pid = child->pid();
    const std::filesystem::path log = child->log();
    child.reset();
    std::string message = "learner rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") exited: " +
                          exit->describe() + "; the data-parallel group cannot go on (resume from the last checkpoint)";
    if (!log.empty()) {
      const std::vector<std::string> lines = lines_since_banner(log, kReportedLines);
      if (lines.empty()) {
        message += "; it wrote nothing to " + log.string();
      } else {
        message += "; its last lines in " + log.string() + ":";
        for (const std::string& line : lines) message += "\n    | " + line;
      }
    }
    throw std::runtime_error(message);
  }
}

void LearnerGroup::check_ranks_for(std::chrono::milliseconds wait) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  do {
    check_ranks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < deadline);
}

std::unique_ptr<LearnerGroupMember> join_learner_group(const std::string& host, int port, int rank, int size,
                                                       const std::string& device, std::chrono::milliseconds timeout) {
  c10::intrusive_ptr<c10d::Store> store = make_store(host, port, false, size, timeout);
  return std::make_unique<LearnerGroupMember>(store, rank, size, learner_device(device, rank), timeout);
}

std::unique_ptr<LearnerGroupMember> join_placed_learner_group(const RankPlacement& placement,
                                                              std::chrono::milliseconds rendezvous_timeout) {
  const std::string where = placement.master_addr + ":" + std::to_string(placement.master_port);
  c10::intrusive_ptr<c10d::Store> store;
  std::string device, timeout_ms;
  try {
    store = make_store(placement.master_addr, placement.master_port, false, placement.world_size, rendezvous_timeout);
    device = read_key(*store, kDeviceKey);  // waits until rank 0 has published it
    timeout_ms = read_key(*store, kTimeoutKey);
  } catch (const std::exception& e) {
    throw CommunicatorError("learner rank " + std::to_string(placement.rank) + " found no rank 0 at " + where + " (" +
                            placement.origin + ") within " + std::to_string(rendezvous_timeout.count() / 1000) +
                            " s: " + error_text(e));
  }
  const std::chrono::milliseconds timeout(std::stoll(timeout_ms));
  store->setTimeout(timeout > rendezvous_timeout ? timeout : rendezvous_timeout);
  return std::make_unique<LearnerGroupMember>(store, placement.rank, placement.world_size,
                                              learner_device(device, placement.local_rank), timeout,
                                              gloo_endpoint_from_environment(placement.master_addr));
}

}  // namespace rlx
