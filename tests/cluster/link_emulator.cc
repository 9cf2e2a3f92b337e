// rlx_link_emulator: a userspace netem for the test cluster (tests/cluster/slurm_cluster.sh
// `shape`), for kernels without sch_netem. It forwards Ethernet frames between two interfaces
// of one network namespace, both ways, through AF_PACKET sockets, and gives each direction a
// delay, a jitter, a random loss and a cut. Plain C++17 and Linux; needs CAP_NET_RAW.
//
//   rlx_link_emulator [OPTIONS] IF_A IF_B
//     --delay-ms D[,D2]     one-way delay, A->B[,B->A] (one value: both ways)     default 0
//     --jitter-ms J[,J2]    delay varies by up to +-J                               default 0
//     --jitter uniform|normal   uniform in [-J, J], or normal with sigma J/2 cut at +-J
//     --loss P[,P2]         percent of frames dropped at random ("1" or "1%")       default 0
//     --seed S              the random numbers' seed (jitter and loss)              default 1
//     --reorder             jittered frames may overtake each other, as with netem
//     --limit N             frames queued per direction; more are dropped           default 10000
//     --cut-ms MS           drop everything for MS ms from now (0: restore)
//     --control FILE        on SIGHUP, read more of these options (all but the interfaces,
//                           --jitter, --reorder, --limit and --control) from FILE, apply them
//                           and delete FILE; a FILE it rejects becomes FILE.rejected
//
//   SIGUSR1 cuts the link until SIGUSR2. SIGTERM or SIGINT: print the counts and exit 0.
//   "ready" on stderr once both sockets are bound. Exit 2: bad usage; 1: the sockets failed.
//
// Without --reorder a direction is one FIFO: a frame leaves no earlier than the one before it
// (netem's jitter reorders; here a jittered frame waits for the slower one ahead of it).
// TCP super-frames (GSO, up to 64 KB, which veths hand over whole) are cut into MTU-sized
// segments with their checksums (link_frames.h), so that loss and delay apply per wire frame;
// a frame whose checksum the sender left to the hardware keeps it so (PACKET_VNET_HDR).
// The same seed and the same frames give the same losses and delays; each direction of each
// link draws its own numbers (the seed and the direction's interface names seed it).
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "link_frames.h"

