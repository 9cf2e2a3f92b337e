#!/usr/bin/env bash
# Builds the tests of the code that reads the network with AddressSanitizer +
# UndefinedBehaviorSanitizer (-DRLX_SANITIZE=ON, cmake/sanitizers.cmake) in their own build dir
# and runs them. Only rlx_transport_tests, rlx_bench_transport_tests (the synthetic worker fleet,
# the transport and scale benchmarks), rlx_serve_tests (rlx serve's endpoints, batching and
# request decoding) and what they link are built: no LibTorch code is compiled.
#   scripts/sanitizer-tests.sh [--build-dir DIR] [CATCH2 ARGS...]
set -euo pipefail

cd "$(dirname "$0")/.."
build_dir=build-asan
if [ "${1:-}" = "--build-dir" ]; then
  build_dir="$2"
  shift 2
fi
case "${1:-}" in
  -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
esac

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRLX_SANITIZE=ON -DRLX_BUILD_TESTS=ON >/dev/null
# Fail loudly rather than run unsanitized tests if the option is not wired into the build.
if ! grep -q -- '-fsanitize=address,undefined' "$build_dir/compile_commands.json"; then
  echo "sanitizer-tests: RLX_SANITIZE had no effect; is include(cmake/sanitizers.cmake) in CMakeLists.txt?" >&2
  exit 1
fi
cmake --build "$build_dir" --target rlx_transport_tests rlx_bench_transport_tests rlx_serve_tests

# ASan keeps freed blocks in a quarantine (256 MiB by default) to catch use-after-free; the
# hostile-peer flood test bounds resident memory growth at 128 MiB, which a full quarantine of
# freed ZeroMQ buffers alone exceeds. 16 MiB still holds the most recent frees.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:quarantine_size_mb=16}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
"$build_dir/tests/rlx_transport_tests" "[transport]" "$@"
"$build_dir/tests/rlx_bench_transport_tests" "[transport]" "$@"
"$build_dir/tests/rlx_serve_tests" "[serve]" "$@"
