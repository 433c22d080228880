//! Differential tests: every program under `tests/programs/` is built by gcc with the OpenACC
//! pragmas ignored (the reference) and run by `yosegi run --device sim`; both must exit 0 and
//! print the same output, numbers compared with the program's relative tolerance.
//!
//! A program is either one `.c` file or a directory (a multi-file program: the files named in
//! its `FILES`, else all its `.c` files). Its header comments configure the run:
//! `// yosegi-test: args=64 10`, `// yosegi-test: stdin=FILE` (relative to the program),
//! `// yosegi-test: rtol=1e-9` (0 compares the text exactly) and `// yosegi-test: cflags=-DN=8`
//! (definitions for both compilers), `// yosegi-test: ignore-lines=time:` (output lines starting
//! with one of these words, such as timings, are not compared).
//!
//! Each program runs eight times against one shared gcc reference: with `--staging auto`, `on`
//! (staged variants always launched), `off` (global memory only, and `--fusion off`), `--fusion
//! on` (every legal chain of a region's kernels fused, `opt::fusion`) and `off` with small grids'
//! blocks narrowed as the cuda device narrows them (`runtime::launch_shape`): the simulator
//! executes the staged grid kernels, barriers and all, so every staged variant is checked
//! against gcc; and on 2, 3 and 4 simulated devices (`--gpus N`), every kernel that can be split
//! over them split (`runtime::distribute`), each device with its own memory. The programs of
//! `examples/` run the same way, with the small sizes their headers give.
//!
//! A program in the MESI-CUDA dialect (`.cu`, `examples/mesi/`) has a plain C twin beside it (the
//! same name with `.c`): gcc builds the twin for the reference.

mod common;

use common::{Finished, Input, compare_outputs, gcc_build_with, repo_root, run, yosegi};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Used when a program's header gives no `rtol`: the difference reduction order makes in a
/// double-precision sum is far below it, a wrong answer far above it.
const DEFAULT_RTOL: f64 = 1e-9;
#[derive(Debug)]
struct TestProgram {
    name: String,
    sources: Vec<PathBuf>,
    /// What gcc builds: the sources, or a `.cu` program's plain C twin.
    reference_sources: Vec<PathBuf>,
    args: Vec<String>,
    stdin: Option<PathBuf>,
    rtol: f64,
    cflags: Vec<String>,
    /// Output lines starting with one of these words are not compared (timings).
    ignored_lines: Vec<String>,
}

fn programs_dir() -> PathBuf {
    repo_root().join("tests").join("programs")
}

fn load_program(entry: &str) -> TestProgram {
    let path = programs_dir().join(entry);
    let (base_dir, sources) = if path.is_dir() {
        (path.clone(), multi_file_sources(&path))
    } else {
        (path.parent().expect("program has a parent dir").to_path_buf(), vec![path.clone()])
    };
    let reference_sources = sources.iter().map(|s| if s.extension().is_some_and(|x| x == "cu") { s.with_extension("c") } else { s.clone() }).collect();
    let mut program = TestProgram {
        name: entry.to_string(),
        sources,
        reference_sources,
        args: Vec::new(),
        stdin: None,
        rtol: DEFAULT_RTOL,
        cflags: Vec::new(),
        ignored_lines: Vec::new(),
    };
    for source in &program.sources.clone() {
        let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
        for line in text.lines() {
            let Some(setting) = line.trim().strip_prefix("// yosegi-test:") else { continue };
            let (key, value) = setting.trim().split_once('=').unwrap_or_else(|| panic!("{}: malformed header `{line}`", source.display()));
            match key.trim() {
                "args" => program.args = value.split_whitespace().map(str::to_string).collect(),
                "cflags" => program.cflags = value.split_whitespace().map(str::to_string).collect(),
                "ignore-lines" => program.ignored_lines = value.split_whitespace().map(str::to_string).collect(),
                "stdin" => program.stdin = Some(base_dir.join(value.trim())),
                "rtol" => {
                    program.rtol = value.trim().parse().unwrap_or_else(|_| panic!("{}: rtol `{value}` is not a number", source.display()))
                }
                other => panic!("{}: unknown yosegi-test key `{other}`", source.display()),
            }
        }
    }
    program
}

