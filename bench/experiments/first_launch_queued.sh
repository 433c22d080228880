#!/bin/bash
# Builds and runs first_launch_queued.cu (bench/NOTES.md run 39) in a scratch folder: 60 one-kernel
# modules, lazy module loading (the default) and then eager.
set -e
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
cd "$work"
for i in $(seq 0 59); do
  if [ "$i" -lt 40 ]; then
    echo "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = p[threadIdx.x] * 0.5f + $((i * 7919)).0f; }" > "m$i.cu"
  else
    { echo "extern \"C\" __global__ void k(float *p) { float v = p[threadIdx.x];"
      for j in $(seq 1 400); do echo "  v = v * 0.999f + p[(threadIdx.x + $j) & 255] * $((i * 31 + j)).0f;"; done
      echo "  p[threadIdx.x] = v; }"; } > "m$i.cu"
  fi
  nvcc -cubin -arch=sm_90 -O3 -o "m$i.cubin" "m$i.cu" &
  if [ $((i % 16)) -eq 15 ]; then wait; fi
done
wait
nvcc -cubin -arch=sm_90 -o spin.cubin "$here/first_launch_queued.cu"
nvcc -O2 -o first_launch_queued "$here/first_launch_queued.cu" -lcuda
./first_launch_queued
CUDA_MODULE_LOADING=EAGER ./first_launch_queued | sed 's/^/eager /'
