// The typed config structs: defaults from the schema, and the schedules.
#include "core/algorithm_config.h"

#include <algorithm>

#include "core/config_schema.h"

namespace rlx {

const char* schedule_name(Schedule schedule) { return schedule == Schedule::kLinear ? "linear" : "constant"; }

CommonConfig::CommonConfig() { apply_schema_defaults(*this); }
PpoConfig::PpoConfig() { apply_schema_defaults(*this); }
DqnConfig::DqnConfig() { apply_schema_defaults(*this); }
AppoConfig::AppoConfig() { apply_schema_defaults(*this); }
SacConfig::SacConfig() { apply_schema_defaults(*this); }

namespace {
double sac_rate(const SacConfig& config, double own, int64_t timesteps) {
  return scheduled_value(config.lr_schedule, own > 0 ? own : config.lr, timesteps, config.total_timesteps);
}
}  // namespace

double SacConfig::actor_lr_at(int64_t timesteps) const { return sac_rate(*this, actor_lr, timesteps); }
double SacConfig::critic_lr_at(int64_t timesteps) const { return sac_rate(*this, critic_lr, timesteps); }
double SacConfig::alpha_lr_at(int64_t timesteps) const { return sac_rate(*this, alpha_lr, timesteps); }

double scheduled_value(Schedule schedule, double initial, int64_t timesteps_done, int64_t total_timesteps) {
  if (schedule == Schedule::kConstant) return initial;
  const double remaining = 1.0 - static_cast<double>(timesteps_done) / static_cast<double>(total_timesteps);
  return initial * std::max(0.0, remaining);
}

double PpoConfig::lr_at(int64_t timesteps_done) const {
  return scheduled_value(lr_schedule, lr, timesteps_done, total_timesteps);
}

double PpoConfig::clip_param_at(int64_t timesteps_done) const {
  return scheduled_value(clip_schedule, clip_param, timesteps_done, total_timesteps);
}

double DqnConfig::lr_at(int64_t timesteps) const { return scheduled_value(lr_schedule, lr, timesteps, total_timesteps); }

double DqnConfig::epsilon(int64_t timesteps) const {
  const double horizon = exploration_fraction * static_cast<double>(total_timesteps);
  if (!(horizon > 0.0)) return exploration_final_eps;
  const double progress = std::clamp(static_cast<double>(timesteps) / horizon, 0.0, 1.0);
  return exploration_initial_eps + progress * (exploration_final_eps - exploration_initial_eps);
}

}  // namespace rlx