fn multi_file_sources(dir: &Path) -> Vec<PathBuf> {
    let list = dir.join("FILES");
    if list.exists() {
        let text = std::fs::read_to_string(&list).expect("FILES is readable");
        return text.lines().map(str::trim).filter(|l| !l.is_empty()).map(|l| dir.join(l)).collect();
    }
    let mut sources: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("program dir is readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    sources
}

/// How a program is compiled for one of its runs: the `--staging` value passed to `yosegi run`.
/// Every program runs under each, so a staged variant that computes anything other than its
/// plain variant fails here against gcc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StagingRun {
    /// The default: staged variants where the cost model expects a gain.
    Auto,
    /// `--staging on`: every group that fits is staged and the staged variant always runs.
    Forced,
    /// `--staging off`: global memory only.
    Disabled,
    /// `--staging off` with every grid spread over 4096 multiprocessors
    /// (`YOSEGI_MULTIPROCESSORS`, `runtime::launch_shape`): the blocks the cuda device narrows
    /// for small grids, down to one warp, on every launch that can be.
    Spread,
    /// The default staging on this many simulated devices (`--gpus N`).
    Devices(usize),
    /// `--fusion on`: every legal chain of a region's kernels fused and the fused kernel
    /// always run (every other run fuses by the default `auto`, except `Disabled`, which
    /// passes `--fusion off`).
    FusionOn,
    /// The default staging as this many MPI ranks of one simulated device each
    /// (`--ranks N`, `runtime::ranks`).
    Ranks(usize),
}

impl StagingRun {
    fn flag(self) -> &'static str {
        match self {
            StagingRun::Auto | StagingRun::Devices(_) | StagingRun::FusionOn | StagingRun::Ranks(_) => "auto",
            StagingRun::Forced => "on",
            StagingRun::Disabled | StagingRun::Spread => "off",
        }
    }

    fn fusion_flag(self) -> &'static str {
        match self {
            StagingRun::FusionOn => "on",
            StagingRun::Disabled => "off",
            _ => "auto",
        }
    }
}

/// What the gcc build of a program printed; computed once per program and shared by its runs
/// under every staging mode (building and running the reference is a good part of a test).
#[derive(Clone, Debug)]
struct Reference {
    code: Option<i32>,
    stdout: String,
    describe: String,
}

fn reference_of(program: &TestProgram) -> Reference {
    static REFERENCES: OnceLock<Mutex<HashMap<String, Arc<OnceLock<Reference>>>>> = OnceLock::new();
    let slot = {
        let mut table = REFERENCES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(table.entry(program.name.clone()).or_default())
    };
    // Tests of other programs go on while this one builds: only the table lookup is locked.
    slot.get_or_init(|| {
        let scratch = tempfile::tempdir().expect("temp dir");
        let reference_exe = gcc_build_with(&program.reference_sources, scratch.path(), &program.cflags);
        let mut reference_cmd = std::process::Command::new(&reference_exe);
        reference_cmd.args(&program.args);
        let finished = run(reference_cmd, program_input(program));
        Reference { code: finished.code(), stdout: finished.stdout.clone(), describe: finished.describe() }
    })
    .clone()
}

fn program_input(program: &TestProgram) -> Input<'_> {
    match &program.stdin {
        Some(path) => Input::File(path),
        None => Input::Nothing,
    }
}

