#!/usr/bin/env bash
# GPU check of the data-parallel learners, for a machine with NVIDIA GPUs and PyTorch (a CUDA
# build) installed: configures and builds rlx against PyTorch's LibTorch in build-gpu/, runs the
# [gpu] tests and `rlx bench learner --device cuda` with 1 learner (and 2 with >1 GPU) in fp32,
# bf16 and fp16, printing the figures to stdout.
#   scripts/gpu-check.sh [--prefix DIR] [--build-dir DIR] [--jobs N]
# --prefix DIR (or RLX_DEPS_PREFIX): Debian packages unpacked with `dpkg -x PKG.deb DIR` (Boost,
# ZeroMQ/cppzmq, nlohmann-json, Catch2, MuJoCo, ...) when they are not installed system-wide.
# The C++ ABI must match PyTorch's (torch.compiled_with_cxx11_abi(); PyTorch >= 2.7 wheels use
# the new ABI, like Debian's libraries); with an old-ABI wheel the link against Debian's Boost
# and ZeroMQ fails, and the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="${RLX_DEPS_PREFIX:-}"
build_dir=build-gpu
jobs="$(nproc 2>/dev/null || echo 4)"
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "gpu-check.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done

say() { echo "gpu-check: $*" >&2; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader >&2 || say "nvidia-smi not found"
python=${PYTHON:-python3}
torch_prefix="$("$python" -c 'import torch;print(torch.utils.cmake_prefix_path)')" || { say "PyTorch not importable by $python"; exit 1; }
torch_info="$("$python" -c 'import torch;print(torch.__version__, torch.version.cuda, torch.cuda.device_count(), int(torch.compiled_with_cxx11_abi()))')"
read -r torch_version torch_cuda gpus cxx11_abi <<<"$torch_info"
say "PyTorch $torch_version (CUDA $torch_cuda), $gpus GPU(s) visible, cxx11 ABI $cxx11_abi"
[ "$cxx11_abi" = 1 ] || say "warning: this PyTorch uses the pre-C++11 ABI; linking against system C++ libraries will likely fail"

cmake_prefix="$torch_prefix"
extra_flags=()
if [ -n "$prefix" ]; then
  prefix="$(cd "$prefix" && pwd)"
  cmake_prefix="$torch_prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake;$prefix/usr/share"
  extra_flags+=("-DCMAKE_INCLUDE_PATH=$prefix/usr/include" "-DCMAKE_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu")
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
# nvcc and NCCL: the CUDA toolkit if present, else the nvidia-* pip packages next to torch.
cuda_root="${CUDA_HOME:-/usr/local/cuda}"
[ -d "$cuda_root" ] && extra_flags+=("-DCUDAToolkit_ROOT=$cuda_root")
nccl_home="$("$python" -c 'import os,nvidia.nccl as n;print(os.path.dirname(n.__file__))' 2>/dev/null || true)"
if [ -n "$nccl_home" ] && [ ! -f "$cuda_root/include/nccl.h" ]; then
  export NCCL_HOME="$nccl_home"
  [ -f "$nccl_home/lib/libnccl.so" ] || ln -sf "$(ls "$nccl_home"/lib/libnccl.so.* | head -1)" "$nccl_home/lib/libnccl.so" 2>/dev/null || true
  export LD_LIBRARY_PATH="$nccl_home/lib:${LD_LIBRARY_PATH:-}"
fi

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$cmake_prefix" "${extra_flags[@]}" >&2
grep -q "RLX_WITH_NCCL:INTERNAL=ON\|NCCL backend on" "$build_dir/CMakeCache.txt" 2>/dev/null || say "(see the configure output for whether the NCCL backend is on)"
cmake --build "$build_dir" -j "$jobs" --target rlx rlx_learner_tests >&2

echo "== [gpu] tests"
"$build_dir/tests/rlx_learner_tests" "[gpu]" --success --reporter compact | tail -n 20
if [ "${gpus:-0}" -gt 1 ]; then
  echo "== rlx bench learner --device cuda --learners 1,2 --precision fp32,bf16,fp16"
  "$build_dir/rlx" bench learner --device cuda --learners 1,2 --precision fp32,bf16,fp16
else
  echo "== rlx bench learner --device cuda --learners 1 --precision fp32,bf16,fp16 (one GPU: no --learners 2)"
  "$build_dir/rlx" bench learner --device cuda --learners 1 --precision fp32,bf16,fp16
fi
echo "== rlx bench learner --device cpu --learners 1 (same machine, for comparison)"
"$build_dir/rlx" bench learner --device cpu --learners 1
