#include "native/sequence_plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rlx {

SequencePlan plan_sequences(const std::vector<SampleBatch>& batches, int64_t max_seq_len) {
  if (max_seq_len < 1) throw std::invalid_argument("max_seq_len must be at least 1, got " + std::to_string(max_seq_len));
  SequencePlan plan;
  if (batches.empty()) return plan;
  plan.state_size = batches.front().state_size;
  for (size_t f = 0; f < batches.size(); ++f) {
    if (batches[f].state_size != plan.state_size || plan.state_size < 1) {
      throw std::invalid_argument("fragment " + std::to_string(f) + " carries recurrent states of " +
                                  std::to_string(batches[f].state_size) + " floats, the model's are " +
                                  std::to_string(plan.state_size));
    }
    plan.num_streams += batches[f].num_envs;
    plan.max_steps = std::max<int64_t>(plan.max_steps, batches[f].num_steps);
  }
  const int64_t width = plan.max_steps;
  plan.stream_rows.assign(static_cast<size_t>(plan.num_streams * width), -1);
  plan.stream_resets.assign(static_cast<size_t>(plan.num_streams * width), 0.0f);
  int64_t row = 0, stream = 0;
  for (const SampleBatch& batch : batches) {
    const int64_t k = batch.num_envs, t_max = batch.num_steps;
    plan.initial_states.insert(plan.initial_states.end(), batch.initial_states.begin(), batch.initial_states.end());
    for (int64_t e = 0; e < k; ++e) {
      const int64_t s = stream + e;
      int64_t start = 0;
      for (int64_t t = 0; t < t_max; ++t) {
        plan.stream_rows[static_cast<size_t>(s * width + t)] = row + t * k + e;
        const bool episode_start = t > 0 && (batch.terminated[(t - 1) * k + e] | batch.truncated[(t - 1) * k + e]);
        if (episode_start) plan.stream_resets[static_cast<size_t>(s * width + t)] = 1.0f;
        // A sequence ends before an episode start, at max_seq_len steps, or at the stream's end.
        const bool ends = t + 1 == t_max || t + 1 - start == max_seq_len ||
                          (batch.terminated[t * k + e] | batch.truncated[t * k + e]);
        if (ends) {
          plan.sequence_stream.push_back(s);
          plan.sequence_start.push_back(start);
          plan.sequence_length.push_back(t + 1 - start);
          start = t + 1;
        }
      }
    }
    // Extra rows: final observations of truncations (not terminations), then one bootstrap per env.
    for (int32_t index : batch.final_obs_index) {
      if (!batch.truncated[index] || batch.terminated[index]) continue;
      plan.extra_after_step.push_back((stream + index % k) * width + index / k);
      plan.extra_keep.push_back(1.0f);
    }
    for (int64_t e = 0; e < k; ++e) {
      const int64_t last = (t_max - 1) * k + e;
      plan.extra_after_step.push_back((stream + e) * width + t_max - 1);
      plan.extra_keep.push_back(batch.terminated[last] | batch.truncated[last] ? 0.0f : 1.0f);
    }
    row += t_max * k;
    stream += k;
  }
  plan.num_samples = row;
  plan.num_extra = static_cast<int64_t>(plan.extra_after_step.size());
  return plan;
}

int64_t sequence_state_source(const SequencePlan& plan, int64_t s) {
  const int64_t stream = plan.sequence_stream[static_cast<size_t>(s)];
  const int64_t start = plan.sequence_start[static_cast<size_t>(s)];
  if (start == 0) return -1;
  if (plan.stream_resets[static_cast<size_t>(stream * plan.max_steps + start)] != 0.0f) return -2;
  return stream * plan.max_steps + start - 1;
}

std::vector<int64_t> sequence_sample_rows(const SequencePlan& plan, const int64_t* sequences, int64_t count) {
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < count; ++i) {
    const auto s = static_cast<size_t>(sequences[i]);
    const int64_t* first = plan.stream_rows.data() + plan.sequence_stream[s] * plan.max_steps + plan.sequence_start[s];
    rows.insert(rows.end(), first, first + plan.sequence_length[s]);
  }
  return rows;
}

int64_t sequences_per_minibatch(const SequencePlan& plan, int64_t minibatch_size) {
  return sequences_per_minibatch(plan.num_samples, plan.num_sequences(), minibatch_size);
}

int64_t sequences_per_minibatch(int64_t num_samples, int64_t num_sequences, int64_t minibatch_size) {
  if (num_samples == 0) return 1;
  const int64_t minibatches = std::max<int64_t>(1, (num_samples + minibatch_size - 1) / minibatch_size);
  return std::max<int64_t>(1, (num_sequences + minibatches - 1) / minibatches);
}

}  // namespace rlx
