#include "learner/replay_nstep.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace rlx {

void NStepConfig::validate() const {
  if (n < 1) throw std::invalid_argument("n-step needs n >= 1, got " + std::to_string(n));
  if (!(gamma >= 0.0 && gamma <= 1.0)) throw std::invalid_argument("n-step needs gamma in [0, 1], got " + std::to_string(gamma));
}

NStepAccumulator::NStepAccumulator(StoredObsSize obs_size, NStepConfig config) : obs_(obs_size), config_(config) {
  config_.validate();
  if (obs_.floats < 0 || obs_.bytes < 0 || obs_.floats + obs_.bytes < 1) {
    throw std::invalid_argument("NStepAccumulator needs observations of at least one float or byte, got " +
                                std::to_string(obs_.floats) + " floats and " + std::to_string(obs_.bytes) + " bytes");
  }
  gamma_powers_.resize(static_cast<size_t>(config_.n) + 1);
  double power = 1.0;
  for (double& g : gamma_powers_) {
    g = power;
    power *= config_.gamma;
  }
}

void NStepAccumulator::check(const SampleBatch& batch) {
  batch.validate();
  if (!batch.discrete()) throw std::invalid_argument("replay needs Discrete actions; the fragment has Box actions");
  if (batch.obs_size != obs_.floats || batch.obs_byte_size != obs_.bytes) {
    throw std::invalid_argument("fragment observations of " + std::to_string(batch.obs_size) + " floats and " +
                                std::to_string(batch.obs_byte_size) + " bytes differ from the replay's " +
                                std::to_string(obs_.floats) + " and " + std::to_string(obs_.bytes));
  }
  const auto n = static_cast<size_t>(batch.num_transitions());
  final_row_.assign(n, -1);
  for (size_t d = 0; d < batch.final_obs_index.size(); ++d) final_row_[static_cast<size_t>(batch.final_obs_index[d])] = static_cast<int32_t>(d);
  dropped_row_ = batch.dropped_rows();
  for (size_t f = 0; f < n; ++f) {
    if ((batch.terminated[f] || batch.truncated[f]) && final_row_[f] < 0) {
      throw std::invalid_argument("fragment step " + std::to_string(f / static_cast<size_t>(batch.num_envs)) + " of env " +
                                  std::to_string(f % static_cast<size_t>(batch.num_envs)) + " ended an episode without a final_obs");
    }
  }
}

void NStepAccumulator::add(const SampleBatch& batch, const TransitionSink& emit) {
  check(batch);
  const bool carry = config_.carry_across_fragments && config_.n > 1;
  Stream scratch;
  for (int32_t k = 0; k < batch.num_envs; ++k) {
    if (!carry) {
      process_env(batch, k, scratch, emit);
      continue;
    }
    Stream& stream = streams_[{batch.worker_id, k}];
    if (!stream.actions.empty() && batch.num_steps > 0) {
      const float* first = batch.obs.data() + static_cast<size_t>(k) * obs_.floats;
      const uint8_t* first_u8 = batch.obs_u8.data() + static_cast<size_t>(k) * obs_.bytes;
      const bool continues = std::equal(first, first + obs_.floats, stream.next_obs.begin(), [](float a, float b) {
        return std::memcmp(&a, &b, sizeof(float)) == 0;  // bit for bit
      }) && std::equal(first_u8, first_u8 + obs_.bytes, stream.next_obs_u8.begin());
      if (!continues) flush_stream(stream, emit);  // not the continuation of the carried steps
    }
    process_env(batch, k, stream, emit);
  }
}