fn check_program(entry: &str, staging: StagingRun) {
    let program = load_program(entry);
    let expected = reference_of(&program);
    assert_eq!(expected.code, Some(0), "the gcc reference of {} failed\n{}", program.name, expected.describe);

    let mut yosegi_cmd = yosegi();
    let devices = match staging {
        StagingRun::Devices(n) => n,
        _ => 1,
    };
    yosegi_cmd.args(["run", "--device", "sim", "--staging", staging.flag(), "--fusion", staging.fusion_flag()]);
    match staging {
        StagingRun::Ranks(n) => yosegi_cmd.args(["--ranks", &n.to_string()]),
        _ => yosegi_cmd.args(["--gpus", &devices.to_string()]),
    };
    yosegi_cmd
        .env("YOSEGI_MULTIPROCESSORS", if staging == StagingRun::Spread { "4096" } else { "0" })
        .args(&program.cflags)
        .args(&program.sources)
        .arg("--")
        .args(&program.args);
    let actual = run(yosegi_cmd, program_input(&program));
    assert_eq!(
        actual.code(),
        expected.code,
        "yosegi's exit status (--staging {}) differs from the reference's for {}\n{}",
        staging.flag(),
        program.name,
        actual.describe()
    );
    let compared = |text: &str| -> String {
        text.lines()
            .filter(|line| !program.ignored_lines.iter().any(|word| line.trim_start().starts_with(word.as_str())))
            .map(|line| format!("{line}\n"))
            .collect()
    };
    if let Err(mismatch) = compare_outputs(&compared(&expected.stdout), &compared(&actual.stdout), program.rtol) {
        panic!(
            "{} (--staging {}): output differs from gcc's (rtol {:e}): {mismatch}\n--- gcc ---\n{}\n--- yosegi ---\n{}\n--- yosegi stderr ---\n{}",
            program.name,
            staging.flag(),
            program.rtol,
            expected.stdout,
            actual.stdout,
            actual.stderr
        );
    }
}

macro_rules! differential_tests {
    ($($test:ident => $entry:literal,)*) => {
        $(
            /// One test per staging mode, so that a failure names the mode.
            mod $test {
                use super::{StagingRun, check_program};
                #[test]
                fn staging_auto() {
                    check_program($entry, StagingRun::Auto);
                }
                #[test]
                fn staging_on() {
                    check_program($entry, StagingRun::Forced);
                }
                #[test]
                fn staging_off() {
                    check_program($entry, StagingRun::Disabled);
                }
                #[test]
                fn spread_blocks() {
                    check_program($entry, StagingRun::Spread);
                }
                #[test]
                fn devices_2() {
                    check_program($entry, StagingRun::Devices(2));
                }
                #[test]
                fn devices_3() {
                    check_program($entry, StagingRun::Devices(3));
                }
                #[test]
                fn devices_4() {
                    check_program($entry, StagingRun::Devices(4));
                }
                #[test]
                fn fusion_on() {
                    check_program($entry, StagingRun::FusionOn);
                }
                #[test]
                fn ranks_2() {
                    check_program($entry, StagingRun::Ranks(2));
                }
                #[test]
                fn ranks_3() {
                    check_program($entry, StagingRun::Ranks(3));
                }
                #[test]
                fn ranks_4() {
                    check_program($entry, StagingRun::Ranks(4));
                }
            }
        )*
        /// Every program the macro turned into a test, to check none was forgotten.
        const LISTED_PROGRAMS: &[&str] = &[$($entry),*];
    };
}

