//! Embeds the runtime library in a release build of `yosegi`, so that an installed compiler
//! (`cargo install --path .`, which installs binaries only) can still link executables: `yosegi
//! cc` writes the embedded `libyosegi_rt.so` into its cache when none lies next to it or in
//! `$YOSEGI_LIB_DIR`. The library is built by a second cargo run of the `yosegi-rt` package into
//! a target folder of this build's own (cargo offers no stable way to depend on another
//! package's `cdylib`). Other profiles embed nothing: `cargo build` and `cargo test` put the
//! library next to the binaries. `YOSEGI_EMBED_RUNTIME=0` turns it off.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=crates/yosegi-rt/src");
    println!("cargo:rerun-if-changed=crates/yosegi-rt/Cargo.toml");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed=YOSEGI_EMBED_RUNTIME");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dest = out.join("libyosegi_rt.so");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let wanted = std::env::var("YOSEGI_EMBED_RUNTIME").map_or(true, |v| v.trim() != "0");
    let embedded = if release && wanted { build_runtime(&out) } else { None };
    std::fs::write(&dest, embedded.unwrap_or_default()).expect("write the embedded runtime library");
}

/// The release `libyosegi_rt.so`, built into `out/runtime-target`; `None` (with a warning) when
/// the build fails.
fn build_runtime(out: &std::path::Path) -> Option<Vec<u8>> {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = out.join("runtime-target");
    let status = Command::new(cargo)
        .args(["build", "--release", "--lib", "-p", "yosegi-rt", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .status();
    match status {
        Ok(s) if s.success() => std::fs::read(target_dir.join("release").join("libyosegi_rt.so")).ok(),
        other => {
            println!("cargo:warning=the runtime library was not built for embedding ({other:?}); `yosegi cc` will need it next to the binary or in YOSEGI_LIB_DIR");
            None
        }
    }
}
