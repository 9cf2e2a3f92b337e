#include "native/replay_segments.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <random>
#include <stdexcept>
#include <system_error>

#include "core/sha256.h"

namespace rlx {

namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;
constexpr int kCompressionLevel = Z_BEST_SPEED;  // floats compress little; speed matters more
constexpr size_t kFloatsPerChunk = size_t{1} << 16;  // write_floats regroups this many at a time
constexpr const char* kSegmentSuffix = ".seg";

std::system_error io_error(const std::string& what, const std::filesystem::path& path) {
  return std::system_error(errno, std::generic_category(), what + " " + path.string());
}

bool plain_segment_name(const std::string& name) {
  return name.size() > 4 && name.size() < 128 && name.find('/') == std::string::npos && name[0] != '.' &&
         name.compare(name.size() - 4, 4, kSegmentSuffix) == 0;
}

}  // namespace

nlohmann::json ReplaySegment::to_json() const {
  return {{"file", file}, {"first", first}, {"end", end}, {"sha256", sha256}, {"bytes", bytes}};
}

ReplaySegment ReplaySegment::from_json(const nlohmann::json& json) {
  ReplaySegment segment;
  try {
    segment.file = json.at("file").get<std::string>();
    segment.first = json.at("first").get<uint64_t>();
    segment.end = json.at("end").get<uint64_t>();
    segment.sha256 = json.at("sha256").get<std::string>();
    segment.bytes = json.at("bytes").get<uint64_t>();
  } catch (const nlohmann::json::exception& error) {
    throw std::invalid_argument("a replay segment listing " + json.dump() + ": " + error.what());
  }
  if (!plain_segment_name(segment.file) || segment.first > segment.end || segment.sha256.size() != 64) {
    throw std::invalid_argument("a replay segment listing " + json.dump() + " is malformed");
  }
  return segment;
}

struct SegmentWriter::Stream {
  z_stream z{};
  std::vector<unsigned char> out = std::vector<unsigned char>(kChunkBytes);
  std::vector<unsigned char> planes = std::vector<unsigned char>(kFloatsPerChunk * sizeof(float));
  Sha256 digest;
};

namespace {

// A chunk of n floats' bytes as planes: plane b (the b-th byte of every float) at b * n.
void split_planes(const float* data, size_t n, unsigned char* planes) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < sizeof(float); ++b) planes[b * n + i] = bytes[i * sizeof(float) + b];
  }
}

void join_planes(const unsigned char* planes, size_t n, float* data) {
  auto* bytes = reinterpret_cast<unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    for (size_t b = 0; b < sizeof(float); ++b) bytes[i * sizeof(float) + b] = planes[b * n + i];
  }
}

}  // namespace

SegmentWriter::SegmentWriter(const std::filesystem::path& dir, const std::string& name, uint64_t first, uint64_t end)
    : path_(dir / name), temp_path_(dir / (name + ".tmp")), stream_(std::make_unique<Stream>()), level_(kCompressionLevel) {
  segment_.file = name;
  segment_.first = first;
  segment_.end = end;
  std::filesystem::create_directories(dir);
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (!file_) throw io_error("cannot create", temp_path_);
  if (deflateInit(&stream_->z, kCompressionLevel) != Z_OK) {
    std::fclose(file_);
    std::filesystem::remove(temp_path_);
    throw std::runtime_error("zlib could not start a replay segment");
  }
}

SegmentWriter::~SegmentWriter() {
  deflateEnd(&stream_->z);
  if (file_) std::fclose(file_);
  if (!finished_) {
    std::error_code ignored;  // the error that got us here is the one to report
    std::filesystem::remove(temp_path_, ignored);
  }
}

void SegmentWriter::emit(size_t produced) {
  if (produced == 0) return;
  if (std::fwrite(stream_->out.data(), 1, produced, file_) != produced) throw io_error("cannot write", temp_path_);
  stream_->digest.update(stream_->out.data(), produced);
  segment_.bytes += produced;
}

void SegmentWriter::drain(bool finishing) {
  int status = Z_OK;
  do {
    stream_->z.next_out = stream_->out.data();
    stream_->z.avail_out = static_cast<uInt>(stream_->out.size());
    status = deflate(&stream_->z, finishing ? Z_FINISH : Z_NO_FLUSH);
    if (status == Z_STREAM_ERROR) throw std::runtime_error("zlib failed compressing " + temp_path_.string());
    const size_t produced = stream_->out.size() - stream_->z.avail_out;
    emit(produced);
  } while (stream_->z.avail_out == 0 || (finishing && status != Z_STREAM_END));
}

void SegmentWriter::write(const void* data, size_t size) {
  set_level(kCompressionLevel);
  deflate_bytes(static_cast<const unsigned char*>(data), size);
}

