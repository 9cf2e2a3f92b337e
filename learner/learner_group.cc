#include "learner/learner_group.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "core/log.h"
#include "core/error_text.h"
#include "learner/gloo_communicator.h"
#include "learner/learner_group_keys.h"
#include "learner/nccl_communicator.h"

namespace rlx {

namespace {

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

std::filesystem::path learner_rank_log(const std::filesystem::path& log_dir, int rank) {
  return log_dir / ("learner_rank_" + std::to_string(rank) + ".log");
}

LearnerGroup::LearnerGroup(LearnerGroupOptions options) : options_(std::move(options)) {
  const int world = options_.num_learners;
  if (world < (options_.elastic ? 1 : 2)) throw std::invalid_argument("a LearnerGroup needs at least 2 learners");
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
  store_->set(group_keys::kPayload, as_bytes(options_.payload));
  store_->set(group_keys::kDevice, as_bytes(options_.device));
  store_->set(group_keys::kTimeout, as_bytes(std::to_string(options_.timeout.count())));
  store_->set(group_keys::kLogDir, as_bytes(options_.log_dir.string()));
  store_->set(group_keys::kElastic, as_bytes(options_.elastic ? "1" : "0"));
  ranks_.resize(static_cast<size_t>(world));
  const int port = placement ? placement->master_port : static_cast<c10d::TCPStore&>(*store_).getPort();
  if (options_.elastic) {
    start_elastic(port);
    return;
  }
  if (placement) {
    file_logger().info("learner rank 0 of {} serves the rendezvous at {}:{} ({})", world, placement->master_addr,
                       placement->master_port, placement->origin);
    member_ = std::make_unique<LearnerGroupMember>(store_, 0, world, learner_device(options_.device, placement->local_rank),
                                                   options_.timeout, gloo_endpoint_from_environment(placement->master_addr));
    return;
  }
  launch_children(port, /*elastic=*/false);
  try {
    member_ = std::make_unique<LearnerGroupMember>(store_, 0, world, learner_device(options_.device, 0), options_.timeout);
  } catch (const CommunicatorError&) {
    check_ranks_for(std::chrono::milliseconds(1000));  // a child that died names itself
    throw;
  }
}

void LearnerGroup::launch_children(int port, bool elastic) {
  const int world = options_.num_learners;
  ProcessLauncher& launcher = launcher_or_local(options_.launcher);
  for (int rank = 1; rank < world; ++rank) {
    ProcessSpec spec;
    spec.argv = {options_.program, "learner", "--store", "127.0.0.1:" + std::to_string(port), "--rank", std::to_string(rank),
                 "--world", std::to_string(world), "--device", options_.device, "--timeout-ms",
                 std::to_string(options_.timeout.count())};
    if (elastic) spec.argv.push_back("--elastic");
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
}

LearnerGroup::~LearnerGroup() {
  if (options_.elastic) {
    try {
      member_->membership().mark_finished();  // ranks waiting to join leave
    } catch (const std::exception& e) {
      logger().warn("cannot tell waiting learner ranks the run is over: {}", error_text(e));
    }
  }
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

std::string LearnerGroup::describe_exit(size_t rank, const ChildExit& exit) {
  const std::unique_ptr<LaunchedProcess>& child = ranks_[rank];
  std::string message = "learner rank " + std::to_string(rank) + " (pid " + std::to_string(child->pid()) + ") exited: " +
                        exit.describe();
  const std::filesystem::path log = child->log();
  if (log.empty()) return message;
  const std::vector<std::string> lines = lines_since_banner(log, kReportedLines);
  if (lines.empty()) return message + "; it wrote nothing to " + log.string();
  message += "; its last lines in " + log.string() + ":";
  for (const std::string& line : lines) message += "\n    | " + line;
  return message;
}

void LearnerGroup::check_ranks() {
  if (options_.elastic) {
    reap_exited_children();
    return;
  }
  for (size_t rank = 1; rank < ranks_.size(); ++rank) {
    if (!ranks_[rank]) continue;
    const std::optional<ChildExit> exit = ranks_[rank]->poll();
    if (!exit) continue;
    const std::string message =
        describe_exit(rank, *exit) + "\n  the data-parallel group cannot go on (resume from the last checkpoint)";
    ranks_[rank].reset();
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

namespace {

// A follower's connection to rank 0's store and what rank 0 published for it there.
struct RankZeroStore {
  c10::intrusive_ptr<c10d::Store> store;
  std::string device;
  std::chrono::milliseconds timeout{0};
  bool elastic = false;
};

// Connects to rank 0's store at host:port, waiting up to rendezvous_timeout for its keys;
// CommunicatorError "WHO found no rank 0 at HOST:PORT (ORIGIN) within T s: ..." otherwise.
RankZeroStore connect_to_rank_zero(const std::string& host, int port, std::chrono::milliseconds rendezvous_timeout,
                                   const std::string& who, const std::string& origin) {
  RankZeroStore found;
  try {
    found.store = make_store(host, port, false, 1, rendezvous_timeout);
    found.device = read_key(*found.store, group_keys::kDevice);  // waits until rank 0 has published it
    found.timeout = std::chrono::milliseconds(std::stoll(read_key(*found.store, group_keys::kTimeout)));
    found.elastic = read_key(*found.store, group_keys::kElastic) == "1";
  } catch (const std::exception& e) {
    throw CommunicatorError(who + " found no rank 0 at " + host + ":" + std::to_string(port) +
                            (origin.empty() ? "" : " (" + origin + ")") + " within " +
                            std::to_string(rendezvous_timeout.count() / 1000) + " s: " + error_text(e));
  }
  found.store->setTimeout(std::max(found.timeout, rendezvous_timeout));
  return found;
}

std::unique_ptr<LearnerGroupMember> join_elastic(RankZeroStore found, const std::string& host, int port, int rank_hint,
                                                 int device_rank, const GlooEndpoint& gloo) {
  auto member = std::make_unique<LearnerGroupMember>(found.store, learner_device(found.device, device_rank), found.timeout,
                                                     gloo, StoreAddress{host, port});
  if (!join_until_formed(*member, rank_hint)) return nullptr;
  return member;
}

}  // namespace

bool join_until_formed(LearnerGroupMember& member, int rank_hint) {
  for (;;) {
    try {
      return member.join_generation(rank_hint);
    } catch (const CommunicatorError& e) {  // the generation failed while forming: wait for the next
      logger().warn("generation {} of the elastic group failed to form: {}", member.generation(), error_text(e));
    }
  }
}

std::unique_ptr<LearnerGroupMember> join_learner_group(const std::string& host, int port, int rank, int size,
                                                       const std::string& device, std::chrono::milliseconds timeout) {
  c10::intrusive_ptr<c10d::Store> store = make_store(host, port, false, size, timeout);
  return std::make_unique<LearnerGroupMember>(store, rank, size, learner_device(device, rank), timeout);
}

std::unique_ptr<LearnerGroupMember> join_elastic_learner_group(const std::string& host, int port, int rank_hint,
                                                               int device_rank, const GlooEndpoint& gloo,
                                                               std::chrono::milliseconds rendezvous_timeout) {
  RankZeroStore found = connect_to_rank_zero(host, port, rendezvous_timeout, "a joining learner", "");
  if (!found.elastic) {
    throw CommunicatorError("the learner group at " + host + ":" + std::to_string(port) +
                            " is not elastic: ranks join it only when it starts (set elastic: true to take ranks in)");
  }
  return join_elastic(std::move(found), host, port, rank_hint, device_rank, gloo);
}

std::unique_ptr<LearnerGroupMember> join_placed_learner_group(const RankPlacement& placement,
                                                              std::chrono::milliseconds rendezvous_timeout) {
  RankZeroStore found = connect_to_rank_zero(placement.master_addr, placement.master_port, rendezvous_timeout,
                                             "learner rank " + std::to_string(placement.rank), placement.origin);
  const GlooEndpoint gloo = gloo_endpoint_from_environment(placement.master_addr);
  if (found.elastic) {
    return join_elastic(std::move(found), placement.master_addr, placement.master_port, placement.rank,
                        placement.local_rank, gloo);
  }
  return std::make_unique<LearnerGroupMember>(found.store, placement.rank, placement.world_size,
                                              learner_device(found.device, placement.local_rank), found.timeout, gloo);
}

}  // namespace rlx