differential_tests! {
    diffusion1d => "diffusion1d.c",
    jacobi2d => "jacobi2d.c",
    himeno_static => "himeno_static.c",
    himeno_struct => "himeno_struct.c",
    spmv_csr => "spmv_csr.c",
    reductions => "reductions.c",
    kernels_region => "kernels_region.c",
    collapse2 => "collapse2.c",
    update_host => "update_host.c",
    directives_33 => "directives_33.c",
    enter_exit => "enter_exit.c",
    conv2d => "conv2d.c",
    matmul => "matmul.c",
    histogram => "histogram.c",
    argv_size => "argv_size.c",
    stdin_sum => "stdin_sum.c",
    routine_seq => "routine_seq.c",
    private_clauses => "private_clauses.c",
    auto_private => "auto_private.c",
    private_arrays => "private_arrays.c",
    struct_bounds => "struct_bounds.c",
    vla_access => "vla_access.c",
    float_saxpy => "float_saxpy.c",
    c_semantics => "c_semantics.c",
    control_flow => "control_flow.c",
    serial_atomic => "serial_atomic.c",
    atomic_forms => "atomic_forms.c",
    atomic_exchange => "atomic_exchange.c",
    array_reductions => "array_reductions.c",
    multi_solver => "multi_solver",
    stencil3d_19pt => "stencil3d_19pt.c",
    box_offsets => "box_offsets.c",
    stencil_wide1d => "stencil_wide1d.c",
    matvec_broadcast => "matvec_broadcast.c",
    matmul_tiles2d => "matmul_tiles2d.c",
    acc_api_data => "acc_api_data.c",
    acc_api_refcount => "acc_api_refcount.c",
    bool_type => "bool_type.c",
    assign_in_expr => "assign_in_expr.c",
    switch_fallthrough => "switch_fallthrough.c",
    struct_kernels => "struct_kernels.c",
    region_scalar_handoff => "region_scalar_handoff.c",
    atomic_inner_order => "atomic_inner_order.c",
    racing_stores => "racing_stores.c",
    carried_dependences => "carried_dependences.c",
    extents_without_sections => "extents_without_sections.c",
    libc_names => "libc_names.c",
    implicit_routine => "implicit_routine.c",
    ptr2d_deep_copy => "ptr2d_deep_copy.c",
    scratch_arrays => "scratch_arrays.c",
    ptr2d_routines => "ptr2d_routines.c",
    host_data_addresses => "host_data_addresses.c",
    long_double => "long_double.c",
    ordered_reductions => "ordered_reductions.c",
    complex_kernels => "complex_kernels.c",
    complex_reductions => "complex_reductions.c",
    gang_dimensions => "gang_dimensions.c",
    complex_handoff => "complex_handoff.c",
    long_double_rows => "long_double_rows.c",
    nest_prefix => "nest_prefix.c",
    static_twins => "static_twins",
    sparse_writes => "sparse_writes.c",
    halo_exchange => "halo_exchange.c",
    host_hooks_cached => "host_hooks_cached.c",
    host_loop_hooks => "host_loop_hooks.c",
    transposed_split => "transposed_split.c",
    fusion_chain1d => "fusion_chain1d.c",
    fusion_chain2d => "fusion_chain2d.c",
    fusion_chain3d => "fusion_chain3d.c",
    fusion_residual => "fusion_residual.c",
    fusion_adjacent => "fusion_adjacent.c",
    fusion_two_stores => "fusion_two_stores.c",
    fusion_sizing => "fusion_sizing.c",
    steps_jacobi2d => "steps_jacobi2d.c",
    steps_heat1d3d => "steps_heat1d3d.c",
    steps_swap => "steps_swap.c",
    struct_member_arrays => "struct_member_arrays.c",
    host_loop_sections => "host_loop_sections.c",
    pointer_locals => "pointer_locals.c",
    pointer_routines => "pointer_routines.c",
    extreme_constants => "extreme_constants.c",
    struct_pointers => "struct_pointers.c",
    implicit_scalars => "implicit_scalars.c",
    older_clauses => "older_clauses.c",
    file_scope_declare => "file_scope_declare.c",
    local_struct_arrays => "local_struct_arrays.c",
    number_tables => "number_tables.c",
    old_style_c => "old_style_c.c",
    host_openmp => "host_openmp.c",
    example_cg => "../../examples/cg.c",
    example_diffusion1d => "../../examples/diffusion1d.c",
    example_diffusion_wide => "../../examples/diffusion_wide.c",
    example_heat3d => "../../examples/heat3d.c",
    example_himeno => "../../examples/himeno.c",
    example_jacobi2d => "../../examples/jacobi2d.c",
    example_matmul_vec => "../../examples/matmul_vec.c",
    example_row_scan => "../../examples/row_scan.c",
    example_wide_stencil_f32 => "../../examples/wide_stencil_f32.c",
    mesi_block_sum => "../../examples/mesi/block_sum.cu",
    mesi_diffusion => "../../examples/mesi/diffusion.cu",
    mesi_transpose => "../../examples/mesi/transpose.cu",
    mesi_histogram => "../../examples/mesi/histogram.cu",
    mesi_histogram_atomic => "../../examples/mesi/histogram_atomic.cu",
    mesi_jacobi2d => "../../examples/mesi/jacobi2d.cu",
    mesi_matvec => "../../examples/mesi/matvec.cu",
    dialect_block_total => "../dialect_programs/block_total.cu",
    dialect_forms => "../dialect_programs/forms.cu",
    dialect_struct_variables => "../dialect_programs/struct_variables.cu",
}

