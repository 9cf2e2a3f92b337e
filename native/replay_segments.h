// Replay segments: a replay buffer kept in a trial's checkpoints a piece at a time. Each
// checkpoint writes only the transitions added since the one before, as one zlib-compressed
// segment file in TRIAL/replay/, and lists in its manifest the segments that still hold live
// transitions (with their SHA-256). A later checkpoint shares the earlier segments it still
// needs; remove_unreferenced_segments deletes a segment once no checkpoint lists it. Writing
// streams rows from the buffer itself (no second copy in memory), to a temporary file renamed
// into place once complete; reading checks the digest before it decompresses a byte.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"  // kReplayDirName

namespace rlx {

// One segment file: the transitions numbered [first, end) in the order the buffer took them in.
struct ReplaySegment {
  std::string file;  // its name in the replay directory
  uint64_t first = 0;
  uint64_t end = 0;
  std::string sha256;  // of the file's bytes
  uint64_t bytes = 0;  // the file's size

  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming what is missing or malformed (a file name that is not a
  // plain segment name, first > end).
  static ReplaySegment from_json(const nlohmann::json& json);
};

// Streams rows into a new segment file: compressed, digested and renamed into place by finish().
class SegmentWriter {
 public:
  // Opens dir/NAME.tmp for the segment [first, end) named NAME (segment_name); throws
  // std::system_error naming the path when it cannot.
  SegmentWriter(const std::filesystem::path& dir, const std::string& name, uint64_t first, uint64_t end);
  // Removes the temporary file unless finish() succeeded.
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // Appends raw bytes of the rows, compressed; throws std::system_error on a write error (a full disk).
  void write(const void* data, size_t size);
  // Appends floats, each chunk regrouped into byte planes (every float's lowest byte, ..., every
  // sign-and-exponent byte): the mantissa planes, next to incompressible, are stored as they are
  // and only the exponent plane is compressed. SegmentReader::read_floats reads them back.
  void write_floats(const float* data, size_t count);
  // Flushes, syncs and renames the file into place; the segment to list in a manifest.
  ReplaySegment finish();

 private:
  struct Stream;
  void drain(bool finishing);
  void emit(size_t produced);  // the first `produced` bytes of the output buffer: to the file, digest and size
  void set_level(int level);  // zlib's level for what is written next
  void deflate_bytes(const unsigned char* bytes, size_t size);
  std::filesystem::path path_, temp_path_;
  ReplaySegment segment_;
  std::unique_ptr<Stream> stream_;
  std::FILE* file_ = nullptr;
  bool finished_ = false;
  int level_;
};

// Reads a segment's rows back, after checking the file's size and digest against its listing.
class SegmentReader {
 public:
  // Throws std::runtime_error naming the file when it is missing, of another size or digest, or
  // not a segment.
  SegmentReader(const std::filesystem::path& dir, const ReplaySegment& segment);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  // Fills exactly `size` bytes; throws std::runtime_error when the segment ends first or is corrupt.
  void read(void* data, size_t size);
  // Reads `count` floats that SegmentWriter::write_floats wrote (with the same counts in the same order).
  void read_floats(float* data, size_t count);
  // Throws std::runtime_error unless every byte of the segment has been read.
  void expect_end();

 private:
  struct Stream;
  std::filesystem::path path_;
  std::unique_ptr<Stream> stream_;
  std::FILE* file_ = nullptr;
};

// What a checkpoint lists of a buffer: the transitions it had taken in, and the segments that
// hold its live ones (the last min(inserted, capacity)), oldest first.
struct ReplayListing {
  uint64_t inserted = 0;
  std::vector<ReplaySegment> segments;

  nlohmann::json to_json() const;
  // Throws std::invalid_argument on a malformed listing.
  static ReplayListing from_json(const nlohmann::json& json);
};

// A buffer's segments across its checkpoints: which it has written, and the next to write.
class ReplaySegmentLog {
 public:
  using WriteRows = std::function<void(uint64_t first, uint64_t end, SegmentWriter& out)>;
  using ReadRows = std::function<void(const ReplaySegment& segment, SegmentReader& in)>;
  // Puts transitions [first, end) in a new segment of the replay directory and returns its listing.
  using StoreSegment = std::function<ReplaySegment(uint64_t first, uint64_t end)>;

  // The listing for a checkpoint of a buffer that has taken in `inserted` transitions and holds
  // the last `held`: writes those taken in since the last listing (and still held) to one new
  // segment in dir through write_rows, and leaves out segments whose transitions are all gone.
  // Throws std::logic_error when `inserted` went back.
  ReplayListing checkpoint(const std::filesystem::path& dir, uint64_t inserted, uint64_t held, const WriteRows& write_rows);
  // The same, with the new segment made by store_segment (e.g. received from the learner rank
  // that holds the buffer).
  ReplayListing checkpoint_stored(uint64_t inserted, uint64_t held, const StoreSegment& store_segment);

  // Continues from a checkpoint's listing of a buffer of `capacity`: checks that its segments run
  // without a gap up to `inserted` and cover the live transitions, then reads each (checked against
  // its digest) through read_rows, oldest first. Throws std::runtime_error naming what is wrong.
  void restore(const std::filesystem::path& dir, const ReplayListing& listing, uint64_t capacity,
               const ReadRows& read_rows);
  // Continues from a listing whose segments another process reads (checked as restore checks it).
  void adopt(const ReplayListing& listing, uint64_t capacity);

  // The transitions taken in by the last listing (0 before any).
  uint64_t inserted() const { return listing_.inserted; }

 private:
  ReplayListing listing_;
};

// A fresh segment name for transitions [first, end) ("replay-FIRST-END-TAG.seg", TAG random hex:
// a run resumed from an older checkpoint never overwrites a segment a newer one lists).
std::string segment_name(uint64_t first, uint64_t end);

// Deletes the *.seg files (and stale *.tmp files) in dir that `referenced` does not name; returns
// how many. A missing dir holds none.
size_t remove_unreferenced_segments(const std::filesystem::path& dir, const std::set<std::string>& referenced);

}  // namespace rlx
