// The parts of the serve load generator (bench/serve_load_generator.h) below its event loop: the
// prepared requests of each protocol, an epoll wrapper with nanosecond deadlines, an HTTP/1.1
// answer parser, and the two kinds of connection the loop drives (a non-blocking keep-alive TCP
// socket, a ZeroMQ DEALER socket), which report every request they finish to a LoadSink.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.hpp>

#include "bench/serve_load_generator.h"

namespace rlx {

using LoadClock = std::chrono::steady_clock;
using LoadTime = LoadClock::time_point;

// A file descriptor owned: closed when it goes or is reset.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  // Closes the descriptor held, if any.
  void reset();

 private:
  int fd_ = -1;
};

// An epoll instance whose waits end at a steady-clock deadline (nanosecond resolution).
class Epoll {
 public:
  // std::system_error when the kernel refuses one.
  Epoll();
  // Watches fd for events, reporting tag with them; std::system_error on failure.
  void add(int fd, uint32_t events, uint64_t tag);
  // Changes what fd is watched for; std::system_error on failure.
  void modify(int fd, uint32_t events, uint64_t tag);
  // Waits until an event or deadline; the events that came (none at the deadline).
  const std::vector<epoll_event>& wait(LoadTime deadline);

 private:
  UniqueFd fd_;
  std::vector<epoll_event> events_;
  std::vector<epoll_event> ready_;
};

// A resolved server address.
struct ServerAddress {
  sockaddr_storage address{};
  socklen_t length = 0;
  std::string text;  // "host:port", for messages
};

// Resolves host (a name or numeric address) and port; std::runtime_error naming them when it cannot.
ServerAddress resolve_server(const std::string& host, int port);

// The wire form of every request a run sends, one per observation (cycled by index).
struct PreparedRequests {
  ServeProtocol protocol = ServeProtocol::kHttpJson;
  std::vector<std::string> http;        // whole HTTP requests (head and body)
  std::vector<std::string> zmq_header;  // ZeroMQ: the "RLXQ" frame ...
  std::vector<std::string> zmq_body;    // ... and the rows frame
  size_t size() const { return protocol == ServeProtocol::kZmq ? zmq_body.size() : http.size(); }
};

// Builds the requests of options.protocol for options.observations (see ServeLoadOptions).
PreparedRequests prepare_requests(const ServeLoadOptions& options);

// One HTTP answer parsed from a stream of them.
struct HttpAnswerHead {
  int status = 0;
  size_t head_bytes = 0;            // through the blank line
  size_t body_bytes = 0;            // Content-Length
  bool close = false;               // "Connection: close"
  std::optional<long> rlx_rows;     // X-Rlx-Rows
};

// The head of the answer at the start of bytes: nullopt while it is incomplete;
// std::runtime_error for a head that is no HTTP/1.x answer, has no Content-Length (chunked
// answers are not read) or runs past 64 KiB.
std::optional<HttpAnswerHead> parse_http_answer_head(std::string_view bytes);

// Whether a 2xx answer's body is what the protocol promises for one row: JSON with an "action"
// key, or binary with X-Rlx-Rows 1 and a body of whole 4-byte values.
bool http_answer_verified(ServeProtocol protocol, const HttpAnswerHead& head, std::string_view body);

// A request in flight: when it was due and whether it falls in the measured span.
struct LoadTicket {
  LoadTime due;
  bool measured = false;
};

// Where connections report what became of each request they were given.
class LoadSink {
 public:
  virtual ~LoadSink() = default;
  // An answer with this status came at `now`; verified as http_answer_verified says (or unchecked).
  virtual void answered(const LoadTicket& ticket, int status, bool verified, LoadTime now) = 0;
  // The request was lost: the connection failed, was closed under it, or the answer was garbage.
  virtual void failed(const LoadTicket& ticket) = 0;
  // A connection could not be opened, or was opened again after the server closed it.
  virtual void connect_failed() = 0;
  virtual void reconnected() = 0;
};

// One connection of the loop: a keep-alive HTTP socket or a ZeroMQ DEALER.
class LoadConnection {
 public:
  virtual ~LoadConnection() = default;
  // Requests it can take now: 0 while it connects, waits to reconnect or is full.
  virtual size_t room() const = 0;
  // Requests sent and not yet answered or failed.
  virtual size_t outstanding() const = 0;
  // Sends prepared request `index` for ticket (room() > 0).
  virtual void send(size_t index, const LoadTicket& ticket) = 0;
  // Handles the events epoll reported for it.
  virtual void on_events(uint32_t events, LoadTime now) = 0;
  // Does what was due by now (a reconnect); the next time it wants to be called, or LoadTime::max().
  virtual LoadTime on_timer(LoadTime now) = 0;
};

// A non-blocking TCP connection speaking HTTP/1.1 with keep-alive (and pipelining up to
// in_flight), opened again when the server closes it. tag: how epoll reports it.
std::unique_ptr<LoadConnection> make_http_connection(const ServerAddress& server, const PreparedRequests& requests,
                                                     bool verify, size_t in_flight, Epoll& epoll, uint64_t tag,
                                                     LoadSink& sink);

// A ZeroMQ DEALER connected to endpoint ("tcp://host:port"), in_flight requests at most; replies
// are matched to requests in order.
std::unique_ptr<LoadConnection> make_zmq_connection(zmq::context_t& context, const std::string& endpoint,
                                                    const PreparedRequests& requests, bool verify,
                                                    size_t in_flight, Epoll& epoll, uint64_t tag, LoadSink& sink);

}  // namespace rlx
