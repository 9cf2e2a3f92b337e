#include "bench/serve_load_connections.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace rlx {

namespace {

[[noreturn]] void throw_errno(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

// ASCII case-insensitive equality, for header names.
bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::optional<long> parse_long(std::string_view text) {
  long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

void append_little_endian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

std::string float_rows(const std::vector<float>& row) {
  std::string out;
  for (float value : row) {
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    append_little_endian(out, bits, 4);
  }
  return out;
}

std::string json_observation(const std::vector<float>& row) {
  std::string out = "{\"observation\":[";
  char number[32];
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) out += ',';
    const auto result = std::to_chars(number, number + sizeof number, row[i]);  // shortest round trip
    out.append(number, result.ptr);
  }
  return out + "]}";
}

constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kReadChunk = 16 * 1024;
constexpr auto kRetryDelay = std::chrono::milliseconds(10);  // after a refused connection

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Epoll::Epoll() : fd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (fd_.get() < 0) throw_errno("epoll_create1");
  events_.resize(256);
}

void Epoll::add(int fd, uint32_t events, uint64_t tag) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_ADD, fd, &event) != 0) throw_errno("epoll_ctl add");
}

void Epoll::modify(int fd, uint32_t events, uint64_t tag) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  if (::epoll_ctl(fd_.get(), EPOLL_CTL_MOD, fd, &event) != 0) throw_errno("epoll_ctl modify");
}

const std::vector<epoll_event>& Epoll::wait(LoadTime deadline) {
  static std::atomic<bool> has_pwait2{true};  // epoll_pwait2 is Linux 5.11+; older kernels get millisecond waits
  const int capacity = static_cast<int>(events_.size());
  int count = 0;
  const bool forever = deadline == LoadTime::max();
  const auto left = std::max(LoadClock::duration::zero(), forever ? LoadClock::duration::zero() : deadline - LoadClock::now());
  const int64_t left_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  if (has_pwait2) {
    const timespec timeout{static_cast<time_t>(left_ns / 1000000000), static_cast<long>(left_ns % 1000000000)};
    count = ::epoll_pwait2(fd_.get(), events_.data(), capacity, forever ? nullptr : &timeout, nullptr);
    if (count < 0 && errno == ENOSYS) has_pwait2 = false;
  }
  if (!has_pwait2) count = ::epoll_wait(fd_.get(), events_.data(), capacity, forever ? -1 : static_cast<int>((left_ns + 999999) / 1000000));
  if (count < 0 && errno != EINTR) throw_errno("epoll_wait");
  ready_.assign(events_.begin(), events_.begin() + std::max(count, 0));
  return ready_;
}

ServerAddress resolve_server(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int status = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (status != 0 || !found) throw std::runtime_error("cannot resolve " + host + ":" + service + ": " + ::gai_strerror(status));
  ServerAddress server;
  std::memcpy(&server.address, found->ai_addr, found->ai_addrlen);
  server.length = found->ai_addrlen;
  server.text = host + ":" + service;
  ::freeaddrinfo(found);
  return server;
}

