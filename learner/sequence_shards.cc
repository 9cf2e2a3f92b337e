#include "learner/sequence_shards.h"

#include <numeric>
#include <stdexcept>
#include <string>

namespace rlx {

namespace {

int64_t stride_of(const PpoShard& shard, const std::vector<SampleBatch>& batches, size_t f) {
  return shard.fragment_strides.empty() ? batches[f].num_envs : shard.fragment_strides[f];
}

// The global row of each local sequence's first step.
std::vector<int64_t> sequence_first_rows(const SequencePlan& plan, const std::vector<SampleBatch>& batches,
                                         const PpoShard& shard) {
  std::vector<int64_t> fragment_of_stream, env_of_stream;
  for (size_t f = 0; f < batches.size(); ++f) {
    for (int64_t e = 0; e < batches[f].num_envs; ++e) {
      fragment_of_stream.push_back(static_cast<int64_t>(f));
      env_of_stream.push_back(e);
    }
  }
  std::vector<int64_t> rows(static_cast<size_t>(plan.num_sequences()));
  for (size_t q = 0; q < rows.size(); ++q) {
    const auto s = static_cast<size_t>(plan.sequence_stream[q]);
    const auto f = static_cast<size_t>(fragment_of_stream[s]);
    rows[q] = shard.fragment_offsets[f] + plan.sequence_start[q] * stride_of(shard, batches, f) + env_of_stream[s];
  }
  return rows;
}

}  // namespace

GlobalSequences single_rank_sequences(const SequencePlan& plan) {
  GlobalSequences out;
  out.num_samples = plan.num_samples;
  out.length = plan.sequence_length;
  out.local.resize(plan.sequence_length.size());
  std::iota(out.local.begin(), out.local.end(), int64_t{0});
  return out;
}

std::vector<double> sequence_layout_term(const SequencePlan& plan, const std::vector<SampleBatch>& batches,
                                         const PpoShard& shard) {
  const int64_t n = shard.global_samples;
  std::vector<double> term(static_cast<size_t>(3 * n), 0.0);
  for (size_t f = 0; f < batches.size(); ++f) {
    const int64_t stride = stride_of(shard, batches, f);
    const auto first = static_cast<size_t>(shard.fragment_offsets[f]);
    term[first] = static_cast<double>(batches[f].num_steps * stride);
    term[static_cast<size_t>(n) + first] = static_cast<double>(stride);
  }
  const std::vector<int64_t> rows = sequence_first_rows(plan, batches, shard);
  for (size_t q = 0; q < rows.size(); ++q) {
    term[static_cast<size_t>(2 * n + rows[q])] = static_cast<double>(plan.sequence_length[q]);
  }
  return term;
}

GlobalSequences global_sequences(const std::vector<double>& summed, const SequencePlan& plan,
                                 const std::vector<SampleBatch>& batches, const PpoShard& shard) {
  const int64_t n = shard.global_samples;
  if (static_cast<int64_t>(summed.size()) != 3 * n) throw std::invalid_argument("the sequence layout sum has the wrong size");
  std::vector<int64_t> local_at_row(static_cast<size_t>(n), -1);
  const std::vector<int64_t> rows = sequence_first_rows(plan, batches, shard);
  for (size_t q = 0; q < rows.size(); ++q) local_at_row[static_cast<size_t>(rows[q])] = static_cast<int64_t>(q);

  GlobalSequences out;
  out.num_samples = n;
  // Whole fragments one after another: each starts where the part holding its first env column
  // starts, which wrote the whole fragment's size and stride there.
  for (int64_t first = 0; first < n;) {
    const auto size = static_cast<int64_t>(summed[static_cast<size_t>(first)]);
    const auto stride = static_cast<int64_t>(summed[static_cast<size_t>(n + first)]);
    if (size < 1 || stride < 1 || size % stride != 0 || first + size > n) {
      throw std::invalid_argument("the data-parallel shards do not tile the global batch of " + std::to_string(n) +
                                  " samples: no whole fragment starts at sample " + std::to_string(first));
    }
    const int64_t steps = size / stride;
    for (int64_t e = 0; e < stride; ++e) {
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = first + t * stride + e;
        const auto length = static_cast<int64_t>(summed[static_cast<size_t>(2 * n + row)]);
        if (length == 0) continue;
        out.length.push_back(length);
        out.local.push_back(local_at_row[static_cast<size_t>(row)]);
      }
    }
    first += size;
  }
  if (std::accumulate(out.length.begin(), out.length.end(), int64_t{0}) != n) {
    throw std::invalid_argument("the data-parallel shards' sequences do not cover the global batch of " + std::to_string(n) +
                                " samples");
  }
  return out;
}

}  // namespace rlx
