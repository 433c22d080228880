//! Golden tests: the IR (kernels, grid kernels, regions) and the `explain` text of the programs
//! in tests/in, snapshotted in tests/out. A change to them is reviewed like code.

use std::path::PathBuf;

use yosegi::ir::text::module_text;
use yosegi::driver::compile;
use yosegi::explain::explain_with_tuning_cache;
use yosegi::front::PreprocessOptions;

fn compiled(name: &str) -> yosegi::driver::CompiledProgram {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/in").join(name);
    match compile(&[path], &PreprocessOptions::default(), &yosegi::opt::PassConfig::default()) {
        Ok(program) => program,
        Err((sources, diags)) => panic!("{name} does not compile:\n{}", yosegi::diag::render(&sources, &diags.0, false)),
    }
}

macro_rules! golden {
    ($($test:ident => $file:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            let program = compiled($file);
            // An empty tuning cache: measured winners on this machine must not reach the text.
            let tuning_cache = tempfile::tempdir().expect("temp dir");
            let explained = explain_with_tuning_cache(&program, Some(tuning_cache.path().to_path_buf()));
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path("out");
            settings.set_prepend_module_to_snapshot(false);
            settings.bind(|| {
                insta::assert_snapshot!(concat!(stringify!($test), "_ir"), module_text(&program.module));
                insta::assert_snapshot!(concat!(stringify!($test), "_explain"), explained);
            });
        }
    )*};
}

golden! {
    saxpy => "saxpy.c",
    jacobi_max => "jacobi_max.c",
    kernels_dep => "kernels_dep.c",
    csr_struct => "csr_struct.c",
    complex_gangs => "complex_gangs.c",
    fusion_blur => "fusion_blur.c",
}

/// With the program's sources, a kernel's CUDA names the user's lines before its statements
/// (`#line`, for compute-sanitizer and Nsight Compute); without them (the goldens, the tuning
/// cache's hashes) it has none.
#[test]
fn kernels_written_with_the_sources_carry_the_users_lines() {
    use yosegi::back::cuda::{CudaOptions, grid_kernel_cuda_with};
    let program = compiled("jacobi_max.c");
    let module = &program.module;
    let grid = |name: &str| module.grid_kernels.iter().map(|(_, g)| g).find(|g| g.name == name).unwrap_or_else(|| panic!("no grid kernel {name}"));
    let with_lines = CudaOptions { sources: Some(&program.sources), ..CudaOptions::GENERIC };
    let sweep = grid_kernel_cuda_with(module, grid("main_l16"), &with_lines);
    let directives: Vec<&str> = sweep.lines().filter(|l| l.starts_with("#line")).collect();
    let file = program.sources.units[0].path.display().to_string();
    // The store of `b[i][j]` (line 19) and the max of `err` (line 20), in that order.
    let at = |line: u32| format!("#line {line} \"{file}\"");
    let position = |line: u32| directives.iter().position(|d| *d == at(line)).unwrap_or_else(|| panic!("no `{}` in:\n{sweep}", at(line)));
    assert!(position(19) < position(20), "{sweep}");
    // One directive per change of line: never the same line twice in a row.
    assert!(directives.windows(2).all(|w| w[0] != w[1]), "{sweep}");
    let copy = grid_kernel_cuda_with(module, grid("main_l24"), &with_lines);
    assert!(copy.contains(&at(26)), "the copy-back's store is on line 26:\n{copy}");
    let plain = grid_kernel_cuda_with(module, grid("main_l16"), &CudaOptions::GENERIC);
    assert!(!plain.contains("#line"), "{plain}");
    // Without the directives the text is the one the goldens and caches know.
    let stripped: String = sweep.lines().filter(|l| !l.starts_with("#line")).map(|l| format!("{l}\n")).collect();
    assert_eq!(stripped, plain);
}
