#include "bench/physics_benchmark.h"

#include <chrono>

#include "envs/mujoco/mujoco_env.h"

namespace rlx {

std::optional<int> mujoco_frame_skip(const Env& env) {
  const auto* mujoco = dynamic_cast<const MujocoEnv*>(&env);
  if (!mujoco) return std::nullopt;
  return mujoco->frame_skip();
}

std::optional<double> measure_mj_steps_per_s(const Env& env, double seconds, uint64_t seed) {
  const auto* mujoco = dynamic_cast<const MujocoEnv*>(&env);
  if (!mujoco) return std::nullopt;
  const mjModel& model = mujoco->model();
  MjDataPtr data(mj_makeData(&model));
  Rng rng(seed);
  const int frame_skip = mujoco->frame_skip();
  int64_t steps = 0;
  const auto start = std::chrono::steady_clock::now();
  double elapsed = 0.0;
  while (elapsed < seconds) {
    for (int env_step = 0; env_step < 1000; ++env_step) {
      for (int i = 0; i < model.nu; ++i) {
        data->ctrl[i] = rng.uniform(model.actuator_ctrlrange[2 * i], model.actuator_ctrlrange[2 * i + 1]);
      }
      for (int k = 0; k < frame_skip; ++k) mj_step(&model, data.get());
    }
    steps += 1000 * frame_skip;
    mj_resetData(&model, data.get());
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return steps / elapsed;
}

}  // namespace rlx
