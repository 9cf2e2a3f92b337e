// MujocoEnv: the base of rlx's MuJoCo tasks. It owns one mjData over a model that is compiled
// once per process and shared read-only, and implements Gymnasium's MujocoEnv plumbing
// (frame skip, set_state, reset noise) without allocating per step.
#pragma once

#include <mujoco/mujoco.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "envs/env.h"

namespace rlx {

// Frees a model with mj_deleteModel.
struct MjModelDeleter {
  void operator()(mjModel* model) const { mj_deleteModel(model); }
};
// Frees a data block with mj_deleteData.
struct MjDataDeleter {
  void operator()(mjData* data) const { mj_deleteData(data); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using MjDataPtr = std::unique_ptr<mjData, MjDataDeleter>;

// Name of the environment variable that, when set to a directory, makes rlx load MuJoCo assets
// from <dir>/<asset name> on disk instead of the copies embedded in the library.
constexpr const char* kMujocoAssetsDirVariable = "RLX_MUJOCO_ASSETS_DIR";

// The MJCF text embedded in the library under an asset name (e.g. "hopper.xml"); empty if none.
std::string_view embedded_mujoco_asset(std::string_view name);

// The names of all embedded assets, sorted.
std::vector<std::string> embedded_mujoco_asset_names();

// Compiles an asset into a fresh model: from $RLX_MUJOCO_ASSETS_DIR/<name> when that variable is
// set and non-empty, else from the embedded copy. Throws std::runtime_error naming the asset and
// quoting MuJoCo's error text when the asset is missing or fails to compile.
MjModelPtr compile_mujoco_model(const std::string& asset_name);

// The process-wide model of an asset: compiled on first use (thread-safe), then shared read-only.
std::shared_ptr<const mjModel> shared_mujoco_model(const std::string& asset_name);

// Base class of the MuJoCo tasks. The physical state is qpos followed by qvel.
class MujocoEnv : public Env {
 public:
  // qpos (nq values) followed by qvel (nv values).
  std::vector<double> state() const override;

  // The shared, read-only compiled model.
  const mjModel& model() const { return *model_; }
  // This instance's simulation data.
  const mjData& data() const { return *data_; }
  // Physics steps per env step.
  int frame_skip() const { return frame_skip_; }
  // Seconds per env step: model timestep * frame_skip.
  double dt() const { return dt_; }

 protected:
  // Loads (or reuses) the asset's model and makes this instance's data. Throws
  // std::runtime_error when the model does not have nq/nv coordinates or its actuators do not
  // match spec.action_space (count and ctrlrange), so a spec can never disagree with its model.
  MujocoEnv(EnvSpec spec, const std::string& asset_name, int frame_skip, int nq, int nv);

  // Writes the observation of the current data into obs.
  virtual void write_observation(ObsSpan obs) const = 0;

  // set_state: writes qpos and qvel from state (nq + nv values), runs mj_forward and writes the
  // observation; throws std::invalid_argument on a wrong size.
  void set_physical_state(const std::vector<double>& state, ObsSpan obs) override;
  // qpos, qvel, act, qacc_warmstart (the solver's warm start, which the next mj_step's result
  // depends on), xpos (as the last mj_step left it: rewards read it before the next) and time.
  std::vector<double> exact_state() const override;
  void restore_exact_state(const std::vector<double>& state) override;

  // Gymnasium's reset: mj_resetData, then qpos = qpos0 + U(-scale, scale) per coordinate and
  // qvel = U(-scale, scale) (or scale * N(0, 1) when normal_qvel_noise), then mj_forward.
  void reset_with_noise(Rng& rng, double scale, bool normal_qvel_noise);

  // Copies the action into ctrl (MuJoCo clamps it to ctrlrange) and runs frame_skip mj_steps.
  // Throws std::invalid_argument when action.values is null.
  void do_simulation(const Action& action);

  // do_simulation, then Gymnasium's forward reward of the planar runners:
  // weight * (qpos[0] after - qpos[0] before) / dt.
  double simulate_with_forward_reward(const Action& action, double weight);

  // weight * sum(action^2) over the nu action values, on the action as given.
  double control_cost(const Action& action, double weight) const;

  // True when every qpos and qvel value is finite.
  bool state_is_finite() const;

  // Writes qpos[first_qpos:] then qvel clipped to [-qvel_limit, qvel_limit] into obs, as floats.
  void write_qpos_qvel(ObsSpan obs, int first_qpos, double qvel_limit) const;

  // Mutable access for subclasses.
  mjData& mutable_data() { return *data_; }

 private:
  std::shared_ptr<const mjModel> model_;
  MjDataPtr data_;
  int frame_skip_;
  double dt_;
};

}  // namespace rlx