#[test]
fn every_program_in_the_directory_has_a_test() {
    let mut unlisted = Vec::new();
    for entry in std::fs::read_dir(programs_dir()).expect("tests/programs exists") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().expect("file name").to_string_lossy().into_owned();
        let is_program = path.is_dir() || path.extension().is_some_and(|x| x == "c");
        if is_program && !LISTED_PROGRAMS.contains(&name.as_str()) {
            unlisted.push(name);
        }
    }
    for entry in std::fs::read_dir(repo_root().join("examples")).expect("examples/ exists") {
        let path = entry.expect("dir entry").path();
        let name = format!("../../examples/{}", path.file_name().expect("file name").to_string_lossy());
        if path.extension().is_some_and(|x| x == "c") && !LISTED_PROGRAMS.contains(&name.as_str()) {
            unlisted.push(name);
        }
    }
    for entry in std::fs::read_dir(repo_root().join("tests").join("dialect_programs")).expect("tests/dialect_programs exists") {
        let path = entry.expect("dir entry").path();
        let name = format!("../dialect_programs/{}", path.file_name().expect("file name").to_string_lossy());
        if path.extension().is_some_and(|x| x == "cu") && !LISTED_PROGRAMS.contains(&name.as_str()) {
            unlisted.push(name);
        }
    }
    for entry in std::fs::read_dir(repo_root().join("examples").join("mesi")).expect("examples/mesi/ exists") {
        let path = entry.expect("dir entry").path();
        let name = format!("../../examples/mesi/{}", path.file_name().expect("file name").to_string_lossy());
        if path.extension().is_some_and(|x| x == "cu") {
            assert!(path.with_extension("c").exists(), "{name} has no plain C twin");
            if !LISTED_PROGRAMS.contains(&name.as_str()) {
                unlisted.push(name);
            }
        }
    }
    assert!(unlisted.is_empty(), "programs without a test (add them to differential_tests!): {unlisted:?}");
    assert!(LISTED_PROGRAMS.len() >= 18, "the differential corpus shrank to {} programs", LISTED_PROGRAMS.len());
}

#[test]
fn stats_report_the_device_counters() {
    let program = load_program("diffusion1d.c");
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats"]).args(&program.sources);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    for counter in ["launches", "global memory transactions", "host->device bytes"] {
        assert!(finished.stderr.contains(counter), "--stats did not report `{counter}`\n{}", finished.describe());
    }
    assert!(!finished.stdout.contains("launches"), "--stats must write to stderr, not into the program's output");
    // diffusion1d.c copies its 4096-double array `u` in, so at least 32 KiB cross to the device.
    let bytes_in = counter_value(&finished.stderr, "host->device bytes");
    assert!(bytes_in.is_some_and(|b| b >= 4096 * 8), "host->device bytes {bytes_in:?}, want >= 32768\n{}", finished.describe());
}

