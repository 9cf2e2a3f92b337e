#include "watch/canvas.h"

#include <cairo.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rlx {

namespace {

constexpr const char* kFontFamily = "DejaVu Sans";

struct SurfaceDeleter {
  void operator()(cairo_surface_t* surface) const { cairo_surface_destroy(surface); }
};
struct ContextDeleter {
  void operator()(cairo_t* context) const { cairo_destroy(context); }
};
using SurfacePtr = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;
using ContextPtr = std::unique_ptr<cairo_t, ContextDeleter>;

void set_font(cairo_t* cr, double size, bool bold) {
  cairo_select_font_face(cr, kFontFamily, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// A 1x1 surface's context, only for measuring text.
cairo_t* measuring_context() {
  static SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1));
  static ContextPtr context(cairo_create(surface.get()));
  return context.get();
}

double anchor_shift(TextAnchor anchor, double width) {
  switch (anchor) {
    case TextAnchor::kStart: return 0;
    case TextAnchor::kMiddle: return -width / 2;
    case TextAnchor::kEnd: return -width;
  }
  return 0;
}

// Cairo into an ARGB image, written as PNG.
class PngCanvas : public Canvas {
 public:
  PngCanvas(std::filesystem::path path, int width, int height)
      : Canvas(width, height),
        path_(std::move(path)),
        surface_(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height)),
        cr_(cairo_create(surface_.get())) {
    if (cairo_status(cr_.get()) != CAIRO_STATUS_SUCCESS) {
      throw std::runtime_error("cannot create a " + std::to_string(width) + "x" + std::to_string(height) + " image");
    }
    cairo_set_line_join(cr_.get(), CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr_.get(), CAIRO_LINE_CAP_BUTT);
  }

  void clear(const Color& color) override {
    set_color(color);
    cairo_paint(cr_.get());
  }

  void polyline(const std::vector<Point>& points, const Stroke& stroke) override {
    if (points.size() < 2) return;
    path(points);
    set_color(stroke.color);
    cairo_set_line_width(cr_.get(), stroke.width);
    cairo_set_dash(cr_.get(), stroke.dashes.data(), static_cast<int>(stroke.dashes.size()), 0);
    cairo_stroke(cr_.get());
  }

  void fill_polygon(const std::vector<Point>& points, const Color& color) override {
    if (points.size() < 3) return;
    path(points);
    cairo_close_path(cr_.get());
    set_color(color);
    cairo_fill(cr_.get());
  }

  void text(const std::string& text, const Point& at, const TextStyle& style) override {
    cairo_t* cr = cr_.get();
    cairo_save(cr);
    set_font(cr, style.size, style.bold);
    set_color(style.color);
    cairo_translate(cr, at.x, at.y);
    if (style.vertical) cairo_rotate(cr, -M_PI / 2);
    cairo_text_extents_t extents;
    cairo_text_extents(cr, text.c_str(), &extents);
    cairo_move_to(cr, anchor_shift(style.anchor, extents.x_advance), 0);
    cairo_show_text(cr, text.c_str());
    cairo_restore(cr);
  }

  void clip(double x, double y, double w, double h) override {
    cairo_reset_clip(cr_.get());
    cairo_rectangle(cr_.get(), x, y, w, h);
    cairo_clip(cr_.get());
  }

  void reset_clip() override { cairo_reset_clip(cr_.get()); }

  void save() override {
    cairo_surface_flush(surface_.get());
    const cairo_status_t status = cairo_surface_write_to_png(surface_.get(), path_.c_str());
    if (status != CAIRO_STATUS_SUCCESS) {
      throw std::runtime_error("cannot write " + path_.string() + ": " + cairo_status_to_string(status));
    }
  }

 private:
  void set_color(const Color& c) { cairo_set_source_rgba(cr_.get(), c.r, c.g, c.b, c.a); }

  void path(const std::vector<Point>& points) {
    cairo_new_path(cr_.get());
    cairo_move_to(cr_.get(), points[0].x, points[0].y);
    for (size_t i = 1; i < points.size(); ++i) cairo_line_to(cr_.get(), points[i].x, points[i].y);
  }

  std::filesystem::path path_;
  SurfacePtr surface_;
  ContextPtr cr_;
};

std::string svg_color(const Color& c) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", static_cast<int>(std::lround(c.r * 255)),
                static_cast<int>(std::lround(c.g * 255)), static_cast<int>(std::lround(c.b * 255)));
  return buffer;
}

std::string svg_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_points(const std::vector<Point>& points) {
  std::string out;
  for (const Point& p : points) out += (out.empty() ? "" : " ") + svg_number(p.x) + "," + svg_number(p.y);
  return out;
}

