#include "native/ppo_fragments.h"

#include <algorithm>

#include "native/gae.h"
#include "native/vtrace.h"

namespace rlx {

namespace {

// Whether step `index` of a fragment ended in a truncation that was not a termination: its
// final observation is staged (and bootstrapped from).
bool bootstraps_final_obs(const SampleBatch& batch, int32_t index) {
  return batch.truncated[index] && !batch.terminated[index];
}

}  // namespace

PpoRowCounts count_ppo_rows(const std::vector<SampleBatch>& batches) {
  PpoRowCounts rows;
  for (const SampleBatch& batch : batches) {
    rows.samples += batch.num_transitions();
    rows.extra += batch.num_envs;
    for (int32_t index : batch.final_obs_index) rows.extra += bootstraps_final_obs(batch, index) ? 1 : 0;
  }
  return rows;
}

void stage_ppo_observations(const std::vector<SampleBatch>& batches, const PpoRowCounts& rows,
                            const ObservationLayout& layout, float* obs) {
  const int64_t o = layout.flat_size, f = layout.float_slots, b = layout.byte_slots;
  // count stored observations from floats and bytes, flattened into `to`.
  auto stage = [&](const float* floats, const uint8_t* bytes, int64_t count, float* to) {
    if (layout.flat_is_floats) {
      std::copy(floats, floats + count * o, to);
    } else {
      flatten_observations(layout, floats, bytes, count, to);
    }
  };
  int64_t row = 0, extra_row = rows.samples;
  for (const SampleBatch& batch : batches) {
    stage(batch.obs.data(), batch.obs_u8.data(), batch.num_transitions(), obs + row * o);
    for (size_t j = 0; j < batch.final_obs_index.size(); ++j) {
      if (!bootstraps_final_obs(batch, batch.final_obs_index[j])) continue;
      stage(batch.final_obs.data() + j * f, batch.final_obs_u8.data() + j * b, 1, obs + (extra_row++) * o);
    }
    stage(batch.bootstrap_obs.data(), batch.bootstrap_obs_u8.data(), batch.num_envs, obs + extra_row * o);
    extra_row += batch.num_envs;
    row += batch.num_transitions();
  }
}

void stage_ppo_masks(const std::vector<SampleBatch>& batches, const ObservationLayout& layout, uint8_t* masks) {
  const int64_t b = layout.byte_slots, m = layout.mask_size;
  for (const SampleBatch& batch : batches) {
    for (int64_t i = 0; i < batch.num_transitions(); ++i) {
      const uint8_t* mask = batch.obs_u8.data() + i * b + layout.mask_offset;
      masks = std::copy(mask, mask + m, masks);
    }
  }
}

void stage_ppo_actions(const std::vector<SampleBatch>& batches, bool discrete, float* log_probs,
                       int64_t* action_indices, float* action_values) {
  for (const SampleBatch& batch : batches) {
    log_probs = std::copy(batch.log_probs.begin(), batch.log_probs.end(), log_probs);
    if (discrete) {
      action_indices = std::copy(batch.action_indices.begin(), batch.action_indices.end(), action_indices);
    } else {
      action_values = std::copy(batch.action_values.begin(), batch.action_values.end(), action_values);
    }
  }
}

void compute_ppo_targets(const std::vector<SampleBatch>& batches, const PpoConfig& config, const float* rewards,
                         const float* row_values, const float* log_ratios, float* old_values, float* advantages,
                         float* returns) {
  std::vector<float> final_values;  // [T, K] V(final obs) where a truncation bootstraps, else 0
  int64_t row = 0, extra_row = count_ppo_rows(batches).samples;
  for (const SampleBatch& batch : batches) {
    const int64_t count = batch.num_transitions();
    const float* values = config.recompute_values ? row_values + row : batch.values.data();
    std::copy(values, values + count, old_values + row);
    final_values.assign(static_cast<size_t>(count), 0.0f);
    for (int32_t index : batch.final_obs_index) {
      if (bootstraps_final_obs(batch, index)) final_values[static_cast<size_t>(index)] = row_values[extra_row++];
    }
    GaeInputs fragment;
    fragment.num_steps = batch.num_steps;
    fragment.num_envs = batch.num_envs;
    fragment.rewards = rewards + row;
    fragment.values = old_values + row;
    fragment.terminated = batch.terminated.data();
    fragment.truncated = batch.truncated.data();
    fragment.final_values = final_values.data();
    fragment.bootstrap_values = row_values + extra_row;
    if (log_ratios != nullptr) {
      compute_vtrace(VtraceInputs{fragment, log_ratios + row}, {config.gamma, config.rho_bar, config.c_bar, config.lambda},
                     returns + row, advantages + row);
    } else {
      compute_gae(fragment, config.gamma, config.lambda, advantages + row, returns + row);
    }
    extra_row += batch.num_envs;
    row += count;
  }
}

}  // namespace rlx