/// On several devices a split stencil moves, per step, exactly the rows beside each block
/// boundary from device to device (both ways), and nothing between host and devices: ten more
/// steps add ten times the halo to the peer bytes and nothing to the host's. From the second
/// step on, every device's part runs its interior while its halo comes in (one overlapped part
/// per device per step), which moves the same bytes and gives the same answer as the part
/// waiting for its halo (`YOSEGI_OVERLAP=off`) and as one device. (The simulator lands a
/// deferred copy only when the device joins it: a part that read its halo before would read
/// the last step's rows.)
#[test]
fn split_stencil_moves_only_the_halo_between_devices() {
    let program = load_program("halo_exchange.c");
    let counters = |devices: usize, steps: u32, overlap: &str| {
        let mut cmd = yosegi();
        cmd.env("YOSEGI_OVERLAP", overlap);
        cmd.args(["run", "--device", "sim", "--stats", "--gpus", &devices.to_string()]).args(&program.sources).arg("--").arg(steps.to_string());
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        if devices == 1 {
            return ([0; 4], 0, finished.stdout);
        }
        let value = |label: &str| counter_value(&finished.stderr, label).unwrap_or_else(|| panic!("no `{label}`\n{}", finished.describe()));
        let counts = [
            value("peer bytes (device to device)"),
            value("host->device bytes"),
            value("device->host bytes"),
            value("launches kept on one device"),
        ];
        (counts, value("parts run beside their halo exchange"), finished.stdout)
    };
    // A row's interior: M - 2 = 46 doubles.
    let row = 46 * 8;
    let (_, _, one_device) = counters(1, 16, "on");
    for devices in [2usize, 3, 4] {
        let ([peer_short, in_short, out_short, kept], overlapped_short, _) = counters(devices, 6, "on");
        let ([peer_long, in_long, out_long, _], overlapped_long, answer) = counters(devices, 16, "on");
        let boundaries = devices as u64 - 1;
        assert_eq!(peer_long - peer_short, 10 * boundaries * 2 * row, "{devices} devices: peer bytes per step are not the halo");
        assert_eq!((in_long, out_long), (in_short, out_short), "{devices} devices: steps moved host bytes");
        assert_eq!(in_short, 2 * 64 * 48 * 8, "{devices} devices: the host sends each array once");
        assert_eq!(kept, 0, "{devices} devices: every launch is split");
        assert_eq!(overlapped_long - overlapped_short, 10 * devices as u64, "{devices} devices: not every part overlapped its exchange");
        assert_eq!(answer, one_device, "{devices} devices: the overlapped exchange changed the answer");
        let (waiting, overlapped_off, answer_off) = counters(devices, 16, "off");
        assert_eq!(overlapped_off, 0, "{devices} devices: YOSEGI_OVERLAP=off overlapped");
        assert_eq!(waiting, [peer_long, in_long, out_long, 0], "{devices} devices: overlapping changed the bytes moved");
        assert_eq!(answer_off, one_device, "{devices} devices: the waiting exchange changed the answer");
    }
}

/// Parts with fewer iterations than `YOSEGI_OVERLAP_MIN_ITERATIONS` wait for their halo instead of
/// running their interior beside it (on a GPU the extra launches cost more than a short
/// kernel hides); the answer is the same either way.
#[test]
fn small_parts_wait_for_their_halo() {
    let mut answers = Vec::new();
    for (threshold, overlapped) in [("0", 10), ("100000000", 0)] {
        let finished = halo_exchange_on_two_devices("YOSEGI_OVERLAP_MIN_ITERATIONS", threshold);
        // Six steps: every one but the first (which distributes the arrays) overlaps on both devices.
        assert_eq!(counter_value(&finished.stderr, "parts run beside their halo exchange"), Some(overlapped), "{}", finished.stderr);
        answers.push(finished.stdout);
    }
    assert_eq!(answers[0], answers[1]);
}

