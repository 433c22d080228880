//! Preprocessing with the system `cpp`: `cpp -E -fopenacc -x c -D__YOSEGI__ -I<builtin> ...`.
//! `-fopenacc` makes cpp expand macros inside `#pragma acc` lines. The builtin include
//! directory holds our `openacc.h`, written out once per process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::diag::Diagnostic;
use crate::front::PreprocessOptions;

const OPENACC_H: &str = include_str!("../../include/openacc.h");

/// The directory holding `openacc.h`; named by a hash of its contents so that processes of
/// different yosegi versions never share a stale copy, and concurrent processes agree.
pub fn builtin_include_dir() -> Result<PathBuf, Diagnostic> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let hash = OPENACC_H.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
        let dir = std::env::temp_dir().join(format!("yosegi-include-{hash:016x}"));
        let file = dir.join("openacc.h");
        if std::fs::read_to_string(&file).map(|s| s == OPENACC_H).unwrap_or(false) {
            return Ok(dir);
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // Write to a private name first, then rename: another process may be reading it.
        let tmp = dir.join(format!("openacc.h.{}", std::process::id()));
        std::fs::write(&tmp, OPENACC_H).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &file).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        Ok(dir)
    })
    .clone()
    .map_err(Diagnostic::global_error)
}

/// The `cpp` command line for one file.
pub fn cpp_command(file: &Path, options: &PreprocessOptions, builtin: &Path) -> Command {
    let mut cmd = Command::new("cpp");
    cmd.args(["-E", "-fopenacc", "-x", "c", "-D__YOSEGI__"]);
    cmd.arg(format!("-I{}", builtin.display()));
    for dir in &options.include_dirs {
        cmd.arg(format!("-I{}", dir.display()));
    }
    for def in &options.defines {
        cmd.arg(format!("-D{def}"));
    }
    cmd.arg(file);
    cmd
}

/// Runs cpp on `file` and returns its output (line markers included).
pub fn preprocess(file: &Path, options: &PreprocessOptions) -> Result<String, Diagnostic> {
    if !file.is_file() {
        let what = if file.exists() { "is not a regular file" } else { "does not exist" };
        return Err(Diagnostic::global_error(format!("cannot read `{}`: the file {what}", file.display()))
            .with_help("check the path of the C file to compile"));
    }
    let builtin = builtin_include_dir()?;
    let output = cpp_command(file, options, &builtin).output().map_err(|e| {
        Diagnostic::global_error(format!("cannot run the C preprocessor `cpp`: {e}"))
            .with_help("install a C toolchain (gcc's `cpp`) and make sure it is on PATH")
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(Diagnostic::global_error(format!("preprocessing `{}` failed:\n{}", file.display(), stderr.trim_end())));
    }
    String::from_utf8(output.stdout).map_err(|_| {
        Diagnostic::global_error(format!("the preprocessed `{}` is not valid UTF-8", file.display()))
            .with_help("save the source file as UTF-8")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_macros_in_acc_pragmas_and_finds_openacc_h() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.c");
        std::fs::write(&file, "#include <openacc.h>\n#define N 64\n#pragma acc parallel num_gangs(N)\nint x = WIDTH;\n").unwrap();
        let opts = PreprocessOptions { include_dirs: vec![], defines: vec!["WIDTH=7".into()] };
        let out = preprocess(&file, &opts).unwrap();
        assert!(out.contains("#pragma acc parallel num_gangs(64)"), "{out}");
        assert!(out.contains("int x = 7;"));
        assert!(out.contains("acc_device_t"));
    }

    #[test]
    fn failures_are_diagnostics() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.c");
        std::fs::write(&file, "#include \"nope.h\"\n").unwrap();
        let e = preprocess(&file, &PreprocessOptions::default()).unwrap_err();
        assert!(e.message.contains("nope.h"), "{}", e.message);
        let e = preprocess(&dir.path().join("missing.c"), &PreprocessOptions::default()).unwrap_err();
        assert!(e.message.contains("does not exist"));
    }
}
