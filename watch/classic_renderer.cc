// Classic-control renderers: each draws on a canvas of Gymnasium's size in its units (y up),
// scaled to the frame.
#include "watch/classic_renderer.h"

#include <cairo.h>

#include <cmath>
#include <functional>
#include <stdexcept>

namespace rlx {
namespace {

struct Rgb {
  double r, g, b;
};

constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kPoleBrown{202 / 255.0, 152 / 255.0, 101 / 255.0};
constexpr Rgb kAxleBlue{129 / 255.0, 132 / 255.0, 203 / 255.0};
constexpr Rgb kPendulumRed{204 / 255.0, 77 / 255.0, 77 / 255.0};
constexpr Rgb kLinkCyan{0, 204 / 255.0, 204 / 255.0};
constexpr Rgb kJointYellow{204 / 255.0, 204 / 255.0, 0};
constexpr Rgb kWheelGrey{128 / 255.0, 128 / 255.0, 128 / 255.0};

struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const { cairo_surface_destroy(surface); }
};
struct ContextDeleter {
  void operator()(cairo_t* context) const { cairo_destroy(context); }
};

void set_colour(cairo_t* cr, Rgb colour) { cairo_set_source_rgb(cr, colour.r, colour.g, colour.b); }

void fill_circle(cairo_t* cr, double x, double y, double radius, Rgb colour) {
  cairo_new_sub_path(cr);
  cairo_arc(cr, x, y, radius, 0, 2 * M_PI);
  set_colour(cr, colour);
  cairo_fill(cr);
}

// A bar from (x, y) of `length` along `angle` (radians from +x), `width` wide, round-ended.
void fill_bar(cairo_t* cr, double x, double y, double angle, double length, double width, Rgb colour) {
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, angle);
  const double r = width / 2;
  cairo_new_path(cr);
  cairo_arc(cr, 0, 0, r, M_PI / 2, 3 * M_PI / 2);
  cairo_arc(cr, length, 0, r, -M_PI / 2, M_PI / 2);
  cairo_close_path(cr);
  set_colour(cr, colour);
  cairo_fill(cr);
  cairo_restore(cr);
}

void line(cairo_t* cr, double x0, double y0, double x1, double y1, double width, Rgb colour) {
  cairo_new_path(cr);
  cairo_move_to(cr, x0, y0);
  cairo_line_to(cr, x1, y1);
  cairo_set_line_width(cr, width);
  set_colour(cr, colour);
  cairo_stroke(cr);
}

void require_size(const std::string& env_id, const std::vector<double>& state, size_t size) {
  if (state.size() != size) {
    throw std::invalid_argument(env_id + " renderer needs a state of " + std::to_string(size) + " values, got " +
                                std::to_string(state.size()));
  }
}

// CartPole-v1: [x, x_dot, theta, theta_dot] on a 600 x 400 canvas, 125 pixels a metre.
void draw_cart_pole(cairo_t* cr, const std::vector<double>& s) {
  constexpr double kScale = 600.0 / 4.8;
  constexpr double kCartY = 100, kCartWidth = 50, kCartHeight = 30, kPoleWidth = 10, kPoleLength = kScale * 1.0;
  const double cart_x = s[0] * kScale + 300;
  line(cr, 0, kCartY, 600, kCartY, 1, kBlack);
  cairo_rectangle(cr, cart_x - kCartWidth / 2, kCartY - kCartHeight / 2, kCartWidth, kCartHeight);
  set_colour(cr, kBlack);
  cairo_fill(cr);
  const double axle_y = kCartY + kCartHeight / 4;
  fill_bar(cr, cart_x, axle_y, M_PI / 2 - s[2], kPoleLength - kPoleWidth / 2, kPoleWidth, kPoleBrown);
  fill_circle(cr, cart_x, axle_y, kPoleWidth / 2, kAxleBlue);
}

// Pendulum-v1: [theta, theta_dot], theta 0 upright, on a 500 x 500 canvas spanning 4.4 units.
void draw_pendulum(cairo_t* cr, const std::vector<double>& s) {
  constexpr double kScale = 500.0 / 4.4;
  fill_bar(cr, 250, 250, M_PI / 2 + s[0], kScale * 1.0, 0.2 * kScale, kPendulumRed);
  fill_circle(cr, 250, 250, 0.05 * kScale, kBlack);
}

// Acrobot-v1: [theta1, theta2, ...], both links 1 unit, hanging down at 0; the target line at
// height 1 above the pivot. A 500 x 500 canvas spanning 4.4 units.
void draw_acrobot(cairo_t* cr, const std::vector<double>& s) {
  constexpr double kScale = 500.0 / 4.4;
  line(cr, 250 - 2.2 * kScale, 250 + kScale, 250 + 2.2 * kScale, 250 + kScale, 1, kBlack);
  const double a1 = s[0] - M_PI / 2, a2 = s[0] + s[1] - M_PI / 2;
  const double x1 = 250 + kScale * std::cos(a1), y1 = 250 + kScale * std::sin(a1);
  fill_bar(cr, 250, 250, a1, kScale, 0.2 * kScale, kLinkCyan);
  fill_bar(cr, x1, y1, a2, kScale, 0.2 * kScale, kLinkCyan);
  fill_circle(cr, 250, 250, 0.1 * kScale, kJointYellow);
  fill_circle(cr, x1, y1, 0.1 * kScale, kJointYellow);
}

