#!/usr/bin/env python3
"""Device-to-device copy bandwidth, the ceiling a streaming kernel can hope for: two buffers of
--gib GiB each, one warm-up copy, then the median of --reps copies timed with CUDA events;
bytes read + bytes written per copy. Prints `ceiling_gbs <value> <method>` on its last line.
Uses PyTorch, else CuPy; exits 3 when neither works (run.sh then tries nvcc)."""

import argparse
import statistics
import sys


def with_torch(nbytes, reps):
    import torch
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    src.fill_(1)
    dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3)
    return times, f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}"


def with_cupy(nbytes, reps):
    import cupy
    src = cupy.ones(nbytes, dtype=cupy.uint8)
    dst = cupy.empty_like(src)
    dst[...] = src
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        dst[...] = src
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e-3)
    return times, f"cupy {cupy.__version__}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--reps", type=int, default=20)
    opts = ap.parse_args()
    nbytes = int(opts.gib * (1 << 30))
    for backend in (with_torch, with_cupy):
        try:
            times, method = backend(nbytes, opts.reps)
        except ImportError:
            continue
        except Exception as e:  # a library that imports but cannot reach the GPU: try the next
            print(f"{backend.__name__}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        median = statistics.median(times)
        gbs = 2 * nbytes / median * 1e-9
        print(f"copy {opts.gib:g} GiB x {opts.reps}: median {median * 1e3:.3f} ms, "
              f"min {min(times) * 1e3:.3f} ms, max {max(times) * 1e3:.3f} ms")
        print(f"ceiling_gbs {gbs:.1f} {method}, {opts.gib:g} GiB device-to-device copy, read+write counted")
        return 0
    print("neither torch nor cupy could measure the copy", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
