//! Bad inputs: every `tests/bad/NAME.c` (or `NAME.cu`, the MESI-CUDA dialect) has exactly one
//! problem, and `NAME.expected` says where
//! (`LINE:COL` on its first line) and what (a key phrase of the message on its second line).
//! `yosegi run --device sim NAME.c` must exit 2 and print a diagnostic that names the place,
//! contains the phrase, and draws a caret under it, without panicking.

mod common;

use common::{Input, repo_root, run, yosegi};
use std::path::PathBuf;

/// The corpus must stay large enough to cover directives, C syntax and semantics.
const MINIMUM_CORPUS: usize = 25;
/// And the MESI-CUDA dialect's refusals.
const MINIMUM_DIALECT_CORPUS: usize = 10;

fn bad_dir() -> PathBuf {
    repo_root().join("tests").join("bad")
}

struct Expectation {
    line_col: String,
    phrase: String,
}

fn read_expectation(name: &str) -> Expectation {
    let path = bad_dir().join(format!("{name}.expected"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines();
    let line_col = lines.next().map(str::trim).unwrap_or_default().to_string();
    let phrase = lines.next().map(str::trim).unwrap_or_default().to_string();
    let well_formed = line_col.split_once(':').is_some_and(|(l, c)| l.parse::<u32>().is_ok() && c.parse::<u32>().is_ok());
    assert!(well_formed && !phrase.is_empty(), "{}: expected `LINE:COL` then a phrase", path.display());
    Expectation { line_col, phrase }
}

fn check_rejected(name: &str) {
    let expectation = read_expectation(name);
    let dialect = bad_dir().join(format!("{name}.cu"));
    let file_name = if dialect.exists() { format!("{name}.cu") } else { format!("{name}.c") };
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim"]).arg(bad_dir().join(&file_name));
    let finished = run(cmd, Input::Nothing);
    let stderr = &finished.stderr;
    assert!(!stderr.contains("panicked"), "{file_name}: yosegi panicked\n{}", finished.describe());
    assert_eq!(finished.code(), Some(2), "{file_name}: bad input must exit with status 2\n{}", finished.describe());
    let place = format!("{file_name}:{}", expectation.line_col);
    assert!(stderr.contains(&place), "{file_name}: the diagnostic does not point at {place}\n{}", finished.describe());
    assert!(
        stderr.to_lowercase().contains(&expectation.phrase.to_lowercase()),
        "{file_name}: the diagnostic does not say `{}`\n{}",
        expectation.phrase,
        finished.describe()
    );
    assert!(stderr.lines().any(|l| l.contains('^')), "{file_name}: no caret line under the problem\n{}", finished.describe());
    assert!(stderr.contains("error"), "{file_name}: the diagnostic is not marked as an error\n{}", finished.describe());
}

macro_rules! bad_input_tests {
    ($($name:ident,)*) => {
        $(
            #[test]
            fn $name() {
                check_rejected(stringify!($name));
            }
        )*
        const LISTED_INPUTS: &[&str] = &[$(stringify!($name)),*];
    };
}

bad_input_tests! {
    pointer_into_two_arrays,
    pointer_table_filled_in_kernel,
    pointer_arithmetic_on_a_scalar,
    pointer_to_a_pointer,
    shared_scalar_written_through_address,
    aliased_sections,
    array_reduction_read,
    array_reduction_wrong_operator,
    atomic_capture_block_other_variable,
    atomic_capture_not_a_form,
    atomic_not_update,
    atomic_operand_reads_x,
    atomic_shift_on_float,
    atomic_update_not_a_form,
    collapse_force,
    gang_dim,
    gang_dim_nesting,
    gang_dim_adjacent,
    gang_dim_not_constant,
    gang_dimensions,
    attach_not_pointer,
    bad_expression,
    bad_reduction_operator,
    break_in_parallel_loop,
    clause_not_allowed,
    collapse_nonconstant,
    collapse_not_perfect,
    collapse_zero,
    continued_directive_clause,
    complex_array_reduction,
    complex_atomic,
    complex_increment,
    complex_integer_type,
    complex_less_than,
    complex_max_reduction,
    complex_remainder,
    copy_undeclared,
    default_none,
    device_num_negative,
    device_type_then_data_clause,
    empty_clause_argument,
    enter_data_copyout,
    exit_data_copyin,
    extra_brace,
    goto_in_kernel,
    imaginary_integer,
    knr_unknown_parameter,
    loop_directive_not_for,
    long_double_atomic,
    loop_variable_modified,
    missing_include,
    missing_paren,
    missing_semicolon,
    noncounted_loop,
    num_gangs_four_values,
    num_gangs_kernels_dims,
    ptr2d_overlapping_rows,
    ptr2d_section_of_pointer,
    ptr2d_three_sections,
    packed_struct_in_kernel,
    pragma_pack_struct_in_kernel,
    reduction_not_scalar,
    reduction_undeclared,
    return_in_kernel,
    runtime_extent,
    set_without_clause,
    unclosed_brace,
    undeclared_in_kernel,
    undefined_function,
    undefined_helper,
    unknown_clause,
    unknown_directive,
    unterminated_comment,
    use_device_member,
    update_no_clause,
    // The MESI-CUDA dialect (`.cu`).
    atomic_cas,
    atomic_in_expression,
    builtin_whole,
    cuda_malloc,
    cuda_memcpy,
    cuda_stream,
    dim3_four_sizes,
    kernel_returns_value,
    launch_argument_count,
    launch_dynamic_shared,
    launch_stream,
    launch_unclosed,
    launch_unknown_kernel,
    local_shared_variable,
    local_struct_array_too_large,
    local_struct_too_large,
    return_in_kernel_loop,
    shared_outside_kernel,
    per_thread_block_not_constant,
    per_thread_return,
    per_thread_block_mismatch,
    warp_shuffle,
    per_thread_shared_scalar,
    recursive_routine,
}

#[test]
fn corpus_is_complete_and_every_input_has_an_expectation() {
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(bad_dir()).expect("tests/bad exists") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|x| x == "c" || x == "cu") {
            sources.push(path.file_name().expect("name").to_string_lossy().into_owned());
        }
    }
    assert!(sources.len() >= MINIMUM_CORPUS, "only {} bad inputs, want at least {MINIMUM_CORPUS}", sources.len());
    let dialect = sources.iter().filter(|s| s.ends_with(".cu")).count();
    assert!(dialect >= MINIMUM_DIALECT_CORPUS, "only {dialect} bad MESI-CUDA inputs, want at least {MINIMUM_DIALECT_CORPUS}");
    for file in &sources {
        let name = file.rsplit_once('.').map_or(file.as_str(), |(stem, _)| stem);
        assert!(LISTED_INPUTS.contains(&name), "tests/bad/{file} has no test: add it to bad_input_tests!");
        read_expectation(name);
    }
}

