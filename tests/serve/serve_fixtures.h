// Policies, files and a plain HTTP client for the serve tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/network_layout.h"
#include "models/policy_file.h"

namespace rlx::test {

// What a test policy acts on and with.
enum class TestPolicyKind { kDiscrete, kBox, kRecurrent };

// A policy file over 4 floats with weights drawn large enough (N(0, 4 / fan_in)) that the
// observation moves the actions: Discrete(3) actions (maskable), a Box(2) Gaussian, or an LSTM
// core with Discrete(3) actions.
inline PolicyFile test_policy_file(TestPolicyKind kind, uint64_t seed = 7) {
  PolicyFile file;
  file.model.obs_size = 4;
  file.model.action_space = kind == TestPolicyKind::kBox
                                ? Space::box({2}, std::vector<float>{-1.0f, -2.0f}, std::vector<float>{1.0f, 2.0f})
                                : Space::discrete(3);
  file.model.hidden_sizes = {32, 32};
  file.model.activation = "tanh";
  file.model.log_std_init = -0.5;
  if (kind == TestPolicyKind::kRecurrent) {
    file.model.core = "lstm";
    file.model.core_size = 8;
    file.model.core_layers = 1;
  }
  const ActorCriticLayout layout = actor_critic_layout(file.model);
  file.parameters.assign(layout.num_parameters, 0.0f);
  Rng rng(seed);
  for (const ParameterSpec& p : layout.parameters) {
    const double scale = p.shape.size() == 1 ? 0.1 : 2 / std::sqrt(static_cast<double>(p.shape.at(1)));
    for (size_t i = 0; i < p.size; ++i) file.parameters[p.offset + i] = static_cast<float>(rng.normal() * scale);
  }
  file.algorithm = "PPO";
  file.env_id = "Test-v0";
  file.source = {{"checkpoint", "test"}, {"iteration", seed}};
  return file;
}

// Writes the file's bytes to path and returns path.
inline std::string write_policy(const PolicyFile& file, const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << encode_policy_file(file);
  return path.string();
}

// `count` observations of 4 floats, drawn from N(0, 1) with `seed`.
inline std::vector<std::vector<float>> test_observations(size_t count, uint64_t seed = 11) {
  Rng rng(seed);
  std::vector<std::vector<float>> rows(count, std::vector<float>(4));
  for (auto& row : rows) {
    for (float& x : row) x = static_cast<float>(rng.normal());
  }
  return rows;
}

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// A connected loopback TCP socket (closed by its destructor).
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("cannot connect to port " + std::to_string(port));
    }
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  void send_text(const std::string& bytes) const { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
  // Everything the server sends until it closes the connection.
  std::string read_all() const {
    std::string raw;
    char buffer[65536];
    for (ssize_t n; (n = ::recv(fd_, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, static_cast<size_t>(n));
    return raw;
  }

 private:
  int fd_;
};

// One HTTP/1.1 request on a fresh loopback connection (Connection: close), its reply read whole.
inline HttpReply http_request(int port, const std::string& method, const std::string& path, const std::string& body = "",
                              const std::map<std::string, std::string>& headers = {}) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to port " + std::to_string(port));
  }
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (a refused request): read what it said
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  char buffer[65536];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) raw.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  HttpReply reply;
  const size_t end = raw.find("\r\n\r\n");
  if (raw.size() < 12 || end == std::string::npos) throw std::runtime_error("no HTTP reply: '" + raw + "'");
  reply.status = std::stoi(raw.substr(9, 3));
  size_t line = raw.find("\r\n") + 2;
  while (line < end) {
    const size_t next = raw.find("\r\n", line);
    const std::string header = raw.substr(line, next - line);
    const size_t colon = header.find(':');
    std::string name = header.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    reply.headers[name] = header.substr(header.find_first_not_of(' ', colon + 1));
    line = next + 2;
  }
  reply.body = raw.substr(end + 4);
  return reply;
}

// Polls `done` every millisecond until it holds (true) or 10 s passed (false).
inline bool wait_until(const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace rlx::test