void NStepAccumulator::process_env(const SampleBatch& batch, int32_t env, Stream& stream, const TransitionSink& emit) {
  const int64_t o = obs_.floats, b = obs_.bytes;
  const int64_t k_envs = batch.num_envs;
  const auto carried = static_cast<int64_t>(stream.actions.size());  // P
  const int64_t length = carried + batch.num_steps;                   // L: carried steps, then this fragment's
  const int64_t n = config_.n;
  auto flat = [&](int64_t j) { return static_cast<size_t>((j - carried) * k_envs + env); };
  // Step j's observation, or the one after it, as (floats, bytes).
  struct ObsRef {
    const float* floats;
    const uint8_t* bytes;
  };
  auto obs_at = [&](int64_t j) -> ObsRef {
    if (j < carried) return {stream.obs.data() + j * o, stream.obs_u8.data() + j * b};
    return {batch.obs.data() + flat(j) * o, batch.obs_u8.data() + flat(j) * b};
  };
  auto action_at = [&](int64_t j) { return j < carried ? stream.actions[static_cast<size_t>(j)] : batch.action_indices[flat(j)]; };
  auto reward_at = [&](int64_t j) { return j < carried ? stream.rewards[static_cast<size_t>(j)] : batch.rewards[flat(j)]; };
  auto ended = [&](int64_t j) { return j >= carried && (batch.terminated[flat(j)] || batch.truncated[flat(j)]); };
  // A dropped episode's last step (not a real step): windows end on the step before it, which
  // leads to its observation (the last finite one), and none starts on it.
  auto dropped = [&](int64_t j) { return j >= carried && j < length && dropped_row_[flat(j)]; };
  auto next_obs_at = [&](int64_t j) -> ObsRef {
    if (j + 1 < carried) return obs_at(j + 1);
    if (j < carried) return batch.num_steps > 0 ? obs_at(j + 1) : ObsRef{stream.next_obs.data(), stream.next_obs_u8.data()};
    const size_t f = flat(j);
    if (batch.terminated[f] || batch.truncated[f]) {
      const auto row = static_cast<size_t>(final_row_[f]);
      return {batch.final_obs.data() + row * o, batch.final_obs_u8.data() + row * b};
    }
    if (j + 1 < length) return obs_at(j + 1);
    return {batch.bootstrap_obs.data() + static_cast<size_t>(env) * o, batch.bootstrap_obs_u8.data() + static_cast<size_t>(env) * b};
  };
  auto emit_window = [&](int64_t start, int64_t end) {
    double ret = 0.0;
    for (int64_t j = start; j <= end; ++j) ret += gamma_powers_[static_cast<size_t>(j - start)] * reward_at(j);
    const ObsRef obs = obs_at(start), next = next_obs_at(end);
    Transition t;
    t.obs = obs.floats;
    t.obs_u8 = b > 0 ? obs.bytes : nullptr;
    t.action = action_at(start);
    t.reward = static_cast<float>(ret);
    t.next_obs = next.floats;
    t.next_obs_u8 = b > 0 ? next.bytes : nullptr;
    t.terminated = end >= carried && batch.terminated[flat(end)] != 0;
    t.discount = static_cast<float>(gamma_powers_[static_cast<size_t>(end - start + 1)]);
    emit(t);
  };

  next_end_.resize(static_cast<size_t>(length) + 1);
  next_end_[static_cast<size_t>(length)] = static_cast<int32_t>(length);
  for (int64_t j = length - 1; j >= 0; --j) {
    next_end_[static_cast<size_t>(j)] =
        ended(j) || dropped(j + 1) ? static_cast<int32_t>(j) : next_end_[static_cast<size_t>(j) + 1];
  }
  int64_t start = 0;
  for (; start < length; ++start) {
    const int64_t end = std::min<int64_t>(next_end_[static_cast<size_t>(start)], start + n - 1);
    if (end >= length) break;  // the window reaches past this fragment
    if (!dropped(start)) emit_window(start, end);
  }
  const bool carry = config_.carry_across_fragments && n > 1;
  if (!carry) {
    for (; start < length; ++start) emit_window(start, length - 1);  // cut at the fragment end
  }

  // Keep the open windows' steps [start, L) for the stream's next fragment.
  Stream open;
  if (start < length) {
    const auto count = static_cast<size_t>(length - start);
    open.obs.resize(count * static_cast<size_t>(o));
    open.obs_u8.resize(count * static_cast<size_t>(b));
    open.actions.resize(count);
    open.rewards.resize(count);
    for (int64_t j = start; j < length; ++j) {
      const auto row = static_cast<size_t>(j - start);
      const ObsRef obs = obs_at(j);
      std::copy(obs.floats, obs.floats + o, open.obs.begin() + static_cast<std::ptrdiff_t>(row * o));
      std::copy(obs.bytes, obs.bytes + b, open.obs_u8.begin() + static_cast<std::ptrdiff_t>(row * b));
      open.actions[row] = action_at(j);
      open.rewards[row] = reward_at(j);
    }
    const ObsRef next = next_obs_at(length - 1);
    open.next_obs.assign(next.floats, next.floats + o);
    open.next_obs_u8.assign(next.bytes, next.bytes + b);
  }
  stream = std::move(open);
}