void SegmentWriter::write_floats(const float* data, size_t count) {
  constexpr size_t kMantissaBytes = sizeof(float) - 1;
  while (count > 0) {
    const size_t n = std::min(count, kFloatsPerChunk);
    split_planes(data, n, stream_->planes.data());
    set_level(Z_NO_COMPRESSION);
    deflate_bytes(stream_->planes.data(), kMantissaBytes * n);
    set_level(kCompressionLevel);
    deflate_bytes(stream_->planes.data() + kMantissaBytes * n, n);
    data += n;
    count -= n;
  }
}

void SegmentWriter::set_level(int level) {
  if (level == level_) return;
  for (;;) {  // deflateParams compresses what is pending at the old level first, as room allows
    stream_->z.next_out = stream_->out.data();
    stream_->z.avail_out = static_cast<uInt>(stream_->out.size());
    const int status = deflateParams(&stream_->z, level, Z_DEFAULT_STRATEGY);
    const size_t produced = stream_->out.size() - stream_->z.avail_out;
    emit(produced);
    if (status == Z_OK) break;
    if (status != Z_BUF_ERROR) throw std::runtime_error("zlib failed changing its level for " + temp_path_.string());
  }
  level_ = level;
}

void SegmentWriter::deflate_bytes(const unsigned char* bytes, size_t size) {
  while (size > 0) {
    const size_t part = std::min<size_t>(size, kChunkBytes);
    stream_->z.next_in = const_cast<unsigned char*>(bytes);  // zlib's API is not const-correct
    stream_->z.avail_in = static_cast<uInt>(part);
    drain(false);
    bytes += part;
    size -= part;
  }
}

ReplaySegment SegmentWriter::finish() {
  stream_->z.next_in = nullptr;
  stream_->z.avail_in = 0;
  drain(true);
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) throw io_error("cannot write", temp_path_);
  const int closed = std::fclose(file_);
  file_ = nullptr;
  if (closed != 0) throw io_error("cannot write", temp_path_);
  std::filesystem::rename(temp_path_, path_);
  finished_ = true;
  segment_.sha256 = stream_->digest.hex_digest();
  return segment_;
}

struct SegmentReader::Stream {
  z_stream z{};
  std::vector<unsigned char> in = std::vector<unsigned char>(kChunkBytes);
  std::vector<unsigned char> planes = std::vector<unsigned char>(kFloatsPerChunk * sizeof(float));
  bool ended = false;
};

SegmentReader::SegmentReader(const std::filesystem::path& dir, const ReplaySegment& segment)
    : path_(dir / segment.file), stream_(std::make_unique<Stream>()) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path_, error);
  if (error) throw std::runtime_error("replay segment " + path_.string() + " is missing (" + error.message() + ")");
  if (size != segment.bytes) {
    throw std::runtime_error("replay segment " + path_.string() + " holds " + std::to_string(size) +
                             " bytes; the checkpoint lists " + std::to_string(segment.bytes));
  }
  if (sha256_file_hex(path_) != segment.sha256) {
    throw std::runtime_error("replay segment " + path_.string() + " does not match its SHA-256 in the checkpoint");
  }
  file_ = std::fopen(path_.c_str(), "rb");
  if (!file_) throw io_error("cannot read", path_);
  if (inflateInit(&stream_->z) != Z_OK) {
    std::fclose(file_);
    file_ = nullptr;
    throw std::runtime_error("zlib could not start reading " + path_.string());
  }
}

SegmentReader::~SegmentReader() {
  inflateEnd(&stream_->z);
  if (file_) std::fclose(file_);
}

void SegmentReader::read(void* data, size_t size) {
  stream_->z.next_out = static_cast<unsigned char*>(data);
  stream_->z.avail_out = static_cast<uInt>(size);
  while (stream_->z.avail_out > 0) {
    if (stream_->ended) throw std::runtime_error("replay segment " + path_.string() + " ends early");
    if (stream_->z.avail_in == 0) {
      const size_t got = std::fread(stream_->in.data(), 1, stream_->in.size(), file_);
      if (got == 0) throw std::runtime_error("replay segment " + path_.string() + " ends early");
      stream_->z.next_in = stream_->in.data();
      stream_->z.avail_in = static_cast<uInt>(got);
    }
    const int status = inflate(&stream_->z, Z_NO_FLUSH);
    if (status == Z_STREAM_END) {
      stream_->ended = true;
    } else if (status != Z_OK) {
      throw std::runtime_error("replay segment " + path_.string() + " is corrupt (zlib status " + std::to_string(status) + ")");
    }
  }
}

void SegmentReader::read_floats(float* data, size_t count) {
  while (count > 0) {
    const size_t n = std::min(count, kFloatsPerChunk);
    read(stream_->planes.data(), n * sizeof(float));
    join_planes(stream_->planes.data(), n, data);
    data += n;
    count -= n;
  }
}

