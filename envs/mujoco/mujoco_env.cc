#include "envs/mujoco/mujoco_env.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace rlx {
namespace {

// MuJoCo 2.2's XML parser keeps global state, so compiles are serialised.
std::mutex& compile_mutex() {
  static std::mutex mutex;
  return mutex;
}

// An mjVFS is ~2 MB, so it lives on the heap; mj_deleteVFS frees the files it holds.
struct VfsDeleter {
  void operator()(mjVFS* vfs) const {
    mj_deleteVFS(vfs);
    delete vfs;
  }
};
using VfsPtr = std::unique_ptr<mjVFS, VfsDeleter>;

std::string known_assets_text() {
  std::string text;
  for (const std::string& name : embedded_mujoco_asset_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

MjModelPtr compile_mujoco_model(const std::string& asset_name) {
  char error[1024] = "";
  mjModel* model = nullptr;
  std::string origin;
  const char* assets_dir = std::getenv(kMujocoAssetsDirVariable);
  if (assets_dir != nullptr && assets_dir[0] != '\0') {
    const std::string path = std::string(assets_dir) + "/" + asset_name;
    origin = path + " (from " + kMujocoAssetsDirVariable + ")";
    std::lock_guard<std::mutex> lock(compile_mutex());
    model = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  } else {
    const std::string_view text = embedded_mujoco_asset(asset_name);
    if (text.empty()) {
      throw std::runtime_error("failed to load MuJoCo model '" + asset_name +
                               "': no such embedded asset; embedded assets: " + known_assets_text());
    }
    origin = "the embedded copy";
    VfsPtr vfs(new mjVFS);
    mj_defaultVFS(vfs.get());
    if (mj_makeEmptyFileVFS(vfs.get(), asset_name.c_str(), static_cast<int>(text.size())) != 0) {
      throw std::runtime_error("failed to load MuJoCo model '" + asset_name + "': cannot add it to a MuJoCo VFS");
    }
    const int index = mj_findFileVFS(vfs.get(), asset_name.c_str());
    if (index < 0) {
      throw std::runtime_error("failed to load MuJoCo model '" + asset_name + "': not found in its MuJoCo VFS");
    }
    std::memcpy(vfs->filedata[index], text.data(), text.size());
    std::lock_guard<std::mutex> lock(compile_mutex());
    model = mj_loadXML(asset_name.c_str(), vfs.get(), error, sizeof(error));
  }
  if (model == nullptr) {
    throw std::runtime_error("failed to load MuJoCo model '" + asset_name + "' from " + origin + ": " +
                             (error[0] != '\0' ? error : "unknown MuJoCo error"));
  }
  return MjModelPtr(model);
}

std::shared_ptr<const mjModel> shared_mujoco_model(const std::string& asset_name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const mjModel>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(asset_name);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const mjModel> model(compile_mujoco_model(asset_name));
  cache.emplace(asset_name, model);
  return model;
}

MujocoEnv::MujocoEnv(EnvSpec spec, const std::string& asset_name, int frame_skip, int nq, int nv)
    : Env(std::move(spec)), model_(shared_mujoco_model(asset_name)), frame_skip_(frame_skip) {
  const mjModel& m = *model_;
  const std::string where = this->spec().id + " (MuJoCo model '" + asset_name + "')";
  if (frame_skip < 1) throw std::invalid_argument(where + ": frame_skip must be positive");
  if (m.nq != nq || m.nv != nv) {
    throw std::runtime_error(where + " has nq=" + std::to_string(m.nq) + ", nv=" + std::to_string(m.nv) +
                             "; the task needs nq=" + std::to_string(nq) + ", nv=" + std::to_string(nv));
  }
  const Space& actions = this->spec().action_space;
  if (!actions.is_box() || actions.size() != m.nu) {
    throw std::runtime_error(where + " has " + std::to_string(m.nu) + " actuators; the action space is " +
                             actions.to_string());
  }
  for (int i = 0; i < m.nu; ++i) {
    const auto low = static_cast<float>(m.actuator_ctrlrange[2 * i]);
    const auto high = static_cast<float>(m.actuator_ctrlrange[2 * i + 1]);
    if (!m.actuator_ctrllimited[i] || low != actions.low[static_cast<size_t>(i)] ||
        high != actions.high[static_cast<size_t>(i)]) {
      throw std::runtime_error(where + ": actuator " + std::to_string(i) +
                               " is not ctrllimited to the action space " + actions.to_string());
    }
  }
  data_.reset(mj_makeData(model_.get()));
  if (!data_) throw std::runtime_error(where + ": mj_makeData failed");
  dt_ = m.opt.timestep * frame_skip_;
  mj_forward(model_.get(), data_.get());
}

std::vector<double> MujocoEnv::state() const {
  const mjModel& m = *model_;
  std::vector<double> result(static_cast<size_t>(m.nq + m.nv));
  std::copy(data_->qpos, data_->qpos + m.nq, result.begin());
  std::copy(data_->qvel, data_->qvel + m.nv, result.begin() + m.nq);
  return result;
}

void MujocoEnv::set_physical_state(const std::vector<double>& state, ObsSpan obs) {
  const mjModel& m = *model_;
  if (state.size() != static_cast<size_t>(m.nq + m.nv)) {
    throw std::invalid_argument(spec().id + " state needs " + std::to_string(m.nq + m.nv) + " values (qpos " +
                                std::to_string(m.nq) + ", qvel " + std::to_string(m.nv) + "), got " +
                                std::to_string(state.size()));
  }
  std::copy(state.begin(), state.begin() + m.nq, data_->qpos);
  std::copy(state.begin() + m.nq, state.end(), data_->qvel);
  mj_forward(model_.get(), data_.get());
  write_observation(obs);
}

std::vector<double> MujocoEnv::exact_state() const {
  const mjModel& m = *model_;
  const mjData& d = *data_;
  std::vector<double> state;
  state.reserve(static_cast<size_t>(m.nq + 2 * m.nv + m.na + 3 * m.nbody + 1));
  state.insert(state.end(), d.qpos, d.qpos + m.nq);
  state.insert(state.end(), d.qvel, d.qvel + m.nv);
  state.insert(state.end(), d.act, d.act + m.na);
  state.insert(state.end(), d.qacc_warmstart, d.qacc_warmstart + m.nv);
  state.insert(state.end(), d.xpos, d.xpos + 3 * m.nbody);
  state.push_back(d.time);
  return state;
}

void MujocoEnv::restore_exact_state(const std::vector<double>& state) {
  const mjModel& m = *model_;
  mjData& d = *data_;
  const auto expected = static_cast<size_t>(m.nq + 2 * m.nv + m.na + 3 * m.nbody + 1);
  if (state.size() != expected) {
    throw std::invalid_argument(spec().id + " snapshot needs " + std::to_string(expected) + " values, got " +
                                std::to_string(state.size()));
  }
  const double* in = state.data();
  const auto take = [&in](int count, mjtNum* out) {
    std::copy_n(in, count, out);
    in += count;
  };
  take(m.nq, d.qpos);
  take(m.nv, d.qvel);
  take(m.na, d.act);
  mj_forward(&m, &d);  // derived quantities (positions, contacts) of the restored state
  take(m.nv, d.qacc_warmstart);  // after mj_forward, which may overwrite it
  // After mj_step, xpos still holds the bodies' positions from before the last integration (a
  // task's reward reads it, e.g. Ant's torso x before the step): keep that, not mj_forward's.
  take(3 * m.nbody, d.xpos);
  d.time = *in;
}

void MujocoEnv::reset_with_noise(Rng& rng, double scale, bool normal_qvel_noise) {
  const mjModel& m = *model_;
  mjData& d = *data_;
  mj_resetData(&m, &d);
  for (int i = 0; i < m.nq; ++i) d.qpos[i] = m.qpos0[i] + rng.uniform(-scale, scale);
  for (int i = 0; i < m.nv; ++i) d.qvel[i] = normal_qvel_noise ? scale * rng.normal() : rng.uniform(-scale, scale);
  mj_forward(&m, &d);
}

void MujocoEnv::do_simulation(const Action& action) {
  if (action.values == nullptr) throw std::invalid_argument(spec().id + " needs Box action values");
  const mjModel& m = *model_;
  mjData& d = *data_;
  for (int i = 0; i < m.nu; ++i) d.ctrl[i] = action.values[i];
  for (int k = 0; k < frame_skip_; ++k) mj_step(&m, &d);
}

double MujocoEnv::simulate_with_forward_reward(const Action& action, double weight) {
  const double x_before = data_->qpos[0];
  do_simulation(action);
  const double x_after = data_->qpos[0];
  return weight * (x_after - x_before) / dt_;
}

double MujocoEnv::control_cost(const Action& action, double weight) const {
  double sum = 0.0;
  for (int i = 0; i < model_->nu; ++i) {
    const double a = action.values[i];
    sum += a * a;
  }
  return weight * sum;
}

bool MujocoEnv::state_is_finite() const {
  for (int i = 0; i < model_->nq; ++i) {
    if (!std::isfinite(data_->qpos[i])) return false;
  }
  for (int i = 0; i < model_->nv; ++i) {
    if (!std::isfinite(data_->qvel[i])) return false;
  }
  return true;
}

void MujocoEnv::write_qpos_qvel(ObsSpan obs, int first_qpos, double qvel_limit) const {
  int64_t out = 0;
  for (int i = first_qpos; i < model_->nq; ++i) obs[out++] = static_cast<float>(data_->qpos[i]);
  for (int i = 0; i < model_->nv; ++i) {
    obs[out++] = static_cast<float>(std::clamp(data_->qvel[i], -qvel_limit, qvel_limit));
  }
}

}  // namespace rlx
