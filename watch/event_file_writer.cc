// EventFileWriter: TFRecord framing over core/atomic_file.h's durable appends.
#include "watch/event_file_writer.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <system_error>

#include "core/atomic_file.h"
#include "watch/crc32c.h"
#include "watch/tensorboard.pb.h"

namespace rlx {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFileVersion = "brain.Event:2";

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFFu));
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The first free events.out.tfevents.<seconds>.<host>.<pid>.<n> in `dir`.
fs::path new_event_file_path(const fs::path& dir) {
  const std::string stem = "events.out.tfevents." + std::to_string(static_cast<int64_t>(unix_seconds())) + "." +
                           host_name() + "." + std::to_string(::getpid()) + ".";
  for (int n = 0;; ++n) {
    fs::path candidate = dir / (stem + std::to_string(n));
    std::error_code ignored;
    if (!fs::exists(candidate, ignored)) return candidate;
  }
}

}  // namespace

std::string frame_record(std::string_view data) {
  std::string header;
  put_le(header, data.size(), 8);
  std::string record = header;
  put_le(record, masked_crc32c(header.data(), header.size()), 4);
  record.append(data);
  put_le(record, masked_crc32c(data.data(), data.size()), 4);
  return record;
}

EventFileWriter::EventFileWriter(const fs::path& dir) {
  fs::create_directories(dir);
  path_ = new_event_file_path(dir);
  tensorboard::Event version;
  version.set_wall_time(unix_seconds());
  version.set_file_version(kFileVersion);
  write(version);
}

void EventFileWriter::write(const tensorboard::Event& event) const {
  std::string bytes;
  if (!event.SerializeToString(&bytes)) {
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            "cannot serialize a TensorBoard event for " + path_.string());
  }
  append_durable(path_, frame_record(bytes));
}

}  // namespace rlx
