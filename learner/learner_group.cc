#include "learner/learner_group.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <thread>

#include "learner/gloo_communicator.h"
#include "learner/nccl_communicator.h"

namespace rlx {

namespace {

constexpr const char* kPayloadKey = "rlx/payload";

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped (status " + std::to_string(status) + ")";
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

  pids_.assign(static_cast<size_t>(world), -1);
  const pid_t parent = ::getpid();
  for (int rank = 1; rank < world; ++rank) {
    const std::vector<std::string> args = {options_.program, "learner", "--store", "127.0.0.1:" + std::to_string(port),
                                           "--rank", std::to_string(rank), "--world", std::to_string(world),
                                           "--device", options_.device, "--timeout-ms", std::to_string(options_.timeout.count())};
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of learner rank " + std::to_string(rank));
    if (pid == 0) {
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(0);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    pids_[static_cast<size_t>(rank)] = pid;
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
  for (;;) {
    bool running = false;
    for (pid_t& pid : pids_) {
      if (pid <= 0) continue;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
      } else {
        running = true;
      }
    }
    if (!running) return;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (pid_t& pid : pids_) {
    if (pid <= 0) continue;
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
  }
}

void LearnerGroup::check_ranks() {
  for (size_t rank = 1; rank < pids_.size(); ++rank) {
    const pid_t pid = pids_[rank];
    if (pid <= 0) continue;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) continue;
    pids_[rank] = -1;
    throw std::runtime_error("learner rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") " +
                             describe_exit(status) + "; the data-parallel group cannot go on (resume from the last checkpoint)");
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
