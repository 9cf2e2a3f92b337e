// MujocoRenderer: a model of its own (offscreen buffer sized to the frame), mjv scene and mjr
// context in an EglContext; the state's qpos placed with mj_forward, then drawn and read back.
#include "watch/mujoco_renderer.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "envs/mujoco/mujoco_env.h"
#include "watch/egl_context.h"

namespace rlx {
namespace {

constexpr int kDefaultSize = 480;
constexpr int kMaxSceneGeoms = 2000;
constexpr int kTileRadius = 8;        // floor tiles drawn this many tiles around the camera's target
constexpr double kTileSize = 1.0;     // metres

// How Gymnasium's v4 tasks are filmed: the body the camera follows and from how far.
struct MujocoFilming {
  const char* env_id;
  const char* asset;
  int frame_skip;
  int track_body;    // the camera follows this body's x and y (0: a fixed camera)
  double lookat_z;   // the height it looks at, fixed so the picture does not bob with the body
  double distance;
  double elevation;
};

constexpr MujocoFilming kFilmings[] = {
    {"Hopper-v4", "hopper.xml", 4, 1, 1.15, 3.0, -20},
    {"Walker2d-v4", "walker2d.xml", 4, 1, 1.15, 4.0, -20},
    {"HalfCheetah-v4", "half_cheetah.xml", 5, 1, 0.5, 4.0, -20},
    {"Ant-v4", "ant.xml", 5, 1, 0.5, 4.0, -30},
    {"InvertedPendulum-v4", "inverted_pendulum.xml", 2, 0, 0.3, 2.04, -20},
};

class MujocoRenderer : public EnvRenderer {
 public:
  MujocoRenderer(const MujocoFilming& filming, int width, int height)
      : filming_(filming), width_(width > 0 ? width : kDefaultSize), height_(height > 0 ? height : kDefaultSize) {
    model_ = compile_mujoco_model(filming.asset);
    model_->vis.global.offwidth = std::max(model_->vis.global.offwidth, width_);
    model_->vis.global.offheight = std::max(model_->vis.global.offheight, height_);
    data_.reset(mj_makeData(model_.get()));
    mjv_defaultScene(&scene_);
    mjv_defaultOption(&option_);
    mjv_defaultCamera(&camera_);
    mjr_defaultContext(&context_);
    mjv_makeScene(model_.get(), &scene_, kMaxSceneGeoms);
    mjr_makeContext(model_.get(), &context_, mjFONTSCALE_100);
    if (context_.offFBO == 0) {
      mjv_freeScene(&scene_);
      throw std::runtime_error(std::string(filming.env_id) + ": MuJoCo could not make its offscreen framebuffer");
    }
    mjr_setBuffer(mjFB_OFFSCREEN, &context_);
    camera_.type = mjCAMERA_FREE;
    camera_.lookat[2] = filming.lookat_z;
    camera_.distance = filming.distance;
    camera_.elevation = filming.elevation;
    camera_.azimuth = 90;
  }

  ~MujocoRenderer() override {
    gl_.make_current();
    mjr_freeContext(&context_);
    mjv_freeScene(&scene_);
  }

  RgbImage render(const std::vector<double>& state) override {
    const mjModel& m = *model_;
    const auto expected = static_cast<size_t>(m.nq + 2 * m.nv + m.na + 3 * m.nbody + 1);
    if (state.size() != expected) {
      throw std::invalid_argument(std::string(filming_.env_id) + " renderer needs a state of " +
                                  std::to_string(expected) + " values, got " + std::to_string(state.size()));
    }
    std::copy_n(state.data(), m.nq, data_->qpos);
    std::copy_n(state.data() + m.nq, m.nv, data_->qvel);
    mj_forward(model_.get(), data_.get());
    if (filming_.track_body > 0) {
      camera_.lookat[0] = data_->xpos[3 * filming_.track_body];
      camera_.lookat[1] = data_->xpos[3 * filming_.track_body + 1];
    }
    gl_.make_current();
    mjv_updateScene(model_.get(), data_.get(), &option_, nullptr, &camera_, mjCAT_ALL, &scene_);
    if (filming_.track_body > 0) add_floor_tiles();
    const mjrRect viewport{0, 0, width_, height_};
    mjr_render(viewport, &scene_, &context_);
    std::vector<unsigned char> bottom_up(static_cast<size_t>(width_) * height_ * 3);
    mjr_readPixels(bottom_up.data(), nullptr, viewport, &context_);
    RgbImage frame(width_, height_);
    const size_t row_bytes = static_cast<size_t>(width_) * 3;
    for (int y = 0; y < height_; ++y) {
      std::copy_n(bottom_up.data() + static_cast<size_t>(height_ - 1 - y) * row_bytes, row_bytes, frame.pixel(0, y));
    }
    return frame;
  }

  double fps() const override { return 1.0 / (model_->opt.timestep * filming_.frame_skip); }

 private:
  // Darker tiles of a checkerboard on the floor around where the camera looks, so that a body
  // the camera follows is seen to move (rlx's assets have a plain floor); tracking cameras only.
  void add_floor_tiles() {
    const double cx = std::floor(camera_.lookat[0] / kTileSize), cy = std::floor(camera_.lookat[1] / kTileSize);
    for (int i = -kTileRadius; i <= kTileRadius; ++i) {
      for (int j = -kTileRadius; j <= kTileRadius; ++j) {
        const auto tx = static_cast<int64_t>(cx) + i, ty = static_cast<int64_t>(cy) + j;
        if (((tx + ty) & 1) != 0 || scene_.ngeom >= scene_.maxgeom) continue;
        mjvGeom* geom = scene_.geoms + scene_.ngeom;
        const mjtNum size[3] = {kTileSize / 2, kTileSize / 2, 0.0005};
        const mjtNum position[3] = {(static_cast<double>(tx) + 0.5) * kTileSize, (static_cast<double>(ty) + 0.5) * kTileSize,
                                    0.0005};
        const float rgba[4] = {0.62f, 0.72f, 0.62f, 1.0f};
        mjv_initGeom(geom, mjGEOM_BOX, size, position, nullptr, rgba);
        geom->category = mjCAT_DECOR;
        ++scene_.ngeom;
      }
    }
  }

  MujocoFilming filming_;
  int width_, height_;
  EglContext gl_;  // before the mjr context, which lives in it
  MjModelPtr model_;
  MjDataPtr data_;
  mjvScene scene_{};
  mjvOption option_{};
  mjvCamera camera_{};
  mjrContext context_{};
};

}  // namespace

std::optional<std::unique_ptr<EnvRenderer>> make_mujoco_renderer(const std::string& env_id, int width, int height) {
  for (const MujocoFilming& filming : kFilmings) {
    if (env_id == filming.env_id) {
      return std::optional<std::unique_ptr<EnvRenderer>>(std::make_unique<MujocoRenderer>(filming, width, height));
    }
  }
  return std::nullopt;
}

}  // namespace rlx