/// A nest whose outer loop's blocks would write overlapping memory (`b[j][i]`, `i` outer) is
/// split along its inner dim instead, on any number of devices.
#[test]
fn a_launch_splits_along_the_dim_whose_blocks_write_apart() {
    let program = load_program("transposed_split.c");
    for devices in ["2", "3"] {
        let mut cmd = yosegi();
        cmd.args(["run", "--device", "sim", "--stats", "--gpus", devices]).args(&program.sources);
        let finished = run(cmd, Input::Nothing);
        assert_eq!(finished.code(), Some(0), "{}", finished.describe());
        assert_eq!(counter_value(&finished.stderr, "launches split over the devices"), Some(2), "{}", finished.stderr);
        assert_eq!(counter_value(&finished.stderr, "launches kept on one device"), Some(0), "{}", finished.stderr);
    }
}

/// Launches that move fewer bytes than `YOSEGI_MIN_SPLIT_BYTES` stay whole on one device.
#[test]
fn small_launches_stay_on_one_device() {
    for (threshold, split) in [("0", 12), ("100000000", 0)] {
        let finished = halo_exchange_on_two_devices("YOSEGI_MIN_SPLIT_BYTES", threshold);
        assert_eq!(counter_value(&finished.stderr, "launches split over the devices"), Some(split), "{}", finished.stderr);
        assert_eq!(counter_value(&finished.stderr, "launches too small to gain from a split"), Some(12 - split), "{}", finished.stderr);
        assert_eq!(counter_value(&finished.stderr, "peer bytes (device to device)"), Some(if split == 0 { 0 } else { 28224 }), "{}", finished.stderr);
    }
}

/// `halo_exchange.c` run with `--stats` on two simulated devices with `variable=value` in its
/// environment; it must succeed.
fn halo_exchange_on_two_devices(variable: &str, value: &str) -> Finished {
    let program = load_program("halo_exchange.c");
    let mut cmd = yosegi();
    cmd.env(variable, value).args(["run", "--device", "sim", "--stats", "--gpus", "2"]).args(&program.sources);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    finished
}

/// The number at the end of the first stats line that starts with `label`.
fn counter_value(report: &str, label: &str) -> Option<u64> {
    let line = report.lines().find(|l| l.trim_start().starts_with(label))?;
    line.split_whitespace().last()?.parse().ok()
}

#[test]
fn comparison_accepts_reordered_rounding_and_rejects_wrong_values() {
    assert!(compare_outputs("sum 1.000000000000e+00\n", "sum 1.000000000001e+00", 1e-9).is_ok());
    assert!(compare_outputs("sum 1.0000e+00", "sum 1.0001e+00", 1e-9).is_err());
    assert!(compare_outputs("x 0.0", "x 1e-15", 1e-9).is_ok());
    assert!(compare_outputs("1.5", "1.5000001", 0.0).is_err());
}

#[test]
fn comparison_is_exact_for_integers_words_and_token_counts() {
    assert!(compare_outputs("count 3146413336", "count 3146413337", 1e-3).is_err());
    assert!(compare_outputs("gosa 1.0", "Gosa 1.0", 1e-3).is_err());
    assert!(compare_outputs("a 1.0 b", "a 1.0", 1e-3).is_err());
    assert!(compare_outputs("a 1.0", "a 1.0 b", 1e-3).is_err());
    assert!(compare_outputs("nan", "nan", 1e-3).is_ok());
    assert!(compare_outputs("1.0", "nan", 1e-3).is_err());
}

#[test]
fn stats_lines_are_parsed() {
    let report = "=== yosegi stats ===\nhost->device bytes                                      65536\n";
    assert_eq!(counter_value(report, "host->device bytes"), Some(65536));
    assert_eq!(counter_value(report, "device->host bytes"), None);
}

#[test]
fn headers_are_read_from_the_program() {
    let program = load_program("argv_size.c");
    assert_eq!(program.args, ["1500", "7"]);
    assert_eq!(program.rtol, 1e-9);
    let multi = load_program("multi_solver");
    assert_eq!(multi.sources.len(), 3);
    assert!(multi.sources[0].ends_with("solver.c"));
    assert!(load_program("stdin_sum.c").stdin.is_some_and(|p| p.exists()));
}
