// An OpenGL context with no window and no display server: EGL on Mesa's surfaceless platform.
#pragma once

namespace rlx {

class EglContext {
 public:
  // Opens the surfaceless display, creates a desktop OpenGL context and makes it current on
  // this thread. std::runtime_error naming the EGL call and its error code when one fails.
  EglContext();
  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  // Makes the context current on the calling thread (std::runtime_error when it cannot).
  void make_current() const;

 private:
  void* display_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace rlx
