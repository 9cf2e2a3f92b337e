#include "native/ppo_checks.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "core/config_schema.h"
#include "models/network_layout.h"

namespace rlx {

namespace {

// splitmix64's finaliser: decorrelates (seed, update) pairs.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Throws unless every action of the fragment has one index per element within its category
// count, and (with a mask) every index is legal under the mask of the observation it was taken on.
void check_indexed_actions(const SampleBatch& batch, const ModelSpec& model, const std::vector<int64_t>& categories,
                           const ObservationLayout& layout) {
  const auto elements = static_cast<int64_t>(categories.size());
  if (batch.action_components != elements) {
    throw std::invalid_argument("fragment actions have " + std::to_string(batch.action_components) + " indices, " +
                                model.action_space.to_string() + " has " + std::to_string(elements));
  }
  for (int64_t i = 0; i < batch.num_transitions(); ++i) {
    const int64_t* action = batch.action_indices.data() + i * elements;
    const uint8_t* mask = layout.mask_size > 0 ? batch.obs_u8.data() + i * layout.byte_slots + layout.mask_offset : nullptr;
    int64_t offset = 0;
    for (int64_t e = 0; e < elements; ++e) {
      const int64_t n = categories[static_cast<size_t>(e)];
      if (action[e] < 0 || action[e] >= n) {
        throw std::invalid_argument("fragment action " + std::to_string(action[e]) + " (element " + std::to_string(e) +
                                    ") is outside its " + std::to_string(n) + " choices of " + model.action_space.to_string());
      }
      if (mask != nullptr && mask[offset + action[e]] == 0) {
        throw std::invalid_argument("fragment sample " + std::to_string(i) + " took action " + std::to_string(action[e]) +
                                    " (element " + std::to_string(e) + ") that its observation's action mask forbids");
      }
      offset += n;
    }
  }
}

}  // namespace

void validate_ppo_config(const PpoConfig& config) {
  check_config(config);
  const bool anneals = config.lr_schedule == Schedule::kLinear || config.clip_schedule == Schedule::kLinear;
  if (anneals && config.total_timesteps < 1) {
    throw std::invalid_argument("PpoConfig: total_timesteps must be >= 1 when a schedule anneals, got " +
                                std::to_string(config.total_timesteps));
  }
  if (config.vtrace && !(config.rho_bar > 0.0 && config.c_bar > 0.0)) {
    throw std::invalid_argument("PpoConfig: V-trace needs rho_bar > 0 and c_bar > 0");
  }
  if (config.vtrace && !config.recompute_values) {
    throw std::invalid_argument("PpoConfig: V-trace needs recompute_values (the learner's own V(s))");
  }
  if (!(config.kl_coeff >= 0.0) || config.target_update_frequency < 1) {
    throw std::invalid_argument("PpoConfig: kl_coeff must be >= 0 and target_update_frequency >= 1");
  }
}

void check_ppo_batches(const std::vector<SampleBatch>& batches, const ModelSpec& model, bool recompute_values) {
  if (batches.empty()) throw std::invalid_argument("PPO update got no fragments");
  const bool indexed = model.indexed_actions();
  const int64_t action_size = indexed ? 0 : model.action_space.size();
  const std::vector<int64_t> categories = model.action_categories();
  const ObservationLayout layout = model.observation_layout();
  const int64_t state_size = model.recurrent() ? actor_critic_layout(model).state_size : 0;
  int64_t total = 0;
  for (const SampleBatch& batch : batches) {
    batch.validate();
    if (batch.obs_size != layout.float_slots || batch.obs_byte_size != layout.byte_slots ||
        batch.action_size != action_size) {
      throw std::invalid_argument("fragment (obs " + std::to_string(batch.obs_size) + " floats and " +
                                  std::to_string(batch.obs_byte_size) + " bytes, action size " +
                                  std::to_string(batch.action_size) + ") does not fit the model (obs " +
                                  std::to_string(layout.float_slots) + " floats and " + std::to_string(layout.byte_slots) +
                                  " bytes, action size " + std::to_string(action_size) + ")");
    }
    if (batch.state_size != state_size) {
      throw std::invalid_argument("fragment carries recurrent states of " + std::to_string(batch.state_size) +
                                  " floats, the model's are " + std::to_string(state_size));
    }
    if (batch.log_probs.empty()) throw std::invalid_argument("PPO needs fragments with behaviour log_probs");
    if (indexed) check_indexed_actions(batch, model, categories, layout);
    if (!recompute_values && batch.values.empty()) {
      throw std::invalid_argument("PPO with recompute_values = false needs fragments with values");
    }
    // Every truncated (non-terminal) step needs its final observation to bootstrap from.
    std::vector<uint8_t> has_final(static_cast<size_t>(batch.num_transitions()), 0);
    for (int32_t index : batch.final_obs_index) has_final[static_cast<size_t>(index)] = 1;
    for (size_t i = 0; i < has_final.size(); ++i) {
      if (batch.truncated[i] && !batch.terminated[i] && !has_final[i]) {
        throw std::invalid_argument("fragment step " + std::to_string(i) + " is truncated but has no final_obs");
      }
    }
    total += batch.num_transitions();
  }
  if (total == 0) throw std::invalid_argument("PPO update got fragments without transitions");
}

uint64_t ppo_permutation_seed(uint64_t seed, int64_t update) { return mix(seed ^ mix(static_cast<uint64_t>(update))); }

double explained_variance(const float* values, const float* returns, int64_t n) {
  double mean_y = 0.0, mean_e = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    mean_y += returns[i];
    mean_e += static_cast<double>(returns[i]) - values[i];
  }
  mean_y /= static_cast<double>(n);
  mean_e /= static_cast<double>(n);
  double var_y = 0.0, var_e = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double y = returns[i] - mean_y;
    const double e = static_cast<double>(returns[i]) - values[i] - mean_e;
    var_y += y * y;
    var_e += e * e;
  }
  if (var_y == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return 1.0 - var_e / var_y;
}

}  // namespace rlx