PreparedRequests prepare_requests(const ServeLoadOptions& options) {
  PreparedRequests requests;
  requests.protocol = options.protocol;
  const std::string head = "POST /v1/policies/" + options.policy + "/act HTTP/1.1\r\nHost: " + options.host + ":" +
                           std::to_string(options.port) + "\r\n";
  for (const std::vector<float>& row : options.observations) {
    switch (options.protocol) {
      case ServeProtocol::kHttpJson: {
        const std::string body = json_observation(row);
        requests.http.push_back(head + "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                                "\r\n\r\n" + body);
        break;
      }
      case ServeProtocol::kHttpBinary: {
        const std::string body = float_rows(row);
        requests.http.push_back(head + "Content-Type: application/octet-stream\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body);
        break;
      }
      case ServeProtocol::kZmq: {
        std::string header = "RLXQ";
        append_little_endian(header, 1, 2);                    // protocol
        append_little_endian(header, 1, 2);                    // flags: deterministic
        append_little_endian(header, 1, 4);                    // rows
        append_little_endian(header, options.policy.size(), 2);
        append_little_endian(header, 0, 2);                    // no session
        header += options.policy;
        requests.zmq_header.push_back(header);
        requests.zmq_body.push_back(float_rows(row));
        break;
      }
    }
  }
  return requests;
}

std::optional<HttpAnswerHead> parse_http_answer_head(std::string_view bytes) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (bytes.size() > kMaxHeadBytes) throw std::runtime_error("an HTTP answer's head runs past 64 KiB");
    return std::nullopt;
  }
  HttpAnswerHead head;
  head.head_bytes = end + 4;
  std::string_view rest = bytes.substr(0, end + 2);
  size_t line_end = rest.find("\r\n");
  const std::string_view status_line = rest.substr(0, line_end);
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    throw std::runtime_error("not an HTTP/1.x answer: '" + std::string(status_line.substr(0, 40)) + "'");
  }
  const std::optional<long> status = parse_long(status_line.substr(9, 3));
  if (!status || *status < 100 || *status > 999) throw std::runtime_error("an HTTP answer without a status code");
  head.status = static_cast<int>(*status);
  bool has_length = false;
  for (rest.remove_prefix(line_end + 2); !rest.empty(); rest.remove_prefix(line_end + 2)) {
    line_end = rest.find("\r\n");
    const std::string_view line = rest.substr(0, line_end);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon), value = trimmed(line.substr(colon + 1));
    if (same_name(name, "content-length")) {
      const std::optional<long> length = parse_long(value);
      if (!length || *length < 0) throw std::runtime_error("an HTTP answer with Content-Length '" + std::string(value) + "'");
      head.body_bytes = static_cast<size_t>(*length);
      has_length = true;
    } else if (same_name(name, "connection")) {
      head.close = same_name(value, "close");
    } else if (same_name(name, "x-rlx-rows")) {
      head.rlx_rows = parse_long(value);
    } else if (same_name(name, "transfer-encoding")) {
      throw std::runtime_error("an HTTP answer with Transfer-Encoding " + std::string(value) + " (only Content-Length is read)");
    }
  }
  if (!has_length && head.status >= 200 && head.status != 204 && head.status != 304) {
    throw std::runtime_error("an HTTP " + std::to_string(head.status) + " answer without Content-Length");
  }
  return head;
}

bool http_answer_verified(ServeProtocol protocol, const HttpAnswerHead& head, std::string_view body) {
  if (protocol == ServeProtocol::kHttpBinary) return head.rlx_rows == 1 && !body.empty() && body.size() % 4 == 0;
  return body.find("\"action\"") != std::string_view::npos;
}

namespace {

// See make_http_connection.
class HttpConnection final : public LoadConnection {
 public:
  HttpConnection(const ServerAddress& server, const PreparedRequests& requests, bool verify, size_t in_flight,
                 Epoll& epoll, uint64_t tag, LoadSink& sink)
      : server_(server), requests_(requests), verify_(verify), in_flight_(in_flight), epoll_(epoll), tag_(tag),
        sink_(sink), in_(4 * kReadChunk) {
    open();
  }

  size_t room() const override { return state_ == State::kOpen && !closing_ ? in_flight_ - tickets_.size() : 0; }
  size_t outstanding() const override { return tickets_.size(); }

  void send(size_t index, const LoadTicket& ticket) override {
    const std::string& request = requests_.http[index % requests_.http.size()];
    tickets_.push_back(ticket);
    if (!out_.empty()) {
      out_ += request;
      return;
    }
    const ssize_t sent = ::send(fd_.get(), request.data(), request.size(), MSG_NOSIGNAL);
    if (sent == static_cast<ssize_t>(request.size())) return;
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return lose_connection(/*retry_later=*/false);
    out_.assign(request, static_cast<size_t>(std::max<ssize_t>(sent, 0)));
    watch(EPOLLIN | EPOLLOUT);
  }

  void on_events(uint32_t events, LoadTime now) override {
    if (state_ == State::kConnecting) return finish_connect();
    if (state_ != State::kOpen) return;
    if ((events & EPOLLOUT) && !flush()) return;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_answers(now);
  }

  LoadTime on_timer(LoadTime now) override {
    if (state_ == State::kWaiting && now >= retry_at_) open();
    return state_ == State::kWaiting ? retry_at_ : LoadTime::max();
  }

 private:
  enum class State { kConnecting, kOpen, kWaiting };

  void open() {
    fd_ = UniqueFd(::socket(server_.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd_.get() < 0) throw_errno("socket");
    const int one = 1;
    ::setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    closing_ = false;
    out_.clear();
    begin_ = end_ = 0;
    const int status = ::connect(fd_.get(), reinterpret_cast<const sockaddr*>(&server_.address), server_.length);
    if (status != 0 && errno != EINPROGRESS) {
      sink_.connect_failed();
      return wait_to_retry();
    }
    state_ = status == 0 ? State::kOpen : State::kConnecting;
    events_ = state_ == State::kOpen ? EPOLLIN : EPOLLIN | EPOLLOUT;
    epoll_.add(fd_.get(), events_, tag_);
  }

  void finish_connect() {
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      sink_.connect_failed();
      return wait_to_retry();
    }
    state_ = State::kOpen;
    watch(EPOLLIN);
  }

