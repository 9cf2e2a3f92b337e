#include "envs/frame_stack.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/config_error.h"

namespace rlx {

namespace {

// Throws frame_stacked_spec's ConfigError unless `spec`'s observations can be stacked `frames` deep.
void check_stackable(const EnvSpec& spec, int frames) {
  if (frames < 1 || frames > kMaxFrameStack) {
    throw ConfigError("frame_stack: " + std::to_string(frames) + " frames for env '" + spec.id + "', expected 1 to " +
                      std::to_string(kMaxFrameStack));
  }
  const Space& space = spec.observation_space;
  if (!space.is_box() || (space.shape.size() != 1 && space.shape.size() != 3)) {
    throw ConfigError("frame_stack: " + std::to_string(frames) + " frames of env '" + spec.id +
                      "' cannot be stacked: its observation_space is " + space.to_string() +
                      ", and frame stacking needs a Box of rank 3 (height, width, channels: stacked on the channels) "
                      "or of rank 1 (stacked end to end)");
  }
}

// Elements per pixel of a stackable Box: C of an image (H, W, C), D of a vector (D,).
int64_t channels_of(const Space& space) { return space.shape.back(); }

// The stack of `frames` frames of `frame_size` elements each (frame k in slot (oldest + k) % frames
// of `ring`) written oldest first on the channel axis: out[(p * frames + k) * channels + c] is
// element p * channels + c of frame k.
template <typename T>
void interleave(const T* ring, int frames, int oldest, int64_t frame_size, int64_t channels, T* out) {
  const int64_t pixels = frame_size / channels;
  const auto bytes = static_cast<size_t>(channels) * sizeof(T);
  for (int k = 0; k < frames; ++k) {
    const T* frame = ring + static_cast<int64_t>((oldest + k) % frames) * frame_size;
    for (int64_t p = 0; p < pixels; ++p) std::memcpy(out + (p * frames + k) * channels, frame + p * channels, bytes);
  }
}

// Bounds of one frame, repeated as the stack's bounds.
std::vector<float> stacked_bounds(const std::vector<float>& bounds, int frames, int64_t channels) {
  std::vector<float> ring;
  ring.reserve(bounds.size() * static_cast<size_t>(frames));
  for (int k = 0; k < frames; ++k) ring.insert(ring.end(), bounds.begin(), bounds.end());
  std::vector<float> out(ring.size());
  interleave(ring.data(), frames, 0, static_cast<int64_t>(bounds.size()), channels, out.data());
  return out;
}

// A 64-bit word as two doubles (its high and low 32 bits), each exact.
void push_word(std::vector<double>& out, uint64_t word) {
  out.push_back(static_cast<double>(word >> 32));
  out.push_back(static_cast<double>(word & 0xffffffffULL));
}

}  // namespace

EnvSpec frame_stacked_spec(const EnvSpec& spec, int frames) {
  if (frames == 1) return spec;
  check_stackable(spec, frames);
  const Space& space = spec.observation_space;
  const int64_t channels = channels_of(space);
  std::vector<int64_t> shape = space.shape;
  shape.back() *= frames;
  EnvSpec stacked = spec;
  stacked.observation_space = Space::box(std::move(shape), stacked_bounds(space.low, frames, channels),
                                         stacked_bounds(space.high, frames, channels), space.dtype);
  return stacked;
}

EnvFactory frame_stacked_factory(EnvFactory factory, int frames) {
  if (frames == 1) return factory;
  return [factory = std::move(factory), frames]() -> std::unique_ptr<Env> {
    return std::make_unique<FrameStackEnv>(factory(), frames);
  };
}

const Env& unstacked_env(const Env& env) {
  const auto* stacked = dynamic_cast<const FrameStackEnv*>(&env);
  return stacked ? stacked->inner() : env;
}

FrameStackEnv::FrameStackEnv(std::unique_ptr<Env> inner, int frames)
    : Env((check_stackable(inner->spec(), frames), frame_stacked_spec(inner->spec(), frames))),
      inner_(std::move(inner)),
      frames_(frames),
      in_bytes_(inner_->spec().observation_space.dtype == ScalarType::kUint8),
      frame_size_(inner_->spec().observation_space.size()),
      channels_(channels_of(inner_->spec().observation_space)),
      mask_size_(inner_->observation_layout().mask_size),
      inner_floats_(static_cast<size_t>(inner_->observation_layout().float_slots)),
      inner_bytes_(static_cast<size_t>(inner_->observation_layout().byte_slots)) {
  const auto ring = static_cast<size_t>(frame_size_) * static_cast<size_t>(frames_);
  (in_bytes_ ? byte_frames_.resize(ring) : float_frames_.resize(ring));
}

void FrameStackEnv::reset_episode(Rng& rng, ObsSpan obs) {
  (void)rng;  // the inner env draws from its own generator, seeded with this reset's seed
  inner_->reset(reset_seed(), ObsRow(inner_floats_.data(), inner_bytes_.data()));
  restart_stack();
  write_stack(obs);
}

StepResult FrameStackEnv::step_episode(const Action& action, ObsSpan obs) {
  const StepResult result = inner_->step(action, ObsRow(inner_floats_.data(), inner_bytes_.data()));
  push_frame();
  write_stack(obs);
  return result;
}

void FrameStackEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  inner_->set_state(state, ObsRow(inner_floats_.data(), inner_bytes_.data()));
  restart_stack();
  write_stack(obs);
}

