// Mp4Writer: libx264 (or, where FFmpeg lacks it, its own MPEG-4 part 2 encoder) into an MP4
// muxer; frames converted from RGB by libswscale.
#include "watch/mp4_writer.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {
namespace fs = std::filesystem;
namespace {

std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof(text));
  return text;
}

struct CodecContextDeleter {
  void operator()(AVCodecContext* context) const { avcodec_free_context(&context); }
};
struct FrameDeleter {
  void operator()(AVFrame* frame) const { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket* packet) const { av_packet_free(&packet); }
};
struct ScaleDeleter {
  void operator()(SwsContext* context) const { sws_freeContext(context); }
};

constexpr size_t kScalePadding = 4096;

int even(int size) { return size + (size & 1); }

class Mp4Writer : public VideoWriter {
 public:
  Mp4Writer(fs::path path, int width, int height, double fps)
      : path_(std::move(path)), temp_(path_.string() + ".partial"), width_(width), height_(height) {
    try {
      open(fps);
    } catch (const std::runtime_error&) {
      abandon();
      throw;
    }
  }

  ~Mp4Writer() override { abandon(); }

  void add(const RgbImage& frame) override {
    if (frame.width != width_ || frame.height != height_) {
      throw std::invalid_argument(path_.string() + ": a frame of " + std::to_string(frame.width) + " x " +
                                  std::to_string(frame.height) + " in a video of " + std::to_string(width_) + " x " +
                                  std::to_string(height_));
    }
    check(av_frame_make_writable(yuv_.get()), "make a frame writable");
    // swscale's vector code may read past the last row's end: a copy with room behind it.
    std::copy(frame.rgb.begin(), frame.rgb.end(), padded_rgb_.begin());
    const uint8_t* source[1] = {padded_rgb_.data()};
    const int source_stride[1] = {3 * width_};
    sws_scale(scale_.get(), source, source_stride, 0, height_, yuv_->data, yuv_->linesize);
    yuv_->pts = next_pts_++;
    encode(yuv_.get());
  }

  void finish() override {
    encode(nullptr);  // drain the encoder
    check(av_write_trailer(format_), "write the MP4 trailer");
    close_file();
    fs::permissions(temp_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    fs::rename(temp_, path_);
  }

 private:
  void open(double fps) {
    av_log_set_level(AV_LOG_ERROR);  // no encoder statistics on stderr
    check(avformat_alloc_output_context2(&format_, nullptr, "mp4", temp_.c_str()), "set up an MP4 muxer");
    const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
    if (codec == nullptr) codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    if (codec == nullptr) throw std::runtime_error(path_.string() + ": FFmpeg has neither libx264 nor an MPEG-4 encoder");
    stream_ = avformat_new_stream(format_, nullptr);
    if (stream_ == nullptr) throw std::runtime_error(path_.string() + ": cannot add a video stream");
    codec_.reset(avcodec_alloc_context3(codec));
    if (!codec_) throw std::runtime_error(path_.string() + ": cannot allocate the encoder");
    // A time base fine enough for fractional rates (e.g. 1 / 0.04 s = 25 fps, 1 / 0.008 s = 125).
    const AVRational rate = av_d2q(fps, 100000);
    codec_->width = even(width_);
    codec_->height = even(height_);
    codec_->time_base = av_inv_q(rate);
    codec_->framerate = rate;
    codec_->pix_fmt = AV_PIX_FMT_YUV420P;
    codec_->gop_size = std::max(1, static_cast<int>(std::lround(2 * fps)));
    if (format_->oformat->flags & AVFMT_GLOBALHEADER) codec_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (std::string(codec->name) == "libx264") {
      av_opt_set(codec_->priv_data, "preset", "veryfast", 0);
      av_opt_set(codec_->priv_data, "crf", "20", 0);
    } else {
      codec_->bit_rate = 4'000'000;
    }
    check(avcodec_open2(codec_.get(), codec, nullptr), std::string("open the ") + codec->name + " encoder");
    check(avcodec_parameters_from_context(stream_->codecpar, codec_.get()), "describe the video stream");
    stream_->time_base = codec_->time_base;
    stream_->avg_frame_rate = rate;
    check(avio_open(&format_->pb, temp_.c_str(), AVIO_FLAG_WRITE), "create the file");
    check(avformat_write_header(format_, nullptr), "write the MP4 header");

    yuv_.reset(av_frame_alloc());
    packet_.reset(av_packet_alloc());
    if (!yuv_ || !packet_) throw std::runtime_error(path_.string() + ": out of memory for a video frame");
    yuv_->format = codec_->pix_fmt;
    yuv_->width = codec_->width;
    yuv_->height = codec_->height;
    check(av_frame_get_buffer(yuv_.get(), 0), "allocate a video frame");
    scale_.reset(sws_getContext(width_, height_, AV_PIX_FMT_RGB24, codec_->width, codec_->height, AV_PIX_FMT_YUV420P,
                                SWS_BILINEAR, nullptr, nullptr, nullptr));
    if (!scale_) throw std::runtime_error(path_.string() + ": cannot set up the RGB to YUV conversion");
    padded_rgb_.assign(static_cast<size_t>(width_) * height_ * 3 + kScalePadding, 0);
  }

  // Sends a frame (null: the end) and writes every packet the encoder has ready.
  void encode(const AVFrame* frame) {
    check(avcodec_send_frame(codec_.get(), frame), "encode a frame");
    for (;;) {
      const int status = avcodec_receive_packet(codec_.get(), packet_.get());
      if (status == AVERROR(EAGAIN) || status == AVERROR_EOF) return;
      check(status, "encode a frame");
      av_packet_rescale_ts(packet_.get(), codec_->time_base, stream_->time_base);
      packet_->stream_index = stream_->index;
      check(av_interleaved_write_frame(format_, packet_.get()), "write a frame");
    }
  }

  void close_file() {
    if (format_ == nullptr) return;
    if (format_->pb != nullptr) avio_closep(&format_->pb);
    avformat_free_context(format_);
    format_ = nullptr;
  }

  // Closes an unfinished file and removes it; the path is left untouched.
  void abandon() {
    if (format_ == nullptr) return;
    close_file();
    std::error_code ignored;
    fs::remove(temp_, ignored);
  }

  void check(int status, const std::string& what) const {
    if (status < 0) throw std::runtime_error(path_.string() + ": cannot " + what + ": " + av_error_text(status));
  }

  fs::path path_, temp_;
  int width_, height_;
  AVFormatContext* format_ = nullptr;  // owns the file; closed by close_file()
  AVStream* stream_ = nullptr;          // owned by format_
  std::unique_ptr<AVCodecContext, CodecContextDeleter> codec_;
  std::unique_ptr<AVFrame, FrameDeleter> yuv_;
  std::unique_ptr<AVPacket, PacketDeleter> packet_;
  std::unique_ptr<SwsContext, ScaleDeleter> scale_;
  std::vector<uint8_t> padded_rgb_;
  int64_t next_pts_ = 0;
};

}  // namespace

std::unique_ptr<VideoWriter> open_mp4(const fs::path& path, int width, int height, double fps) {
  return std::make_unique<Mp4Writer>(path, width, height, fps);
}

}  // namespace rlx
