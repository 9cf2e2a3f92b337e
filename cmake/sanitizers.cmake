# RLX_SANITIZE=ON builds every target that follows with AddressSanitizer and
# UndefinedBehaviorSanitizer (any UB report aborts). Include from the root CMakeLists.txt
# before the add_subdirectory() calls; scripts/sanitizer-tests.sh uses it.
option(RLX_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
if(RLX_SANITIZE)
  set(RLX_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_compile_options(${RLX_SANITIZER_FLAGS})
  add_link_options(${RLX_SANITIZER_FLAGS})
endif()