// MountainCar-v0 and MountainCarContinuous-v0: [position, velocity] on y = 0.45 sin(3x) + 0.55,
// x in [-1.2, 0.6], a 600 x 400 canvas; the flag at `goal`.
void draw_mountain_car(cairo_t* cr, const std::vector<double>& s, double goal) {
  constexpr double kMin = -1.2, kScale = 600.0 / 1.8, kClearance = 10, kCarWidth = 40, kCarHeight = 20;
  const auto height = [](double x) { return 0.45 * std::sin(3 * x) + 0.55; };
  cairo_new_path(cr);
  for (int i = 0; i <= 100; ++i) {
    const double x = kMin + 1.8 * i / 100;
    cairo_line_to(cr, (x - kMin) * kScale, height(x) * kScale);
  }
  cairo_set_line_width(cr, 2);
  set_colour(cr, kBlack);
  cairo_stroke(cr);

  const double position = s[0];
  cairo_save(cr);
  cairo_translate(cr, (position - kMin) * kScale, kClearance + height(position) * kScale);
  cairo_rotate(cr, std::cos(3 * position));  // Gymnasium's tilt of the car
  cairo_rectangle(cr, -kCarWidth / 2, 0, kCarWidth, kCarHeight);
  set_colour(cr, kBlack);
  cairo_fill(cr);
  fill_circle(cr, kCarWidth / 4, 0, kCarHeight / 2.5, kWheelGrey);
  fill_circle(cr, -kCarWidth / 4, 0, kCarHeight / 2.5, kWheelGrey);
  cairo_restore(cr);

  const double flag_x = (goal - kMin) * kScale, flag_y = height(goal) * kScale;
  line(cr, flag_x, flag_y, flag_x, flag_y + 50, 1, kBlack);
  cairo_new_path(cr);
  cairo_move_to(cr, flag_x, flag_y + 50);
  cairo_line_to(cr, flag_x, flag_y + 40);
  cairo_line_to(cr, flag_x + 25, flag_y + 45);
  cairo_close_path(cr);
  set_colour(cr, kJointYellow);
  cairo_fill(cr);
}

class ClassicRenderer : public EnvRenderer {
 public:
  using Draw = std::function<void(cairo_t*, const std::vector<double>&)>;

  ClassicRenderer(std::string env_id, int canvas_width, int canvas_height, int width, int height, size_t state_size,
                  double fps, Draw draw)
      : env_id_(std::move(env_id)),
        canvas_width_(canvas_width),
        canvas_height_(canvas_height),
        width_(width > 0 ? width : canvas_width),
        height_(height > 0 ? height : canvas_height),
        state_size_(state_size),
        fps_(fps),
        draw_(std::move(draw)) {}

  RgbImage render(const std::vector<double>& state) override {
    require_size(env_id_, state, state_size_);
    std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, width_, height_));
    std::unique_ptr<cairo_t, ContextDeleter> context(cairo_create(surface.get()));
    cairo_t* cr = context.get();
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    // The canvas's units, y up (Gymnasium draws with y up and flips the picture).
    cairo_scale(cr, static_cast<double>(width_) / canvas_width_, static_cast<double>(height_) / canvas_height_);
    cairo_translate(cr, 0, canvas_height_);
    cairo_scale(cr, 1, -1);
    draw_(cr, state);
    cairo_surface_flush(surface.get());

    RgbImage frame(width_, height_);
    const unsigned char* data = cairo_image_surface_get_data(surface.get());
    const int stride = cairo_image_surface_get_stride(surface.get());
    for (int y = 0; y < height_; ++y) {
      const auto* row = reinterpret_cast<const uint32_t*>(data + static_cast<size_t>(y) * stride);
      for (int x = 0; x < width_; ++x) {
        uint8_t* out = frame.pixel(x, y);
        out[0] = static_cast<uint8_t>((row[x] >> 16) & 0xFF);
        out[1] = static_cast<uint8_t>((row[x] >> 8) & 0xFF);
        out[2] = static_cast<uint8_t>(row[x] & 0xFF);
      }
    }
    return frame;
  }

  double fps() const override { return fps_; }

 private:
  std::string env_id_;
  int canvas_width_, canvas_height_, width_, height_;
  size_t state_size_;
  double fps_;
  Draw draw_;
};

}  // namespace

std::optional<std::unique_ptr<EnvRenderer>> make_classic_renderer(const std::string& env_id, int width, int height) {
  const auto make = [&](int canvas_width, int canvas_height, size_t state_size, double fps, ClassicRenderer::Draw draw) {
    return std::optional<std::unique_ptr<EnvRenderer>>(std::make_unique<ClassicRenderer>(
        env_id, canvas_width, canvas_height, width, height, state_size, fps, std::move(draw)));
  };
  // The NoVel variants (envs/classic/mask_velocity.h) snapshot as their base envs do and look alike.
  if (env_id == "CartPole-v1" || env_id == "CartPoleNoVel-v1") return make(600, 400, 4, 50, draw_cart_pole);
  if (env_id == "Pendulum-v1" || env_id == "PendulumNoVel-v1") return make(500, 500, 2, 30, draw_pendulum);
  if (env_id == "Acrobot-v1") return make(500, 500, 4, 15, draw_acrobot);
  if (env_id == "MountainCar-v0") {
    return make(600, 400, 2, 30, [](cairo_t* cr, const std::vector<double>& s) { draw_mountain_car(cr, s, 0.5); });
  }
  if (env_id == "MountainCarContinuous-v0" || env_id == "MountainCarContinuousNoVel-v0") {
    return make(600, 400, 2, 30, [](cairo_t* cr, const std::vector<double>& s) { draw_mountain_car(cr, s, 0.45); });
  }
  return std::nullopt;
}

}  // namespace rlx
