// Reads videos back with FFmpeg's demuxers and decoders (MP4 and GIF alike), for the tests of
// what rlx writes: frame count, size, how many frames differ from the one before, and the
// first frame as RGB.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx::test {

constexpr size_t kScalePadding = 4096;

struct DecodedVideo {
  std::string codec;
  int width = 0;
  int height = 0;
  int64_t frames = 0;
  int64_t frames_differing_from_previous = 0;
  double duration_s = 0;              // the container's duration
  std::vector<uint8_t> first_frame;   // RGB24, width * height * 3
};

// Decodes every frame of `path`; std::runtime_error when FFmpeg cannot open or decode it.
inline DecodedVideo decode_video(const std::string& path) {
  AVFormatContext* format = nullptr;
  if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) throw std::runtime_error("cannot open " + path);
  DecodedVideo video;
  AVCodecContext* codec = nullptr;
  AVFrame* frame = av_frame_alloc();
  AVPacket* packet = av_packet_alloc();
  SwsContext* to_rgb = nullptr;
  std::vector<uint8_t> previous, current;
  const auto take_frames = [&] {
    while (avcodec_receive_frame(codec, frame) == 0) {
      if (!to_rgb) {
        to_rgb = sws_getContext(frame->width, frame->height, static_cast<AVPixelFormat>(frame->format), frame->width,
                                frame->height, AV_PIX_FMT_RGB24, SWS_POINT, nullptr, nullptr, nullptr);
      }
      // swscale's vector code may write past the last row's end: room behind it, then cut.
      const size_t size = static_cast<size_t>(frame->width) * frame->height * 3;
      current.assign(size + kScalePadding, 0);
      uint8_t* out[1] = {current.data()};
      const int out_stride[1] = {3 * frame->width};
      sws_scale(to_rgb, frame->data, frame->linesize, 0, frame->height, out, out_stride);
      current.resize(size);
      if (video.frames == 0) video.first_frame = current;
      if (video.frames > 0 && current != previous) ++video.frames_differing_from_previous;
      previous.swap(current);
      ++video.frames;
    }
  };
  try {
    if (avformat_find_stream_info(format, nullptr) < 0) throw std::runtime_error("no stream info in " + path);
    const int stream = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (stream < 0) throw std::runtime_error("no video stream in " + path);
    const AVCodecParameters* parameters = format->streams[stream]->codecpar;
    const AVCodec* decoder = avcodec_find_decoder(parameters->codec_id);
    if (decoder == nullptr) throw std::runtime_error("no decoder for " + path);
    codec = avcodec_alloc_context3(decoder);
    avcodec_parameters_to_context(codec, parameters);
    if (avcodec_open2(codec, decoder, nullptr) < 0) throw std::runtime_error("cannot open the decoder of " + path);
    video.codec = decoder->name;
    video.width = parameters->width;
    video.height = parameters->height;
    video.duration_s = format->duration > 0 ? static_cast<double>(format->duration) / AV_TIME_BASE : 0;
    while (av_read_frame(format, packet) >= 0) {
      if (packet->stream_index == stream) {
        if (avcodec_send_packet(codec, packet) < 0) throw std::runtime_error("a packet of " + path + " does not decode");
        take_frames();
      }
      av_packet_unref(packet);
    }
    avcodec_send_packet(codec, nullptr);
    take_frames();
  } catch (...) {
    sws_freeContext(to_rgb);
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&codec);
    avformat_close_input(&format);
    throw;
  }
  sws_freeContext(to_rgb);
  av_packet_free(&packet);
  av_frame_free(&frame);
  avcodec_free_context(&codec);
  avformat_close_input(&format);
  return video;
}

}  // namespace rlx::test