namespace {

using rlx::link::Frame;
using rlx::link::kGsoEcn;
using rlx::link::kGsoTcpV4;
using rlx::link::kGsoTcpV6;
using rlx::link::segment_tcp;
using rlx::link::VnetHeader;
constexpr size_t kVnetLen = sizeof(VnetHeader);
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxFrame = 256 * 1024;   // a GSO frame is at most 64 KB (more with BIG TCP)

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

class Fd {   // owns a file descriptor
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// --- settings ---------------------------------------------------------------------------------

struct Shaping {   // one direction's link
  double delay_ms = 0;
  double jitter_ms = 0;
  double loss = 0;   // probability, [0, 1]
};

struct Settings {
  std::string if_a, if_b;
  Shaping ab, ba;
  bool normal_jitter = false;
  bool reorder = false;
  uint64_t seed = 1;
  bool seed_given = false;
  size_t limit = 10000;
  int64_t cut_ms = -1;   // -1: no change
  std::string control;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double parse_number(const std::string& option, const std::string& text, double lo, double hi) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(value) || value < lo || value > hi) {
    std::ostringstream message;
    message << option << " '" << text << "': want a number from " << lo << " to " << hi;
    throw UsageError(message.str());
  }
  return value;
}

// "X" sets both directions' field, "X,Y" A->B's to X and B->A's to Y.
void parse_pair(const std::string& option, std::string text, double lo, double hi, double scale,
                double Shaping::*field, Settings& settings) {
  if (option == "--loss" && !text.empty() && text.back() == '%') text.pop_back();
  const size_t comma = text.find(',');
  const std::string first = text.substr(0, comma);
  const std::string second = comma == std::string::npos ? first : text.substr(comma + 1);
  settings.ab.*field = parse_number(option, first, lo, hi) * scale;
  settings.ba.*field = parse_number(option, second, lo, hi) * scale;
}

// Applies `args` to `settings`. At run time (from the control file) only the shaping itself
// may change; options not named keep their values.
void parse_options(const std::vector<std::string>& args, Settings& settings, bool runtime) {
  std::vector<std::string> interfaces;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& option = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(option + " wants a value");
      return args[++i];
    };
    if (option == "--delay-ms") {
      parse_pair(option, value(), 0, 60'000, 1, &Shaping::delay_ms, settings);
    } else if (option == "--jitter-ms") {
      parse_pair(option, value(), 0, 60'000, 1, &Shaping::jitter_ms, settings);
    } else if (option == "--loss") {
      parse_pair(option, value(), 0, 100, 0.01, &Shaping::loss, settings);
    } else if (option == "--seed") {
      settings.seed = static_cast<uint64_t>(parse_number(option, value(), 0, 1e15));
      settings.seed_given = true;
    } else if (option == "--cut-ms") {
      settings.cut_ms = static_cast<int64_t>(parse_number(option, value(), 0, 1e9));
    } else if (runtime) {
      throw UsageError("'" + option + "': at run time only --delay-ms, --jitter-ms, --loss, --seed and --cut-ms may change");
    } else if (option == "--jitter") {
      const std::string& kind = value();
      if (kind != "uniform" && kind != "normal") throw UsageError("--jitter '" + kind + "': want uniform or normal");
      settings.normal_jitter = kind == "normal";
    } else if (option == "--reorder") {
      settings.reorder = true;
    } else if (option == "--limit") {
      settings.limit = static_cast<size_t>(parse_number(option, value(), 1, 1e7));
    } else if (option == "--control") {
      settings.control = value();
    } else if (option.rfind("--", 0) == 0) {
      throw UsageError("unknown option '" + option + "' (see the top of tests/cluster/link_emulator.cc)");
    } else {
      interfaces.push_back(option);
    }
  }
  if (runtime) return;
  if (interfaces.size() != 2) throw UsageError("want two interfaces, IF_A IF_B");
  settings.if_a = interfaces[0];
  settings.if_b = interfaces[1];
}

std::string describe(const Shaping& s) {
  std::ostringstream out;
  out << "delay " << s.delay_ms << " ms, jitter " << s.jitter_ms << " ms, loss " << s.loss * 100 << " %";
  return out.str();
}

// --- the link ---------------------------------------------------------------------------------

// An AF_PACKET socket bound to one interface: it receives what arrives there (not what we or
// others send out of it) and sends out of it.
Fd open_port(const std::string& name) {
  // Protocol 0 until bound, so that no other interface's frames slip in before bind().
  Fd sock(socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) fail_errno("socket(AF_PACKET) (needs root or CAP_NET_RAW)");
  const int index = static_cast<int>(if_nametoindex(name.c_str()));
  if (index == 0) fail_errno("interface '" + name + "' (not in this network namespace?)");
  const int one = 1, rcvbuf = 8 << 20, sndbuf = 4 << 20;
  if (setsockopt(sock.get(), SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one) != 0) fail_errno("PACKET_VNET_HDR");
  setsockopt(sock.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);   // also checked per frame
  if (setsockopt(sock.get(), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
    setsockopt(sock.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  if (setsockopt(sock.get(), SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) != 0)
    setsockopt(sock.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_protocol = htons(ETH_P_ALL);
  address.sll_ifindex = index;
  if (bind(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fail_errno("bind to " + name);
  packet_mreq promiscuous{};   // frames for any address (a veth passes them all anyway)
  promiscuous.mr_ifindex = index;
  promiscuous.mr_type = PACKET_MR_PROMISC;
  if (setsockopt(sock.get(), SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promiscuous, sizeof promiscuous) != 0)
    fail_errno("promiscuous mode on " + name);
  return sock;
}

struct Counts {
  uint64_t received = 0, forwarded = 0, bytes = 0, lost = 0, cut = 0, queue_full = 0, send_errors = 0,
           oversize = 0, split = 0, segments = 0, discarded = 0;
};

// One direction: frames read from `in`, held until due, written to `out`.
class Direction {
 public:
  Direction(std::string name, int in, int out) : name_(std::move(name)), in_(in), out_(out) {}

  void configure(const Shaping& shaping, const Settings& settings) {
    shaping_ = shaping;
    normal_ = settings.normal_jitter;
    reorder_ = settings.reorder;
    limit_ = settings.limit;
  }
  // Each direction (of each link: the names differ) draws its own numbers from the one seed.
  void seed(uint64_t seed) {
    std::vector<uint64_t> words{seed};
    for (char c : name_) words.push_back(static_cast<unsigned char>(c));
    std::seed_seq sequence(words.begin(), words.end());
    random_.seed(sequence);
  }

  // Reads what is waiting on `in` (a bounded burst, so that due frames are not held up).
  void receive(int64_t cut_until, std::vector<uint8_t>& buffer) {
    for (int burst = 0; burst < 256; ++burst) {
      sockaddr_ll from{};
      socklen_t from_len = sizeof from;
      const ssize_t n = recvfrom(in_, buffer.data(), buffer.size(), MSG_TRUNC,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) {
        if (errno == EINTR || errno == ENETDOWN) continue;   // ENETDOWN: once, at link-down
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        fail_errno("receive on " + name_);
      }
      if (from.sll_pkttype == PACKET_OUTGOING) continue;   // sent out of `in`, by us or others
      ++counts_.received;
      if (size_t(n) > buffer.size() || size_t(n) < kVnetLen + 14) {
        ++counts_.oversize;
        continue;
      }
      const int64_t now = now_ns();
      Frame frame;
      std::memcpy(&frame.vnet, buffer.data(), kVnetLen);
      frame.bytes.assign(buffer.data() + kVnetLen, buffer.data() + n);
      const uint8_t gso = frame.vnet.gso_type & ~kGsoEcn;
      std::vector<Frame> segments;
      if (gso == kGsoTcpV4 || gso == kGsoTcpV6) segments = segment_tcp(frame);
      if (segments.empty()) {
        segments.push_back(std::move(frame));   // sent as it came (its vnet header with it)
      } else {
        ++counts_.split;
        counts_.segments += segments.size();
      }
      for (Frame& segment : segments) admit(std::move(segment), now, cut_until);
    }
  }

  // Sends every frame that is due; returns when the next one is (kNever: none queued).
  int64_t send_due(int64_t now, int64_t cut_until) {
    while (!queue_.empty() && queue_.begin()->first <= now) {
      Frame& frame = queue_.begin()->second;
      if (now < cut_until) {
        ++counts_.cut;
      } else {
        iovec parts[2] = {{&frame.vnet, kVnetLen}, {frame.bytes.data(), frame.bytes.size()}};
        msghdr message{};
        message.msg_iov = parts;
        message.msg_iovlen = 2;
        if (sendmsg(out_, &message, MSG_DONTWAIT) < 0) {
          if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR) return now + 100'000;   // retry in 0.1 ms
          ++counts_.send_errors;   // e.g. ENETDOWN while the interface is down
        } else {
          ++counts_.forwarded;
          counts_.bytes += frame.bytes.size();
        }
      }
      queue_.erase(queue_.begin());
    }
    return queue_.empty() ? kNever : queue_.begin()->first;
  }

  std::string report(int socket_drops) {
    counts_.discarded += queue_.size();
    queue_.clear();
    const Counts& c = counts_;
    std::ostringstream out;
    out << name_ << ": received " << c.received << ", forwarded " << c.forwarded << " (" << c.bytes
        << " bytes); dropped: loss " << c.lost << ", cut " << c.cut << ", queue full " << c.queue_full
        << ", send errors " << c.send_errors << ", oversize " << c.oversize << ", socket overflow "
        << socket_drops << ", queued at exit " << c.discarded << "; " << c.split
        << " TCP super-frames split into " << c.segments;
    return out.str();
  }
  const std::string& name() const { return name_; }

 private:
  void admit(Frame frame, int64_t now, int64_t cut_until) {
    if (now < cut_until) {
      ++counts_.cut;
      return;
    }
    if (shaping_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(random_) < shaping_.loss) {
      ++counts_.lost;
      return;
    }
    if (queue_.size() >= limit_) {
      ++counts_.queue_full;
      return;
    }
    double delay_ms = shaping_.delay_ms;
    if (shaping_.jitter_ms > 0) {
      const double j = shaping_.jitter_ms;
      delay_ms += normal_ ? std::clamp(std::normal_distribution<double>(0, j / 2)(random_), -j, j)
                          : std::uniform_real_distribution<double>(-j, j)(random_);
    }
    int64_t due = now + static_cast<int64_t>(std::max(0.0, delay_ms) * 1e6);
    if (!reorder_) due = std::max(due, last_due_);   // never before the frame ahead of it
    last_due_ = due;
    queue_.emplace(due, std::move(frame));   // equal times keep their order
  }

  std::string name_;
  int in_, out_;
  Shaping shaping_;
  bool normal_ = false, reorder_ = false;
  size_t limit_ = 0;
  std::mt19937_64 random_;
  int64_t last_due_ = 0;
  std::multimap<int64_t, Frame> queue_;   // by due time
  Counts counts_;
};

int socket_drops(int fd) {   // frames the kernel dropped because our receive buffer was full
  tpacket_stats stats{};
  socklen_t len = sizeof stats;
  return getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &stats, &len) == 0 ? int(stats.tp_drops) : -1;
}

class Emulator {
 public:
  explicit Emulator(Settings settings)
      : settings_(std::move(settings)),
        a_(open_port(settings_.if_a)),
        b_(open_port(settings_.if_b)),
        ab_(settings_.if_a + "->" + settings_.if_b, a_.get(), b_.get()),
        ba_(settings_.if_b + "->" + settings_.if_a, b_.get(), a_.get()),
        buffer_(kVnetLen + kMaxFrame) {
    sigset_t signals;
    sigemptyset(&signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&signals, s);
    if (sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) fail_errno("sigprocmask");
    signals_ = Fd(signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
    if (signals_.get() < 0) fail_errno("signalfd");
    settings_.seed_given = true;
    apply(now_ns());
  }

  void run() {
    say("ready: " + ab_.name() + " " + describe(settings_.ab) + "; " + ba_.name() + " " + describe(settings_.ba) +
        (settings_.reorder ? "; reordering" : "") + "; seed " + std::to_string(settings_.seed));
    pollfd fds[3] = {{a_.get(), POLLIN, 0}, {b_.get(), POLLIN, 0}, {signals_.get(), POLLIN, 0}};
    while (!stop_) {
      int64_t now = now_ns();
      if (cut_until_ != kNever && cut_until_ != 0 && now >= cut_until_) restore();
      const int64_t next = std::min({ab_.send_due(now, cut_until_), ba_.send_due(now, cut_until_),
                                     cut_until_ == kNever || cut_until_ == 0 ? kNever : cut_until_});
      timespec timeout{};
      now = now_ns();
      if (next != kNever && next > now) timeout = {time_t((next - now) / 1'000'000'000), long((next - now) % 1'000'000'000)};
      if (ppoll(fds, 3, next == kNever ? nullptr : &timeout, nullptr) < 0 && errno != EINTR) fail_errno("ppoll");
      if (fds[0].revents) ab_.receive(cut_until_, buffer_);
      if (fds[1].revents) ba_.receive(cut_until_, buffer_);
      if (fds[2].revents & POLLIN) handle_signals();
    }
    say(ab_.report(socket_drops(a_.get())));
    say(ba_.report(socket_drops(b_.get())));
  }

 private:
  static void say(const std::string& line) { std::cerr << "rlx_link_emulator: " << line << std::endl; }

  void apply(int64_t now) {
    ab_.configure(settings_.ab, settings_);
    ba_.configure(settings_.ba, settings_);
    if (settings_.seed_given) ab_.seed(settings_.seed), ba_.seed(settings_.seed);
    settings_.seed_given = false;
    if (settings_.cut_ms > 0) {
      cut_until_ = now + settings_.cut_ms * 1'000'000;
      say("cut for " + std::to_string(settings_.cut_ms) + " ms");
    } else if (settings_.cut_ms == 0) {
      restore();
    }
    settings_.cut_ms = -1;
  }

  void restore() {
    if (cut_until_ != 0) say("restored");
    cut_until_ = 0;
  }

  void handle_signals() {
    signalfd_siginfo info{};
    while (read(signals_.get(), &info, sizeof info) == sizeof info) {
      switch (info.ssi_signo) {
        case SIGTERM:
        case SIGINT: stop_ = true; break;
        case SIGUSR1:
          cut_until_ = kNever;
          say("cut (until SIGUSR2)");
          break;
        case SIGUSR2: restore(); break;
        case SIGHUP: reload(); break;
      }
    }
  }

  // The control file: more options, applied at once; deleted once applied (the caller's
  // acknowledgement), or renamed FILE.rejected with the reason on stderr.
  void reload() {
    if (settings_.control.empty()) return say("SIGHUP ignored: no --control file");
    std::ifstream file(settings_.control);
    if (!file) return say("SIGHUP: cannot read " + settings_.control);
    std::vector<std::string> args;
    for (std::string word; file >> word;) args.push_back(word);
    Settings next = settings_;
    try {
      parse_options(args, next, true);
    } catch (const UsageError& e) {
      say(settings_.control + " rejected: " + e.what());
      std::rename(settings_.control.c_str(), (settings_.control + ".rejected").c_str());
      return;
    }
    settings_ = next;
    apply(now_ns());
    say("applied: " + describe(settings_.ab) + "; " + describe(settings_.ba));
    std::remove(settings_.control.c_str());
  }

  Settings settings_;
  Fd a_, b_, signals_;
  Direction ab_, ba_;
  std::vector<uint8_t> buffer_;
  int64_t cut_until_ = 0;   // 0: not cut; kNever: until SIGUSR2
  bool stop_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  Settings settings;
  try {
    if (args.empty() || args[0] == "--help") throw UsageError("usage: rlx_link_emulator [OPTIONS] IF_A IF_B");
    parse_options(args, settings, false);
  } catch (const UsageError& e) {
    std::cerr << "rlx_link_emulator: " << e.what() << "\n";
    return 2;
  }
  prctl(PR_SET_TIMERSLACK, 1000UL);   // wake within 1 us of a frame's time, not 50 us
  try {
    Emulator(std::move(settings)).run();
  } catch (const std::exception& e) {
    std::cerr << "rlx_link_emulator: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
