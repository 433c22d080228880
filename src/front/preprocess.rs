//! Preprocessing with the system `cpp`: `cpp -E -fopenacc -x c -D__YOSEGI__ -I<builtin> ...`.
//! `-fopenacc` makes cpp expand macros inside `#pragma acc` lines. The builtin include
//! directory holds our `openacc.h`; it is a private scratch directory of the run
//! ([`BuiltinHeaders`]), never a shared one, removed when parsing ends.

use std::path::Path;
use std::process::Command;

use crate::diag::Diagnostic;
use crate::front::{PreprocessOptions, cuda};
use crate::private_fs::{self, ScratchDir};

const OPENACC_H: &str = include_str!("../../include/openacc.h");

/// The builtin headers, written into a fresh private directory (see `private_fs`).
pub struct BuiltinHeaders {
    dir: ScratchDir,
}

impl BuiltinHeaders {
    pub fn new() -> Result<BuiltinHeaders, Diagnostic> {
        let dir = ScratchDir::new()?;
        let place = private_fs::temp_dir_described();
        for (name, text) in [("openacc.h", OPENACC_H), (cuda::HEADER_NAME, cuda::HEADER)] {
            let file = dir.path().join(name);
            private_fs::write_new(&file, text.as_bytes()).map_err(|e| private_fs::write_error(&file, &e, &place))?;
        }
        Ok(BuiltinHeaders { dir })
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The `cpp` command line for one file. Paths are passed as they are (no shell, no UTF-8
/// round trip); a file name that starts with `-` is not read as an option.
pub fn cpp_command(file: &Path, options: &PreprocessOptions, builtin: &BuiltinHeaders) -> Command {
    let mut cmd = private_fs::command_private("cpp", builtin.dir());
    cmd.args(["-E", "-fopenacc", "-x", "c", "-D__YOSEGI__"]);
    cmd.arg(private_fs::glued("-I", builtin.dir()));
    for dir in &options.include_dirs {
        cmd.arg(private_fs::glued("-I", dir));
    }
    for def in &options.defines {
        cmd.arg(format!("-D{def}"));
    }
    cmd.args(&options.cpp_flags);
    if options.openmp {
        cmd.arg("-fopenmp");
    }
    if options.lang.is_dialect(file) {
        // The dialect's types (`dim3`), before the program's first line.
        cmd.arg("-include");
        cmd.arg(builtin.dir().join(cuda::HEADER_NAME));
    }
    cmd.arg(private_fs::operand(file));
    cmd
}

/// Why `file` cannot be a source to compile: it does not exist, is a folder, or is a device
/// or socket (`/dev/zero` would never end); `None` for a regular file or a FIFO, which cpp
/// reads as gcc does (`yosegi run <(generate)`).
pub fn unreadable_input(file: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist"),
        Err(_) => Some("cannot be read"),
        Ok(m) if m.is_file() || m.file_type().is_fifo() => None,
        Ok(m) if m.is_dir() => Some("is a folder, not a regular file"),
        Ok(_) => Some("is not a regular file (a device or a socket)"),
    }
}

/// Runs cpp on `file` and returns its output (line markers included); what cpp said of a file
/// it preprocessed (`#warning`, its own warnings) is dropped: see [`preprocess_with_warnings`].
pub fn preprocess(file: &Path, options: &PreprocessOptions, builtin: &BuiltinHeaders) -> Result<String, Diagnostic> {
    preprocess_with_warnings(file, options, builtin).map(|(text, _)| text)
}

/// [`preprocess`], with what cpp wrote to its standard error on success (`#warning` lines and
/// cpp's warnings, as gcc shows them; empty when it said nothing).
pub fn preprocess_with_warnings(file: &Path, options: &PreprocessOptions, builtin: &BuiltinHeaders) -> Result<(String, String), Diagnostic> {
    if let Some(what) = unreadable_input(file) {
        return Err(Diagnostic::global_error(format!("cannot read `{}`: the file {what}", file.display()))
            .with_help("check the path of the C file to compile"));
    }
    // In care: an interruption ends cpp with Yosegi.
    let output = crate::care::output(&mut cpp_command(file, options, builtin)).map_err(|e| {
        Diagnostic::global_error(format!("cannot run the C preprocessor `cpp`: {e}"))
            .with_help("install a C toolchain (gcc's `cpp`) and make sure it is on PATH")
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(Diagnostic::global_error(format!("preprocessing `{}` failed:\n{}", file.display(), stderr.trim_end())));
    }
    let warnings = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut text = escape_marker_bytes(output.stdout).map_err(|e| not_utf8(file, &e))?;
    // Reading a pipe doubles the buffer as it fills: give back up to half of it, since the
    // text stays for the whole compilation.
    text.shrink_to_fit();
    Ok((text, warnings))
}

/// The error for preprocessed text that is not UTF-8: where the first bad byte is in the
/// user's file (through cpp's line markers), and which byte.
fn not_utf8(file: &Path, e: &std::string::FromUtf8Error) -> Diagnostic {
    let at = e.utf8_error().valid_up_to();
    let byte = e.as_bytes().get(at).copied().unwrap_or(0);
    // The text before the bad byte is valid, so its offset is the same in the lossy copy.
    let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
    let sources = crate::source::SourceSet { units: vec![crate::source::SourceUnit::new(file.to_path_buf(), lossy)] };
    let offset = u32::try_from(at).unwrap_or(u32::MAX);
    let place = sources.location(crate::diag::Span::new(0, offset, offset.saturating_add(1)));
    Diagnostic::global_error(format!(
        "{}:{}:{}: the source is not valid UTF-8 here (byte 0x{byte:02x})",
        place.file.display(),
        place.line,
        place.column
    ))
    .with_help("save the source file as UTF-8 (Yosegi reads C source as UTF-8, in strings and comments too)")
}

/// cpp copies a file name's bytes into its line markers as they are; a name that is not UTF-8
/// gets its other bytes written as C octal escapes (`\377`), which `parse_line_marker` and the C
/// compiler (reading the markers again in the host code) both decode. Text outside the markers
/// must be UTF-8.
fn escape_marker_bytes(bytes: Vec<u8>) -> Result<String, std::string::FromUtf8Error> {
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e.into_bytes(),
    };
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if line.first() == Some(&b'#') && std::str::from_utf8(line).is_err() {
            for &b in line {
                if b.is_ascii() {
                    out.push(b);
                } else {
                    out.extend_from_slice(format!("\\{b:03o}").as_bytes());
                }
            }
        } else {
            out.extend_from_slice(line);
        }
    }
    String::from_utf8(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_macros_in_acc_pragmas_and_finds_openacc_h() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.c");
        std::fs::write(&file, "#include <openacc.h>\n#define N 64\n#pragma acc parallel num_gangs(N)\nint x = WIDTH;\n").unwrap();
        let opts = PreprocessOptions { include_dirs: vec![], defines: vec!["WIDTH=7".into()], ..PreprocessOptions::default() };
        let out = preprocess(&file, &opts, &BuiltinHeaders::new().unwrap()).unwrap();
        assert!(out.contains("#pragma acc parallel num_gangs(64)"), "{out}");
        assert!(out.contains("int x = 7;"));
        assert!(out.contains("acc_device_t"));
    }

    #[test]
    fn failures_are_diagnostics() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.c");
        std::fs::write(&file, "#include \"nope.h\"\n").unwrap();
        let builtin = BuiltinHeaders::new().unwrap();
        let e = preprocess(&file, &PreprocessOptions::default(), &builtin).unwrap_err();
        assert!(e.message.contains("nope.h"), "{}", e.message);
        let e = preprocess(&dir.path().join("missing.c"), &PreprocessOptions::default(), &builtin).unwrap_err();
        assert!(e.message.contains("does not exist"));
    }
}
