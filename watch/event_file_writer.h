// Writes TensorFlow event files (events.out.tfevents.*), the format TensorBoard reads: records
// framed as [uint64 length][masked CRC-32C of length][bytes][masked CRC-32C of bytes], all
// little-endian. Each record is appended in one write and fsynced, so a crash leaves whole
// records followed by at most one partial one, which TensorBoard stops before.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace rlx {

namespace tensorboard {
class Event;
}  // namespace tensorboard

// `data` framed as one TFRecord.
std::string frame_record(std::string_view data);

// One event file of one process: a new file per writer, so a resumed run never appends to a
// file a crash may have left torn.
class EventFileWriter {
 public:
  // Creates DIR/events.out.tfevents.<unix seconds>.<host>.<pid>.<n>, choosing n so that no
  // existing file is reused, and writes the file_version record ("brain.Event:2").
  // std::system_error naming the path when it cannot.
  explicit EventFileWriter(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return path_; }

  // Appends `event` as one record (std::system_error naming the file when the write fails; the
  // file is then cut back to its whole records).
  void write(const tensorboard::Event& event) const;

 private:
  std::filesystem::path path_;
};

}  // namespace rlx
