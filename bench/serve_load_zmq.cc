// The ZeroMQ connection of the serve load generator (make_zmq_connection): a DEALER whose
// ZMQ_FD the loop's epoll watches. That descriptor only says "look again": after it fires, and
// after every send (which may take in replies and swallow the signal), the socket is read until
// ZMQ_EVENTS has no POLLIN.
#include <cstring>
#include <string_view>

#include "bench/serve_load_connections.h"

namespace rlx {

namespace {

constexpr size_t kReplyHeaderBytes = 20;  // "RLXA" | u16 protocol | u16 status | u32 rows | u64 version

uint64_t little_endian(std::string_view bytes, size_t offset, int count) {
  uint64_t value = 0;
  for (int i = count - 1; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[offset + static_cast<size_t>(i)]);
  return value;
}

class ZmqConnection final : public LoadConnection {
 public:
  ZmqConnection(zmq::context_t& context, const std::string& endpoint, const PreparedRequests& requests, bool verify,
                size_t in_flight, Epoll& epoll, LoadSink& sink, uint64_t tag)
      : requests_(requests), verify_(verify), in_flight_(in_flight), sink_(sink),
        socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.connect(endpoint);
    epoll.add(socket_.get(zmq::sockopt::fd), EPOLLIN, tag);
  }

  size_t room() const override { return in_flight_ - tickets_.size(); }
  size_t outstanding() const override { return tickets_.size(); }

  void send(size_t index, const LoadTicket& ticket) override {
    const size_t i = index % requests_.zmq_body.size();
    const std::string& header = requests_.zmq_header[i];
    const std::string& body = requests_.zmq_body[i];
    const bool sent = socket_.send(zmq::const_buffer(header.data(), header.size()), zmq::send_flags::sndmore | zmq::send_flags::dontwait) &&
                      socket_.send(zmq::const_buffer(body.data(), body.size()), zmq::send_flags::dontwait);
    if (!sent) {  // the high-water mark: the server takes nothing
      sink_.failed(ticket);
    } else {
      tickets_.push_back(ticket);
    }
    take_replies(LoadClock::now());
  }

  void on_events(uint32_t, LoadTime now) override { take_replies(now); }
  LoadTime on_timer(LoadTime) override { return LoadTime::max(); }

 private:
  void take_replies(LoadTime now) {
    while (socket_.get(zmq::sockopt::events) & ZMQ_POLLIN) {
      zmq::message_t header, body;
      if (!socket_.recv(header, zmq::recv_flags::dontwait)) return;
      const bool two_frames = header.more() && socket_.recv(body, zmq::recv_flags::dontwait) && !body.more();
      while (body.more() && socket_.recv(body)) {
      }  // a longer reply: the rest of it dropped
      if (tickets_.empty()) continue;  // a reply to no request (a late one): nothing to charge
      const LoadTicket ticket = tickets_.front();
      tickets_.pop_front();
      const std::string_view head(header.data<char>(), header.size());
      if (!two_frames || head.size() != kReplyHeaderBytes || head.substr(0, 4) != "RLXA") {
        sink_.failed(ticket);
        continue;
      }
      const int status = static_cast<int>(little_endian(head, 6, 2));
      const bool success = status >= 200 && status < 300;
      const bool verified = !verify_ || !success || (little_endian(head, 8, 4) == 1 && body.size() > 0 && body.size() % 4 == 0);
      sink_.answered(ticket, status, verified, now);
    }
  }

  const PreparedRequests& requests_;
  const bool verify_;
  const size_t in_flight_;
  LoadSink& sink_;
  zmq::socket_t socket_;
  std::deque<LoadTicket> tickets_;  // in the order sent
};

}  // namespace

std::unique_ptr<LoadConnection> make_zmq_connection(zmq::context_t& context, const std::string& endpoint,
                                                    const PreparedRequests& requests, bool verify,
                                                    size_t in_flight, Epoll& epoll, uint64_t tag, LoadSink& sink) {
  return std::make_unique<ZmqConnection>(context, endpoint, requests, verify, in_flight, epoll, sink, tag);
}

}  // namespace rlx