  void wait_to_retry() {
    fd_.reset();
    state_ = State::kWaiting;
    retry_at_ = LoadClock::now() + kRetryDelay;
  }

  // Fails every request in flight and opens the connection again (now, or after kRetryDelay).
  void lose_connection(bool retry_later) {
    std::deque<LoadTicket> lost;
    lost.swap(tickets_);
    for (const LoadTicket& ticket : lost) sink_.failed(ticket);
    fd_.reset();
    if (retry_later) return wait_to_retry();
    open();
  }

  void watch(uint32_t events) {
    if (events == events_) return;
    events_ = events;
    epoll_.modify(fd_.get(), events_, tag_);
  }

  // Writes what is queued; false when the connection was lost doing so.
  bool flush() {
    while (!out_.empty()) {
      const ssize_t sent = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        lose_connection(false);
        return false;
      }
      out_.erase(0, static_cast<size_t>(sent));
    }
    watch(EPOLLIN);
    return true;
  }

  void read_answers(LoadTime now) {
    for (;;) {
      if (begin_ == end_) begin_ = end_ = 0;
      if (in_.size() - end_ < kReadChunk) {
        std::copy(in_.begin() + static_cast<std::ptrdiff_t>(begin_), in_.begin() + static_cast<std::ptrdiff_t>(end_), in_.begin());
        end_ -= begin_;
        begin_ = 0;
        if (in_.size() - end_ < kReadChunk) in_.resize(in_.size() * 2);
      }
      const size_t space = in_.size() - end_;
      const ssize_t got = ::recv(fd_.get(), in_.data() + end_, space, 0);
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (got <= 0) {  // closed: quietly between answers, a loss under a request
        const bool idle = tickets_.empty() && begin_ == end_;
        if (idle) sink_.reconnected();
        return lose_connection(false);
      }
      end_ += static_cast<size_t>(got);
      if (!take_answers(now)) return;
      if (static_cast<size_t>(got) < space) return;
    }
  }

  // Hands every whole answer buffered to the sink; false when the connection was lost or closed.
  bool take_answers(LoadTime now) {
    while (begin_ < end_) {
      const std::string_view bytes(in_.data() + begin_, end_ - begin_);
      std::optional<HttpAnswerHead> head;
      try {
        head = parse_http_answer_head(bytes);
      } catch (const std::runtime_error&) {  // garbage from the server: the requests in flight are lost
        lose_connection(false);
        return false;
      }
      if (!head || bytes.size() < head->head_bytes + head->body_bytes) return true;
      if (tickets_.empty()) {  // an answer to no request
        lose_connection(false);
        return false;
      }
      const LoadTicket ticket = tickets_.front();
      tickets_.pop_front();
      const bool success = head->status >= 200 && head->status < 300;
      const bool verified = !verify_ || !success ||
                            http_answer_verified(requests_.protocol, *head, bytes.substr(head->head_bytes, head->body_bytes));
      begin_ += head->head_bytes + head->body_bytes;
      closing_ = closing_ || head->close;
      sink_.answered(ticket, head->status, verified, now);
    }
    if (closing_ && tickets_.empty()) {
      sink_.reconnected();
      lose_connection(false);
      return false;
    }
    return true;
  }

  const ServerAddress& server_;
  const PreparedRequests& requests_;
  const bool verify_;
  const size_t in_flight_;
  Epoll& epoll_;
  const uint64_t tag_;
  LoadSink& sink_;
  UniqueFd fd_;
  State state_ = State::kWaiting;
  uint32_t events_ = 0;
  bool closing_ = false;  // the server said Connection: close
  LoadTime retry_at_{};
  std::deque<LoadTicket> tickets_;  // in the order sent, which is the order answered
  std::string out_;                 // bytes not yet written
  std::vector<char> in_;            // answers read, [begin_, end_) not yet taken
  size_t begin_ = 0, end_ = 0;
};

}  // namespace

std::unique_ptr<LoadConnection> make_http_connection(const ServerAddress& server, const PreparedRequests& requests,
                                                     bool verify, size_t in_flight, Epoll& epoll, uint64_t tag,
                                                     LoadSink& sink) {
  return std::make_unique<HttpConnection>(server, requests, verify, in_flight, epoll, tag, sink);
}

}  // namespace rlx