// SVG written element by element; text stays text.
class SvgCanvas : public Canvas {
 public:
  SvgCanvas(std::filesystem::path path, int width, int height) : Canvas(width, height), path_(std::move(path)) {}

  void clear(const Color& color) override {
    body_ << "<rect x=\"0\" y=\"0\" width=\"" << width() << "\" height=\"" << height() << "\"" << fill(color) << "/>\n";
  }

  void polyline(const std::vector<Point>& points, const Stroke& stroke) override {
    if (points.size() < 2) return;
    body_ << "<polyline fill=\"none\" stroke=\"" << svg_color(stroke.color) << "\" stroke-width=\""
          << svg_number(stroke.width) << "\" stroke-linejoin=\"round\"";
    if (stroke.color.a < 1) body_ << " stroke-opacity=\"" << svg_number(stroke.color.a) << "\"";
    if (!stroke.dashes.empty()) {
      body_ << " stroke-dasharray=\"";
      for (size_t i = 0; i < stroke.dashes.size(); ++i) body_ << (i ? "," : "") << svg_number(stroke.dashes[i]);
      body_ << "\"";
    }
    body_ << " points=\"" << svg_points(points) << "\"/>\n";
  }

  void fill_polygon(const std::vector<Point>& points, const Color& color) override {
    if (points.size() < 3) return;
    body_ << "<polygon" << fill(color) << " points=\"" << svg_points(points) << "\"/>\n";
  }

  void text(const std::string& text, const Point& at, const TextStyle& style) override {
    static const char* const kAnchors[] = {"start", "middle", "end"};
    body_ << "<text x=\"" << svg_number(at.x) << "\" y=\"" << svg_number(at.y) << "\" font-family=\"" << kFontFamily
          << ", sans-serif\" font-size=\"" << svg_number(style.size) << "\"" << fill(style.color) << " text-anchor=\""
          << kAnchors[static_cast<int>(style.anchor)] << "\"";
    if (style.bold) body_ << " font-weight=\"bold\"";
    if (style.vertical) body_ << " transform=\"rotate(-90 " << svg_number(at.x) << " " << svg_number(at.y) << ")\"";
    body_ << ">" << xml_escaped(text) << "</text>\n";
  }

  void clip(double x, double y, double w, double h) override {
    reset_clip();
    const std::string id = "clip" + std::to_string(++clips_);
    body_ << "<clipPath id=\"" << id << "\"><rect x=\"" << svg_number(x) << "\" y=\"" << svg_number(y) << "\" width=\""
          << svg_number(w) << "\" height=\"" << svg_number(h) << "\"/></clipPath>\n<g clip-path=\"url(#" << id << ")\">\n";
    clipped_ = true;
  }

  void reset_clip() override {
    if (clipped_) body_ << "</g>\n";
    clipped_ = false;
  }

  void save() override {
    reset_clip();
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width()
        << "\" height=\"" << height() << "\" viewBox=\"0 0 " << width() << " " << height() << "\">\n"
        << body_.str() << "</svg>\n";
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path_.string());
  }

 private:
  static std::string fill(const Color& color) {
    std::string out = " fill=\"" + svg_color(color) + "\"";
    if (color.a < 1) out += " fill-opacity=\"" + svg_number(color.a) + "\"";
    return out;
  }

  std::filesystem::path path_;
  std::ostringstream body_;
  int clips_ = 0;
  bool clipped_ = false;
};

}  // namespace

TextExtent Canvas::measure(const std::string& text, double size, bool bold) const {
  cairo_t* cr = measuring_context();
  set_font(cr, size, bold);
  cairo_text_extents_t text_extents;
  cairo_text_extents(cr, text.c_str(), &text_extents);
  cairo_font_extents_t font_extents;
  cairo_font_extents(cr, &font_extents);
  return {text_extents.x_advance, font_extents.ascent, font_extents.descent};
}

ImageFormat image_format_of(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".png") return ImageFormat::kPng;
  if (extension == ".svg") return ImageFormat::kSvg;
  throw std::invalid_argument("'" + path.string() + "': unknown image format '" + extension +
                              "'; the output's name must end in .png or .svg");
}

std::unique_ptr<Canvas> open_canvas(const std::filesystem::path& path, ImageFormat format, int width, int height) {
  if (format == ImageFormat::kSvg) return std::make_unique<SvgCanvas>(path, width, height);
  return std::make_unique<PngCanvas>(path, width, height);
}

}  // namespace rlx