void SegmentReader::expect_end() {
  unsigned char extra = 0;
  if (stream_->ended) return;
  stream_->z.next_out = &extra;
  stream_->z.avail_out = 1;
  if (stream_->z.avail_in == 0) {
    const size_t got = std::fread(stream_->in.data(), 1, stream_->in.size(), file_);
    stream_->z.next_in = stream_->in.data();
    stream_->z.avail_in = static_cast<uInt>(got);
  }
  if (inflate(&stream_->z, Z_NO_FLUSH) != Z_STREAM_END || stream_->z.avail_out == 0) {
    throw std::runtime_error("replay segment " + path_.string() + " holds more than its checkpoint lists");
  }
  stream_->ended = true;
}

nlohmann::json ReplayListing::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const ReplaySegment& segment : segments) list.push_back(segment.to_json());
  return {{"inserted", inserted}, {"segments", list}};
}

ReplayListing ReplayListing::from_json(const nlohmann::json& json) {
  ReplayListing listing;
  if (!json.is_object() || !json.contains("inserted") || !json.at("inserted").is_number_unsigned() ||
      !json.contains("segments") || !json.at("segments").is_array()) {
    throw std::invalid_argument("a replay listing needs \"inserted\" (a count) and \"segments\" (a list); got " +
                                json.dump().substr(0, 200));
  }
  listing.inserted = json.at("inserted").get<uint64_t>();
  for (const nlohmann::json& segment : json.at("segments")) listing.segments.push_back(ReplaySegment::from_json(segment));
  return listing;
}

ReplayListing ReplaySegmentLog::checkpoint(const std::filesystem::path& dir, uint64_t inserted, uint64_t held,
                                           const WriteRows& write_rows) {
  return checkpoint_stored(inserted, held, [&](uint64_t first, uint64_t end) {
    SegmentWriter writer(dir, segment_name(first, end), first, end);
    write_rows(first, end, writer);
    return writer.finish();
  });
}

ReplayListing ReplaySegmentLog::checkpoint_stored(uint64_t inserted, uint64_t held, const StoreSegment& store_segment) {
  if (inserted < listing_.inserted) {
    throw std::logic_error("a replay that had taken in " + std::to_string(listing_.inserted) + " transitions now counts " +
                           std::to_string(inserted));
  }
  const uint64_t live_from = inserted - std::min(held, inserted);
  ReplayListing next;
  next.inserted = inserted;
  for (const ReplaySegment& segment : listing_.segments) {
    if (segment.end > live_from) next.segments.push_back(segment);
  }
  const uint64_t first = std::max(listing_.inserted, live_from);
  if (first < inserted) next.segments.push_back(store_segment(first, inserted));
  listing_ = next;
  return next;
}

void ReplaySegmentLog::restore(const std::filesystem::path& dir, const ReplayListing& listing, uint64_t capacity,
                               const ReadRows& read_rows) {
  ReplaySegmentLog checked;
  checked.adopt(listing, capacity);
  for (const ReplaySegment& segment : listing.segments) {
    SegmentReader reader(dir, segment);
    read_rows(segment, reader);
    reader.expect_end();
  }
  listing_ = listing;
}

void ReplaySegmentLog::adopt(const ReplayListing& listing, uint64_t capacity) {
  const uint64_t live_from = listing.inserted - std::min(capacity, listing.inserted);
  uint64_t covered = listing.segments.empty() ? listing.inserted : listing.segments.front().first;
  if (covered > live_from) {
    throw std::runtime_error("the checkpoint's replay segments start at transition " + std::to_string(covered) +
                             ", after the first live one, " + std::to_string(live_from));
  }
  for (const ReplaySegment& segment : listing.segments) {
    if (segment.first != covered || segment.end > listing.inserted) {
      throw std::runtime_error("the checkpoint's replay segment " + segment.file + " holds transitions [" +
                               std::to_string(segment.first) + ", " + std::to_string(segment.end) + "); expected " +
                               std::to_string(covered) + " onwards, up to " + std::to_string(listing.inserted));
    }
    covered = segment.end;
  }
  if (covered != listing.inserted) {
    throw std::runtime_error("the checkpoint's replay segments end at transition " + std::to_string(covered) + ", not " +
                             std::to_string(listing.inserted));
  }
  listing_ = listing;
}

std::string segment_name(uint64_t first, uint64_t end) {
  std::random_device device;
  const uint64_t tag = (static_cast<uint64_t>(device()) << 32) ^ device();
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(tag));
  return "replay-" + std::to_string(first) + "-" + std::to_string(end) + "-" + text + kSegmentSuffix;
}

size_t remove_unreferenced_segments(const std::filesystem::path& dir, const std::set<std::string>& referenced) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return 0;
  size_t removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool stale_temp = name.size() > 8 && name.compare(name.size() - 8, 8, ".seg.tmp") == 0;
    if ((plain_segment_name(name) && referenced.count(name) == 0) || stale_temp) {
      std::filesystem::remove(entry.path());
      ++removed;
    }
  }
  return removed;
}

}  // namespace rlx
