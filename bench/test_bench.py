#!/usr/bin/env python3
"""Unit tests of bench/bench.py's parsing and checking (run by bench/selftest.sh)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

SIM_STATS = """\
=== yosegi stats ===
kernel                                     launches      time (ms)
jacobi_l109                                       5        198.562
jacobi_l132                                       5         27.344
global memory transactions (32B sectors)                   158570
host->device transfers                                          7
"""

# The cuda device adds one row after the counters (src/runtime/stats.rs on the cuda branch).
CUDA_STATS = SIM_STATS + "kernel time on the device (ms)                             12.500\n"


class ParseStats(unittest.TestCase):
    def test_kernel_rows_without_device_time(self):
        kernels, device_ms = bench.parse_stats("program noise 1 2.0\n" + SIM_STATS)
        self.assertEqual(kernels, {"jacobi_l109": (5, 198.562), "jacobi_l132": (5, 27.344)})
        self.assertIsNone(device_ms)

    def test_device_time_row(self):
        kernels, device_ms = bench.parse_stats(CUDA_STATS)
        self.assertEqual(len(kernels), 2)
        self.assertEqual(device_ms, 12.5)

    def test_no_table(self):
        self.assertEqual(bench.parse_stats("yosegi: error\n"), ({}, None))


class Compare(unittest.TestCase):
    def case(self):
        return bench.diffusion1d(64, 10)

    def test_within_tolerance(self):
        ok, detail = bench.compare(self.case(), "heat: 0.3333333333, u(1/3): 0.5\n",
                                   "x\nheat: 0.3333333334, u(1/3): 0.5\n")
        self.assertTrue(ok, detail)

    def test_outside_tolerance(self):
        ok, detail = bench.compare(self.case(), "heat: 0.3333, u(1/3): 0.5\n", "heat: 0.3334, u(1/3): 0.5\n")
        self.assertFalse(ok)
        self.assertIn("0.3334", detail)

    def test_missing_line(self):
        ok, detail = bench.compare(self.case(), "nothing\n", "heat: 1, u(1/3): 2\n")
        self.assertFalse(ok)
        self.assertIn("missing from yosegi", detail)

    def test_exact_iteration_count(self):
        case = bench.cg(8, 6)
        ok, _ = bench.compare(case, "iterations: 6, residual: 1.0e-3, relative: 1e-4\nx sum: 2.0\n",
                              "iterations: 7, residual: 1.0e-3, relative: 1e-4\nx sum: 2.0\n")
        self.assertFalse(ok)

    def test_exponent_numbers(self):
        self.assertEqual(bench.numbers(" Gosa : 9.752239e-03 "), [9.752239e-03])


class Models(unittest.TestCase):
    def test_himeno_points_and_bytes(self):
        case = bench.himeno("M", 100)
        self.assertEqual(case.points, 126 * 126 * 254)
        self.assertEqual(case.steps, 103)
        self.assertEqual(case.bytes_per_step, 64 * case.points)

    def test_cg_bytes(self):
        case = bench.cg(4, 1)
        rows, nnz = 16, 5 * 16 - 16
        self.assertEqual(case.bytes_per_step, nnz * 12 + rows * 20 + rows * 88)

    def test_xl_patch_adds_branch_before_l(self):
        with open(os.path.join(bench.REPO, "examples/himeno.c")) as f:
            text = bench.himeno_xl_patch(f.read())
        self.assertIsNotNone(text)
        self.assertLess(text.index("defined(SIZE_XL)"), text.index("defined(SIZE_L)"))
        self.assertIn("#define MKMAX 1025", text)

    def test_himeno_reference_sums_gosa_in_double(self):
        with open(os.path.join(bench.REPO, "examples/himeno.c")) as f:
            text = bench.himeno_exact_gosa(f.read())
        self.assertIsNotNone(text)
        self.assertIn("double gosa = 0.0;", text)
        self.assertNotIn("float gosa = 0.0f;", text)

    def test_xl_patch_refuses_unknown_shape(self):
        self.assertIsNone(bench.himeno_xl_patch("#define MIMAX 3\n"))


if __name__ == "__main__":
    unittest.main()
