// MP4 and GIF writers, read back by FFmpeg's decoders.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "../core/test_util.h"
#include "core/atomic_file.h"
#include "video_decode.h"
#include "watch/gif_writer.h"
#include "watch/video_writer.h"

namespace {

namespace fs = std::filesystem;

// A white frame with a red square at x = 4 * index.
rlx::RgbImage moving_square(int width, int height, int index) {
  rlx::RgbImage frame(width, height);
  std::fill(frame.rgb.begin(), frame.rgb.end(), uint8_t{255});
  for (int y = 10; y < 26 && y < height; ++y) {
    for (int x = 4 * index; x < 4 * index + 16 && x < width; ++x) {
      uint8_t* p = frame.pixel(x, y);
      p[0] = 220;
      p[1] = 30;
      p[2] = 30;
    }
  }
  return frame;
}

void write_video(const fs::path& path, int width, int height, double fps, int frames) {
  auto writer = rlx::open_video(path, width, height, fps);
  for (int i = 0; i < frames; ++i) writer->add(moving_square(width, height, i));
  writer->finish();
}

}  // namespace

TEST_CASE("an MP4 holds H.264 frames of the size written, each differing from the one before", "[watch][video]") {
  rlx::test::TempDir tmp;
  const fs::path path = tmp / "square.mp4";
  write_video(path, 96, 64, 25, 20);
  const rlx::test::DecodedVideo video = rlx::test::decode_video(path.string());
  CHECK(video.codec == "h264");
  CHECK(video.width == 96);
  CHECK(video.height == 64);
  CHECK(video.frames == 20);
  CHECK(video.frames_differing_from_previous == 19);
  CHECK(video.duration_s == Approx(0.8).margin(0.05));
  // The first frame's square is red where it was drawn, white elsewhere (within H.264's loss).
  const auto at = [&video](int x, int y, int c) { return video.first_frame[(static_cast<size_t>(y) * 96 + x) * 3 + c]; };
  CHECK(at(8, 18, 0) > 180);
  CHECK(at(8, 18, 1) < 80);
  CHECK(at(60, 40, 1) > 230);
}

TEST_CASE("an MP4 of odd size is scaled to the next even size", "[watch][video]") {
  rlx::test::TempDir tmp;
  write_video(tmp / "odd.mp4", 95, 63, 30, 5);
  const rlx::test::DecodedVideo video = rlx::test::decode_video((tmp / "odd.mp4").string());
  CHECK(video.width == 96);
  CHECK(video.height == 64);
  CHECK(video.frames == 5);
}

TEST_CASE("a GIF holds its frames at the size written and loops", "[watch][video]") {
  rlx::test::TempDir tmp;
  const fs::path path = tmp / "square.gif";
  write_video(path, 80, 40, 20, 12);
  const rlx::test::DecodedVideo video = rlx::test::decode_video(path.string());
  CHECK(video.codec == "gif");
  CHECK(video.width == 80);
  CHECK(video.height == 40);
  CHECK(video.frames == 12);
  CHECK(video.frames_differing_from_previous == 11);
  const std::string bytes = rlx::read_file(path);
  CHECK(bytes.find("NETSCAPE2.0") != std::string::npos);
  CHECK((fs::status(path).permissions() & fs::perms::others_read) != fs::perms::none);
}

TEST_CASE("a GIF above 50 frames a second keeps every k-th frame with delays summing to the duration",
          "[watch][video]") {
  const rlx::GifTiming hopper = rlx::gif_timing(125);  // Hopper-v4: 8 ms a step
  CHECK(hopper.stride == 3);
  int total = 0;
  for (int k = 0; k < 125; ++k) total += hopper.delay_cs(k);
  CHECK(total == 300);  // 125 kept frames of 3 steps of 8 ms: 3 s
  CHECK(rlx::gif_timing(50).stride == 1);
  CHECK(rlx::gif_timing(50).delay_cs(0) == 2);
  CHECK(rlx::gif_timing(30).delay_cs(0) + rlx::gif_timing(30).delay_cs(1) + rlx::gif_timing(30).delay_cs(2) == 10);
  CHECK_THROWS_AS(rlx::gif_timing(0), std::invalid_argument);

  rlx::test::TempDir tmp;
  write_video(tmp / "fast.gif", 40, 30, 125, 9);
  CHECK(rlx::test::decode_video((tmp / "fast.gif").string()).frames == 3);
}

TEST_CASE("a video left unfinished leaves no file, and a wrong name or size is refused", "[watch][video]") {
  rlx::test::TempDir tmp;
  for (const char* name : {"unfinished.mp4", "unfinished.gif"}) {
    {
      auto writer = rlx::open_video(tmp / name, 32, 32, 10);
      writer->add(moving_square(32, 32, 0));
    }
    CHECK(fs::is_empty(tmp.path()));
  }
  CHECK_THROWS_WITH(rlx::open_video(tmp / "clip.avi", 32, 32, 10), Catch::Contains("clip.avi") && Catch::Contains(".mp4 or .gif"));
  CHECK_THROWS_AS(rlx::open_video(tmp / "clip.mp4", 32, 32, 0), std::invalid_argument);
  auto writer = rlx::open_video(tmp / "clip.gif", 32, 32, 10);
  CHECK_THROWS_WITH(writer->add(moving_square(16, 32, 0)), Catch::Contains("16 x 32"));
  CHECK_THROWS_AS(rlx::open_video(tmp / "missing" / "clip.mp4", 32, 32, 10), std::runtime_error);
}
