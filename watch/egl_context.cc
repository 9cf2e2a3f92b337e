// EglContext: eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA) and a context without
// surfaces (EGL_KHR_surfaceless_context); MuJoCo renders into its own framebuffer object.
#include "watch/egl_context.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace rlx {
namespace {

[[noreturn]] void throw_egl(const std::string& call) {
  std::ostringstream message;
  message << "offscreen rendering: " << call << " failed (EGL error 0x" << std::hex << eglGetError()
          << "); rendering MuJoCo envs needs Mesa's EGL (Debian: libegl1 libegl-mesa0 libgl1-mesa-dri)";
  throw std::runtime_error(message.str());
}

}  // namespace

EglContext::EglContext() {
  const auto get_platform_display =
      reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (get_platform_display == nullptr) throw_egl("eglGetProcAddress(eglGetPlatformDisplayEXT)");
  EGLDisplay display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  if (display == EGL_NO_DISPLAY) throw_egl("eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)");
  EGLint major = 0, minor = 0;
  if (eglInitialize(display, &major, &minor) != EGL_TRUE) throw_egl("eglInitialize");
  display_ = display;
  try {
    // Surfaceless Mesa offers pbuffer configs only (the default surface type, window, has none).
    const EGLint attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                 EGL_RED_SIZE,     8,               EGL_GREEN_SIZE,      8,
                                 EGL_BLUE_SIZE,    8,               EGL_DEPTH_SIZE,      24,
                                 EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (eglChooseConfig(display, attributes, &config, 1, &count) != EGL_TRUE || count < 1) {
      throw_egl("eglChooseConfig(EGL_OPENGL_BIT)");
    }
    if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) throw_egl("eglBindAPI(EGL_OPENGL_API)");
    EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, nullptr);
    if (context == EGL_NO_CONTEXT) throw_egl("eglCreateContext");
    context_ = context;
    make_current();
  } catch (const std::runtime_error&) {
    if (context_ != nullptr) eglDestroyContext(display, context_);
    throw;
  }
}

EglContext::~EglContext() {
  eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(display_, context_);
  // The display stays initialized: it is one per process, and eglTerminate would pull it from
  // under any other EglContext alive (EGL counts no references to it).
}

void EglContext::make_current() const {
  if (eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_) != EGL_TRUE) throw_egl("eglMakeCurrent");
}

}  // namespace rlx