/// An input that is not a regular file is named as such (a folder, a device that would never
/// end), exit status 2; a FIFO is read as gcc reads it.
#[test]
fn inputs_that_are_not_regular_files_are_named_and_fifos_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder.c");
    std::fs::create_dir(&folder).unwrap();
    for (input, what) in [(folder.as_path(), "is a folder, not a regular file"), (std::path::Path::new("/dev/zero"), "is not a regular file"), (dir.path().join("gone.c").as_path(), "does not exist")] {
        for command in ["run", "explain"] {
            let mut cmd = yosegi();
            cmd.args([command, "--device", "sim"]).arg(input);
            if command == "explain" {
                cmd = yosegi();
                cmd.arg(command).arg(input);
            }
            let out = run(cmd, Input::Nothing);
            assert_eq!(out.code(), Some(2), "{command} {}: {}", input.display(), out.describe());
            assert!(out.stderr.contains(what), "{command} {}: {}", input.display(), out.describe());
        }
    }
    let fifo = dir.path().join("fifo.c");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, "#include <stdio.h>\nint main(void) { printf(\"through a fifo\\n\"); return 0; }\n").unwrap())
    };
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim"]).arg(&fifo);
    let out = run(cmd, Input::Nothing);
    writer.join().unwrap();
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert_eq!(out.stdout, "through a fifo\n");
}

#[test]
fn cpps_own_warnings_are_shown_by_run_and_explain_as_gcc_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("warned.c");
    std::fs::write(&file, "#warning \"check the tile size\"\n#include <stdio.h>\nint main(void) { printf(\"ok\\n\"); return 0; }\n").unwrap();
    for args in [vec!["run", "--device", "sim"], vec!["explain"]] {
        let out = yosegi().args(&args).arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.contains("warned.c:1:2: warning: #warning \"check the tile size\""), "{args:?}: {stderr}");
    }
}

#[test]
fn invalid_utf8_in_a_source_is_located_at_its_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("latin1.c");
    std::fs::write(&file, b"#include <stdio.h>\nint main(void) {\n  printf(\"caf\xe9\\n\");\n  return 0;\n}\n").unwrap();
    let out = yosegi().args(["run", "--device", "sim"]).arg(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("latin1.c:3:14: the source is not valid UTF-8 here (byte 0xe9)"), "{stderr}");
}