void FrameStackEnv::restart_stack() {
  oldest_ = 0;
  for (int k = 0; k < frames_; ++k) push_frame();
}

void FrameStackEnv::push_frame() {
  const auto offset = static_cast<size_t>(oldest_) * static_cast<size_t>(frame_size_);
  const auto count = static_cast<size_t>(frame_size_);
  if (in_bytes_) {
    std::memcpy(byte_frames_.data() + offset, inner_bytes_.data(), count);
  } else {
    std::memcpy(float_frames_.data() + offset, inner_floats_.data(), count * sizeof(float));
  }
  oldest_ = (oldest_ + 1) % frames_;  // the slot just written is now the newest
}

void FrameStackEnv::write_stack(ObsSpan& obs) const {
  if (in_bytes_) {
    interleave(byte_frames_.data(), frames_, oldest_, frame_size_, channels_, obs.bytes().data());
  } else {
    interleave(float_frames_.data(), frames_, oldest_, frame_size_, channels_, obs.data());
  }
  if (mask_size_ > 0) {
    std::memcpy(obs.action_mask().data(), inner_bytes_.data() + (inner_bytes_.size() - static_cast<size_t>(mask_size_)),
                static_cast<size_t>(mask_size_));
  }
}

// Layout: [n, the inner exact_state's n values, its generator (4 words as 8 halves, spare normal,
// has spare), seeded, elapsed steps, the ring's oldest slot, the ring (frames x frame_size)].
std::vector<double> FrameStackEnv::exact_state() const {
  const std::optional<EnvSnapshot> inner = inner_->snapshot();
  if (!inner) return {};
  std::vector<double> out;
  out.push_back(static_cast<double>(inner->exact_state.size()));
  out.insert(out.end(), inner->exact_state.begin(), inner->exact_state.end());
  for (uint64_t word : inner->rng.words) push_word(out, word);
  out.push_back(inner->rng.spare_normal);
  out.push_back(inner->rng.has_spare_normal ? 1 : 0);
  out.push_back(inner->seeded ? 1 : 0);
  out.push_back(inner->elapsed_steps);
  out.push_back(oldest_);
  if (in_bytes_) {
    out.insert(out.end(), byte_frames_.begin(), byte_frames_.end());
  } else {
    out.insert(out.end(), float_frames_.begin(), float_frames_.end());
  }
  return out;
}

void FrameStackEnv::restore_exact_state(const std::vector<double>& state) {
  constexpr size_t kFixed = 8 + 2 + 3;  // generator words and spare, seeded, elapsed, oldest
  const size_t ring = static_cast<size_t>(frame_size_) * static_cast<size_t>(frames_);
  const std::string who = spec().id + " with frame_stack " + std::to_string(frames_) + ": ";
  const double inner_count = state.empty() ? -1 : state[0];
  if (!(inner_count >= 0 && inner_count <= static_cast<double>(state.size())) ||
      state.size() != 1 + static_cast<size_t>(inner_count) + kFixed + ring) {
    throw std::invalid_argument(who + "a snapshot of " + std::to_string(state.size()) +
                                " values does not hold the inner env's state and a stack of " + std::to_string(ring) +
                                " elements");
  }
  EnvSnapshot inner;
  size_t at = 1 + static_cast<size_t>(inner_count);
  inner.exact_state.assign(state.begin() + 1, state.begin() + static_cast<std::ptrdiff_t>(at));
  for (uint64_t& word : inner.rng.words) {
    word = (static_cast<uint64_t>(state[at]) << 32) | static_cast<uint64_t>(state[at + 1]);
    at += 2;
  }
  inner.rng.spare_normal = state[at++];
  inner.rng.has_spare_normal = state[at++] != 0;
  inner.seeded = state[at++] != 0;
  inner.elapsed_steps = static_cast<int>(state[at++]);
  const double oldest = state[at++];
  if (!(oldest >= 0 && oldest < frames_)) throw std::invalid_argument(who + "a snapshot names stack slot " + std::to_string(oldest));
  inner_->restore(inner);
  oldest_ = static_cast<int>(oldest);
  for (size_t i = 0; i < ring; ++i) {
    if (in_bytes_) {
      byte_frames_[i] = static_cast<uint8_t>(state[at + i]);
    } else {
      float_frames_[i] = static_cast<float>(state[at + i]);
    }
  }
}

}  // namespace rlx
