// A small drawing surface for rlx's plots, in pixels with y pointing down: lines, filled
// polygons and text, drawn by Cairo into a PNG, or written as SVG with the text as <text>
// elements (searchable, selectable). Both measure text with Cairo and DejaVu Sans, so a figure
// is laid out the same in either format.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace rlx {

struct Point {
  double x = 0;
  double y = 0;
};

// An sRGB colour with alpha, each in [0, 1].
struct Color {
  double r = 0;
  double g = 0;
  double b = 0;
  double a = 1;
};

struct Stroke {
  Color color;
  double width = 1;
  std::vector<double> dashes;  // on/off lengths in pixels; empty: solid
};

enum class TextAnchor { kStart, kMiddle, kEnd };

struct TextStyle {
  double size = 12;  // pixels
  bool bold = false;
  Color color;
  TextAnchor anchor = TextAnchor::kStart;
  bool vertical = false;  // rotated a quarter turn counter-clockwise (a y-axis label)
};

// A text's extent when drawn at a baseline point: width, and height above / depth below it.
struct TextExtent {
  double width = 0;
  double ascent = 0;
  double descent = 0;
};

// Where a canvas goes; chosen by the output file's extension.
enum class ImageFormat { kPng, kSvg };

class Canvas {
 public:
  virtual ~Canvas() = default;

  double width() const { return width_; }    // pixels
  double height() const { return height_; }  // pixels

  // Fills the whole canvas with `color`.
  virtual void clear(const Color& color) = 0;
  // Strokes the open path through `points` (nothing for fewer than two).
  virtual void polyline(const std::vector<Point>& points, const Stroke& stroke) = 0;
  // Fills the closed polygon through `points` (nothing for fewer than three).
  virtual void fill_polygon(const std::vector<Point>& points, const Color& color) = 0;
  // Draws `text` (UTF-8, one line) with its baseline at `at`, aligned by style.anchor.
  virtual void text(const std::string& text, const Point& at, const TextStyle& style) = 0;
  // Restricts later drawing to the rectangle, until reset_clip().
  virtual void clip(double x, double y, double w, double h) = 0;
  virtual void reset_clip() = 0;
  // Writes the picture to the file it was opened for; std::runtime_error naming it on failure.
  virtual void save() = 0;

  // The extent `text` would have in `size` pixels (bold or not), unrotated.
  TextExtent measure(const std::string& text, double size, bool bold) const;

 protected:
  Canvas(double width, double height) : width_(width), height_(height) {}

 private:
  double width_;
  double height_;
};

// The format `path`'s extension names (.png, .svg, any case); std::invalid_argument naming the
// path and the extensions known otherwise.
ImageFormat image_format_of(const std::filesystem::path& path);

// A canvas of width x height pixels that save() writes to `path` in `format`.
std::unique_ptr<Canvas> open_canvas(const std::filesystem::path& path, ImageFormat format, int width, int height);

}  // namespace rlx
