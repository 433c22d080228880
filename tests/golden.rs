//! Golden tests: the IR (kernels, grid kernels, regions) and the `explain` text of the programs
//! in tests/in, snapshotted in tests/out. A change to them is reviewed like code.

use std::path::PathBuf;

use yosegi::back::ir_text::module_text;
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
