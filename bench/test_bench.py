#!/usr/bin/env python3
"""Unit tests of bench/bench.py's parsing and checking (run by bench/selftest.sh)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

SIM_STATS = """\
=== yosegi stats ===
kernel                                     launches      host (ms)
jacobi_l109                                       5        198.562
jacobi_l132                                       5         27.344
global memory transactions (32B sectors)                   158570
host->device transfers                                          7
"""

# The cuda device adds one row after the counters (crates/yosegi-rt/src/runtime/stats.rs on the
# cuda branch).
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


class StagingCases(unittest.TestCase):
    def test_new_programs_are_in_both_size_sets(self):
        for sizes in ("tiny", "full"):
            programs = {c.program for c in bench.size_set(sizes)}
            self.assertIn("matmul_vec", programs, sizes)
            self.assertIn("diffusion_wide", programs, sizes)
            self.assertIn("wide_stencil_f32", programs, sizes)
            self.assertIn("row_scan", programs, sizes)
        for case in bench.size_set("full"):
            self.assertTrue(os.path.exists(os.path.join(bench.REPO, case.source)), case.source)

    def test_matmul_vec_model(self):
        case = bench.matmul_vec(1000, 10, 3)
        self.assertEqual(case.steps, 3)
        self.assertEqual(case.flops_per_step, 2 * 1000 * 10)
        self.assertEqual(case.bytes_per_step, 4 * 1000 * 10 + 8 * 1000 + 4 * 10)
        self.assertEqual(case.args, ["1000", "10", "3"])

    def test_row_scan_model(self):
        case = bench.row_scan(1000, 4)
        self.assertEqual(case.steps, 4)
        self.assertEqual(case.bytes_per_step, 2 * 4 * 32 * 1000, "a read and b written, 32 floats per row")
        self.assertEqual(case.defines, ["ROWS=1000"])
        self.assertEqual(case.args, ["4"])

    def test_diffusion_wide_model(self):
        case = bench.diffusion_wide(1000, 5)
        self.assertEqual(case.points, 1000 - 16)
        self.assertEqual(case.bytes_per_step, 16 * (1000 - 16))

    def test_seed_experiment_sizes_and_ratios(self):
        cases = bench.seed_cases()
        self.assertEqual([c.size for c in cases], ["8192", "16384", "32768", "65536"])
        self.assertTrue(all(c.steps == 1000 for c in cases))
        self.assertIn("27.1-60.5%", bench.seed_ratio(cases[0]))
        self.assertIsNone(bench.seed_ratio(bench.diffusion1d(1 << 26, 200)))
        self.assertIsNone(bench.seed_ratio(bench.diffusion_wide(8192, 1000)))

    def test_command_passes_the_staging_mode(self):
        case = bench.diffusion1d(64, 10)
        with_mode = bench.yosegi_command("yosegi", "sim", case, "x.c", "off")
        self.assertEqual(with_mode[:7], ["yosegi", "run", "--device", "sim", "--stats", "--staging", "off"])
        self.assertEqual(with_mode[-4:], ["x.c", "--", "64", "10"])
        self.assertNotIn("--staging", bench.yosegi_command("yosegi", "sim", case, "x.c"))


def compare_row(mode, ms, check="PASS", staged=(), kept=(), seed=None):
    return {"program": "diffusion1d", "size": "8192", "staging": mode, "check": check, "detail": "",
            "wall_ms_per_step": ms, "device_ms_per_step": None, "staged_kernels": list(staged),
            "kept_staged": list(kept), "seed_ratio": seed}


class StagingTable(unittest.TestCase):
    def test_speedups_and_seed_column(self):
        seed = bench.SEED_DIFFUSION_RATIOS
        rows = [compare_row("off", 2.0, seed=seed), compare_row("auto", 1.0, staged=["k_staged"], kept=["k_staged"], seed=seed),
                compare_row("on", 4.0, staged=["k_staged"], seed=seed)]
        lines = bench.staging_table(rows).splitlines()
        self.assertEqual(len(lines), 3)
        cells = [c.strip() for c in lines[2].strip("|").split("|")]
        self.assertEqual(cells[:5], ["diffusion1d", "8192", "2.0000", "1.0000", "4.0000"])
        self.assertEqual(cells[5], "2.00")   # auto is twice as fast as global memory
        self.assertEqual(cells[6], "0.50")   # on takes twice as long
        self.assertEqual(cells[7], "200.0")  # on's time as % of off's, the seed's measure
        self.assertEqual(cells[8], seed)
        self.assertEqual(cells[9], "staged (k_staged)")
        self.assertEqual(cells[10], "PASS")

    def test_failed_mode_has_no_ratio_and_shows_its_check(self):
        rows = [compare_row("off", 2.0), compare_row("auto", 1.0), compare_row("on", 1.0, check="FAIL")]
        rows[2]["detail"] = "heat differs"
        cells = [c.strip() for c in bench.staging_table(rows).splitlines()[2].strip("|").split("|")]
        self.assertEqual(cells[4], "-")
        self.assertEqual(cells[6], "-")
        self.assertEqual(cells[9], "global (no staged variant)")
        self.assertEqual(cells[10], "PASS / PASS / FAIL (heat differs)")

    def test_a_staged_variant_only_timed_is_not_called_kept(self):
        rows = [compare_row("off", 2.0), compare_row("auto", 2.0, staged=["k_staged"]), compare_row("on", 3.0)]
        cells = [c.strip() for c in bench.staging_table(rows).splitlines()[2].strip("|").split("|")]
        self.assertEqual(cells[9], "global (staged timed, slower)")

    def test_coarsened_staged_variants_are_staged_and_name_their_global_sibling(self):
        for name, sibling in [("main_l48_staged", "main_l48"), ("main_l48_staged_x4", "main_l48"), ("jacobi_l114_staged_z8", "jacobi_l114")]:
            self.assertTrue(bench.STAGED_VARIANT.search(name), name)
            self.assertEqual(bench.STAGED_VARIANT.sub("", name), sibling)
        self.assertIsNone(bench.STAGED_VARIANT.search("main_l48"))
        self.assertIsNone(bench.STAGED_VARIANT.search("main_staged_l48"))

    def test_groups_follow_case_order(self):
        rows = [compare_row("off", 1.0), compare_row("on", 1.0)]
        other = dict(compare_row("off", 1.0), size="16384")
        groups = bench.staging_groups(rows + [other])
        self.assertEqual([(g[1], sorted(g[2])) for g in groups], [("8192", ["off", "on"]), ("16384", ["off"])])


if __name__ == "__main__":
    unittest.main()
