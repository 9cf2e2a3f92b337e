// A real `rlx train` under attack: while PPO trains CartPole with two worker processes on a
// loopback TCP port, hostile peers join like workers and send every kind of fragment that breaks
// the run's contract, report made-up episode returns of 1e9, and flood the port with raw garbage.
// The run must refuse and count them, reach its reward as it would without the attack, and never
// report a return it did not see in its own accepted fragments.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/test_util.h"
#include "../transport/hostile_peer.h"
#include "run_rlx.h"

namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A loopback TCP port that was free a moment ago.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  socklen_t length = sizeof address;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// Writes random bytes over fresh raw TCP connections to port until stop.
void flood_garbage(int port, const std::atomic<bool>& stop) {
  std::mt19937_64 random(7);
  std::string garbage(16 * 1024, '\0');
  while (!stop) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      for (int chunk = 0; chunk < 8 && !stop; ++chunk) {
        for (char& c : garbage) c = static_cast<char>(random());
        if (::send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL) <= 0) break;
      }
    }
    ::close(fd);
    std::this_thread::sleep_for(2ms);  // leave the two cores some room for the run itself
  }
}

}  // namespace

TEST_CASE("rlx train survives hostile peers and still solves CartPole", "[cli][hostile]") {
  rlx::test::TempDir tmp;
  const int port = free_port();
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);
  // LibTorch's learner: the native one solves CartPole in about 0.6 s, too short a run for the
  // attacks to land 0.5 s before its last row (CI counted 0 and then 5 of the 10 kinds).
  auto run = std::async(std::launch::async, [&] {
    return rlx::test::run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --output " +
                              (tmp / "runs").string() + " --trial-name t -q --bind " + endpoint +
                              " --set stop.timesteps_total=250000 --set learner_backend=torch");
  });

  std::atomic<bool> stop_flood{false};
  std::thread flooder(flood_garbage, port, std::cref(stop_flood));
  zmq::context_t context(1);
  const std::vector<rlx::test::Attack> attacks = rlx::test::contract_attacks(32, 4);
  int attacks_sent = 0;
  int lies_sent = 0;
  std::vector<std::chrono::system_clock::time_point> attack_times;
  // The first wave: one peer per kind of attack, all joining at once as soon as the learner is up,
  // so that every kind lands early in the run.
  // Each peer is refused and dropped after its one fragment.
  std::vector<std::future<std::optional<std::chrono::system_clock::time_point>>> wave;
  for (const rlx::test::Attack& attack : attacks) {
    wave.push_back(std::async(std::launch::async, [&context, &endpoint, &attack]() {
      rlx::test::HostilePeer attacker(context, endpoint);
      std::optional<std::chrono::system_clock::time_point> sent;
      if (!attacker.join(20000ms)) return sent;  // the run never came up, or was over
      rlx::SampleBatch bad = rlx::test::contract_fragment(32, 4, attacker.latest_version());
      attack.spoil(bad);
      attacker.send_fragment(bad);
      sent = std::chrono::system_clock::now();
      attacker.read(100ms);
      return sent;
    }));
  }
  for (auto& peer : wave) {
    if (const auto sent = peer.get()) {
      attack_times.push_back(*sent);
      ++attacks_sent;
    }
  }
  for (size_t i = 0; run.wait_for(0ms) != std::future_status::ready; ++i) {
    rlx::test::HostilePeer attacker(context, endpoint);
    if (!attacker.join(2000ms)) continue;  // the learner is not up yet, or is done
    if (i % 4 == 0) {
      // Five made-up episode reports, each claiming returns of 1e9.
      rlx::EpisodeStats claim;
      claim.returns.assign(5, 1e9);
      claim.lengths.assign(5, 500);
      for (int n = 0; n < 5; ++n) attacker.send(rlx::encode_episode_stats(claim, 666, 100 + n));
      ++lies_sent;
    }
    rlx::SampleBatch bad = rlx::test::contract_fragment(32, 4, attacker.latest_version());
    attacks[i % attacks.size()].spoil(bad);
    attacker.send_fragment(bad);
    ++attacks_sent;
    attack_times.push_back(std::chrono::system_clock::now());
    attacker.read(100ms);
    if (i == 40) stop_flood = true;  // garbage in the first part of the run only
  }
  stop_flood = true;
  flooder.join();
  const rlx::test::CommandOutput r = run.get();
  INFO(r.out << r.err << "\nattacks sent: " << attacks_sent << ", lies sent: " << lies_sent);
  REQUIRE(r.exit_code == 0);  // solved: the mean return of the last 100 episodes reached 475
  const nlohmann::json result =
      nlohmann::json::parse(rlx::test::read_text_file((tmp / "runs/cartpole-ppo/t/result.json").string()));
  CHECK(result["episode_return_mean"].get<double>() >= 475);
  CHECK(result["episode_return_mean"].get<double>() <= 500);
  CHECK(result["timesteps_total"].get<int64_t>() <= 250000);
  CHECK(attacks_sent >= static_cast<int>(attacks.size()));
  CHECK(lies_sent >= 1);
  // The attackers' fragments were refused. The counts are those of the last row, and the attack
  // goes on until the process exits (longer on a loaded machine): judge the attacks sent at
  // least 0.5 s before that row was written (result.jsonl's modification time).
  struct stat rows_stat {};
  REQUIRE(::stat((tmp / "runs/cartpole-ppo/t/result.jsonl").c_str(), &rows_stat) == 0);
  const auto last_row = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(rows_stat.st_mtim.tv_sec) +
                                                                      std::chrono::nanoseconds(rows_stat.st_mtim.tv_nsec)));
  const auto counted = std::count_if(attack_times.begin(), attack_times.end(),
                                     [&](auto sent) { return sent < last_row - std::chrono::milliseconds(500); });
  INFO("attacks sent 0.5 s before the last row: " << counted);
  // Every kind of attack is among them (the first wave alone holds each kind once; the tail
  // after the last row can be a large share of all attacks).
  CHECK(counted >= static_cast<std::ptrdiff_t>(attacks.size()));
  CHECK(result["sampler"]["fragments_refused"].get<int64_t>() >= counted * 9 / 10);
  CHECK(result["sampler"]["messages_rejected"].get<int64_t>() > 0);  // the garbage
  // No row ever reported a return above CartPole's 500.
  std::istringstream rows(rlx::test::read_text_file((tmp / "runs/cartpole-ppo/t/result.jsonl").string()));
  for (std::string line; std::getline(rows, line);) {
    const nlohmann::json row = nlohmann::json::parse(line);
    if (!row["episode_return_mean"].is_null()) CHECK(row["episode_return_mean"].get<double>() <= 500);
  }
}
