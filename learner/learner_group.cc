#include "learner/learner_group.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/log.h"
#include "learner/gloo_communicator.h"
#include "learner/nccl_communicator.h"

namespace rlx {

namespace {

constexpr const char* kPayloadKey = "rlx/payload";
constexpr size_t kReportedLines = 8;

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

LearnerGroupMember::LearnerGroupMember(c10::intrusive_ptr<c10d::Store> store, int rank, int size,
                                       const std::string& device, std::chrono::milliseconds timeout)
    : store_(std::move(store)), rank_(rank), size_(size), device_(learner_device(device, rank)) {
  host_ = std::make_unique<GlooCommunicator>(store_, rank, size, timeout);
  if (device_.is_cuda()) device_comm_ = make_nccl_communicator(store_, rank, size, device_.index(), timeout);
}

LearnerGroupMember::~LearnerGroupMember() = default;

std::string LearnerGroupMember::payload() const {
  const std::vector<uint8_t> bytes = store_->get(kPayloadKey);
  return std::string(bytes.begin(), bytes.end());
}

std::filesystem::path learner_rank_log(const std::filesystem::path& log_dir, int rank) {
  return log_dir / ("learner_rank_" + std::to_string(rank) + ".log");
}

LearnerGroup::LearnerGroup(LearnerGroupOptions options) : options_(std::move(options)) {
  const int world = options_.num_learners;
  if (world < 2) throw std::invalid_argument("a LearnerGroup needs at least 2 learners");
  if (options_.program.empty()) options_.program = std::filesystem::read_symlink("/proc/self/exe").string();
  c10d::TCPStoreOptions store_options;
  store_options.port = 0;  // any free port
  store_options.isServer = true;
  store_options.numWorkers = world;
  store_options.waitWorkers = false;
  store_options.timeout = options_.timeout;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", store_options);
  const int port = store->getPort();
  store_ = store;
  store_->set(kPayloadKey, std::vector<uint8_t>(options_.payload.begin(), options_.payload.end()));

  ranks_.resize(static_cast<size_t>(world));
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
    member_ = std::make_unique<LearnerGroupMember>(store_, 0, world, options_.device, options_.timeout);
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
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(port);
  store_options.isServer = false;
  store_options.numWorkers = size;
  store_options.waitWorkers = false;
  store_options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(host, store_options);
  return std::make_unique<LearnerGroupMember>(store, rank, size, device, timeout);
}

}  // namespace rlx
