#include "learner/replay_shard_transfer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/guarded_temp_dir.h"
#include "core/sha256.h"

namespace rlx {

namespace {

constexpr size_t kTransferChunkBytes = size_t{8} << 20;  // one message of a segment file
constexpr const char* kShardDirPrefix = "rlx-run-replay-shard-";  // swept after a SIGKILL (core/temp_dir_owner.h)

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

std::string errno_text(const std::string& what, const std::filesystem::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

// Streams `bytes` bytes of the file at path to dst in chunks. A file that cannot be read whole is
// sent padded with zeros: the receiver's digest check then refuses it, and the group stays in step.
void send_file(Communicator& host, const std::filesystem::path& path, uint64_t bytes, int dst) {
  FileHandle file(std::fopen(path.c_str(), "rb"));
  std::string chunk;
  while (bytes > 0) {
    chunk.assign(static_cast<size_t>(std::min<uint64_t>(bytes, kTransferChunkBytes)), '\0');
    if (file) {
      const size_t got = std::fread(chunk.data(), 1, chunk.size(), file.get());
      if (got < chunk.size()) file.reset();  // the rest goes as zeros
    }
    send_bytes(host, chunk, dst);
    bytes -= chunk.size();
  }
}

// Receives a segment file send_file sent from src into dir, checked against its listing's size
// and digest and renamed into place. Returns what went wrong, if anything; every chunk is
// received either way. A chunk longer than what is left breaks the exchange (std::runtime_error).
std::optional<std::string> receive_file(Communicator& host, int src, const std::filesystem::path& dir,
                                        const ReplaySegment& segment) {
  const std::filesystem::path path = dir / segment.file, temp = dir / (segment.file + ".tmp");
  std::optional<std::string> error;
  FileHandle file(std::fopen(temp.c_str(), "wb"));
  if (!file) error = errno_text("cannot create", temp);
  Sha256 digest;
  for (uint64_t left = segment.bytes; left > 0;) {
    const std::string chunk = recv_bytes(host, src);
    if (chunk.empty() || chunk.size() > left) {
      throw std::runtime_error("a replay segment's chunk of " + std::to_string(chunk.size()) + " bytes with " +
                               std::to_string(left) + " left of " + segment.file);
    }
    digest.update(chunk);
    if (!error && std::fwrite(chunk.data(), 1, chunk.size(), file.get()) != chunk.size()) error = errno_text("cannot write", temp);
    left -= chunk.size();
  }
  if (!error && (std::fflush(file.get()) != 0 || ::fsync(::fileno(file.get())) != 0)) error = errno_text("cannot write", temp);
  file.reset();
  if (!error && digest.hex_digest() != segment.sha256) error = segment.file + " arrived with another SHA-256 than listed";
  std::error_code renamed;
  if (!error) std::filesystem::rename(temp, path, renamed);
  if (!error && renamed) error = "cannot rename " + temp.string() + ": " + renamed.message();
  if (error) std::filesystem::remove(temp, renamed);
  return error;
}

nlohmann::json parse_header(const std::string& bytes, const std::string& from) {
  nlohmann::json header = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) throw std::runtime_error(from + " sent a replay shard header that is not a JSON object");
  return header;
}

}  // namespace

void send_replay_shard(Communicator& host, const DqnLearner& learner, uint64_t from) {
  const ReplayBuffer& buffer = learner.buffer();
  const auto inserted = static_cast<uint64_t>(buffer.total_added()), held = static_cast<uint64_t>(buffer.size());
  nlohmann::json header = {{"inserted", inserted}, {"held", held}, {"segment", nullptr}};
  std::optional<GuardedTempDir> dir;
  std::optional<ReplaySegment> segment;
  try {
    if (from > inserted) {
      throw std::runtime_error("rank 0 asked for transitions from " + std::to_string(from) + " on; the shard has taken in " +
                               std::to_string(inserted));
    }
    const uint64_t first = std::max(from, inserted - held);
    if (first < inserted) {
      dir.emplace(kShardDirPrefix);
      SegmentWriter writer(dir->path(), segment_name(first, inserted), first, inserted);
      buffer.write_rows(first, inserted, writer);
      segment = writer.finish();
      header["segment"] = segment->to_json();
    }
  } catch (const std::exception& error) {  // reported to rank 0, which fails the checkpoint
    segment.reset();
    header["segment"] = nullptr;
    header["error"] = error.what();
  }
  send_bytes(host, header.dump(), 0);
  if (segment) send_file(host, dir->path() / segment->file, segment->bytes, 0);
  send_bytes(host, learner.save_replay_rest(), 0);
}

ShardCheckpoint receive_replay_shard(Communicator& host, int rank, const std::filesystem::path& replay_dir,
                                     ReplaySegmentLog& log) {
  const std::string who = "learner rank " + std::to_string(rank);
  const nlohmann::json header = parse_header(recv_bytes(host, rank), who);
  std::optional<ReplaySegment> segment;
  if (header.contains("segment") && !header.at("segment").is_null()) segment = ReplaySegment::from_json(header.at("segment"));
  std::optional<std::string> stored_error;
  if (segment) {
    std::filesystem::create_directories(replay_dir);
    stored_error = receive_file(host, rank, replay_dir, *segment);
  }
  ShardCheckpoint shard;
  shard.rest = recv_bytes(host, rank);
  if (header.contains("error")) {
    const nlohmann::json& error = header.at("error");
    throw std::runtime_error(who + " could not write its replay shard: " + (error.is_string() ? error.get<std::string>() : error.dump()));
  }
  if (stored_error) throw std::runtime_error(who + "'s replay segment was not stored: " + *stored_error);
  uint64_t inserted = 0, held = 0;
  try {
    inserted = header.at("inserted").get<uint64_t>();
    held = header.at("held").get<uint64_t>();
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(who + " sent a replay shard header without its counts: " + error.what());
  }
  if (held > inserted || inserted < log.inserted()) {
    throw std::runtime_error(who + "'s replay shard holds " + std::to_string(held) + " of " + std::to_string(inserted) +
                             " transitions taken in; rank 0 had stored up to " + std::to_string(log.inserted()));
  }
  bool used = false;
  shard.listing = log.checkpoint_stored(inserted, held, [&](uint64_t first, uint64_t end) {
    if (!segment || segment->first != first || segment->end != end) {
      throw std::runtime_error(who + " sent no segment of its replay shard's transitions [" + std::to_string(first) + ", " +
                               std::to_string(end) + ")");
    }
    used = true;
    return *segment;
  });
  if (segment && !used) throw std::runtime_error(who + " sent a replay segment " + segment->file + " nobody asked for");
  return shard;
}

std::optional<std::string> send_replay_shard_restore(Communicator& host, int rank, const std::filesystem::path& replay_dir,
                                                     const ShardCheckpoint& shard) {
  send_bytes(host, nlohmann::json{{"listing", shard.listing.to_json()}}.dump(), rank);
  for (const ReplaySegment& segment : shard.listing.segments) send_file(host, replay_dir / segment.file, segment.bytes, rank);
  send_bytes(host, shard.rest, rank);
  std::string answer = recv_bytes(host, rank);
  if (answer.empty()) return std::nullopt;
  return answer;
}

void receive_replay_shard_restore(Communicator& host, DqnLearner& learner) {
  const nlohmann::json header = parse_header(recv_bytes(host, 0), "rank 0");
  const ReplayListing listing = ReplayListing::from_json(header.at("listing"));
  GuardedTempDir dir(kShardDirPrefix);
  std::optional<std::string> error;
  for (const ReplaySegment& segment : listing.segments) {
    std::optional<std::string> received = receive_file(host, 0, dir.path(), segment);
    if (!error) error = std::move(received);
  }
  const std::string rest = recv_bytes(host, 0);
  if (!error) {
    try {
      learner.restore_replay(dir.path(), listing, rest);
    } catch (const std::exception& failure) {  // answered to rank 0, which refuses the checkpoint
      error = failure.what();
    }
  }
  send_bytes(host, error.value_or(""), 0);
}

}  // namespace rlx