int64_t NStepAccumulator::flush_stream(Stream& stream, const TransitionSink& emit) {
  const auto count = static_cast<int64_t>(stream.actions.size());
  for (int64_t start = 0; start < count; ++start) {
    double ret = 0.0;
    for (int64_t j = start; j < count; ++j) ret += gamma_powers_[static_cast<size_t>(j - start)] * stream.rewards[static_cast<size_t>(j)];
    Transition t;
    t.obs = stream.obs.data() + start * obs_.floats;
    t.obs_u8 = obs_.bytes > 0 ? stream.obs_u8.data() + start * obs_.bytes : nullptr;
    t.action = stream.actions[static_cast<size_t>(start)];
    t.reward = static_cast<float>(ret);
    t.next_obs = stream.next_obs.data();
    t.next_obs_u8 = obs_.bytes > 0 ? stream.next_obs_u8.data() : nullptr;
    t.terminated = false;
    t.discount = static_cast<float>(gamma_powers_[static_cast<size_t>(count - start)]);
    emit(t);
  }
  stream = Stream();
  return count;
}

int64_t NStepAccumulator::flush(const TransitionSink& emit) {
  int64_t emitted = 0;
  for (auto& item : streams_) emitted += flush_stream(item.second, emit);
  streams_.clear();
  return emitted;
}

int64_t NStepAccumulator::num_pending() const {
  int64_t pending = 0;
  for (const auto& item : streams_) pending += static_cast<int64_t>(item.second.actions.size());
  return pending;
}

void NStepAccumulator::save(BinaryWriter& out) const {
  out.put<uint64_t>(streams_.size());
  for (const auto& [key, stream] : streams_) {
    out.put<uint64_t>(key.first);
    out.put<int32_t>(key.second);
    out.put_vector(stream.obs);
    out.put_vector(stream.actions);
    out.put_vector(stream.rewards);
    out.put_vector(stream.next_obs);
    if (obs_.bytes > 0) {
      out.put_vector(stream.obs_u8);
      out.put_vector(stream.next_obs_u8);
    }
  }
}

void NStepAccumulator::load(BinaryReader& in) {
  constexpr uint64_t kMaxStreams = uint64_t{1} << 24;
  const auto window = static_cast<uint64_t>(config_.n);
  const auto o = static_cast<uint64_t>(obs_.floats);
  const auto b = static_cast<uint64_t>(obs_.bytes);
  const auto count = in.get<uint64_t>();
  if (count > kMaxStreams) throw std::invalid_argument("n-step state holds " + std::to_string(count) + " streams");
  std::map<StreamKey, Stream> streams;
  for (uint64_t i = 0; i < count; ++i) {
    StreamKey key;
    key.first = in.get<uint64_t>();
    key.second = in.get<int32_t>();
    Stream stream;
    stream.obs = in.get_vector<float>(window * o);
    stream.actions = in.get_vector<int64_t>(window);
    stream.rewards = in.get_vector<float>(window);
    stream.next_obs = in.get_vector<float>(o);
    if (b > 0) {
      stream.obs_u8 = in.get_vector<uint8_t>(window * b);
      stream.next_obs_u8 = in.get_vector<uint8_t>(b);
    }
    const uint64_t steps = stream.actions.size();
    if (stream.obs.size() != steps * o || stream.obs_u8.size() != steps * b || stream.rewards.size() != steps ||
        (steps > 0 && (stream.next_obs.size() != o || stream.next_obs_u8.size() != b))) {
      throw std::invalid_argument("n-step state: a stream's columns disagree");
    }
    streams.emplace(key, std::move(stream));
  }
  streams_ = std::move(streams);
}

}  // namespace rlx
