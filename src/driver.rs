//! The pipeline behind the CLI: compile the user's files to the IR (parse, lower, passes), build
//! the host side into a shared object with the system C compiler, and run it against the
//! runtime.
//!
//! Exit statuses of `yosegi run`: 0 when the program's `main` returned 0; 1 when it returned
//! anything else (the driver says so on stderr) or a kernel faulted (the runtime ends the
//! process); 2 for bad input (diagnostics). A program that calls `exit(n)` itself ends the
//! `yosegi` process with status `n`, as it would when compiled by gcc: its `atexit` handlers,
//! and the runtime's (flush stdio, then the runtime's report), run then.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::back::host_c::{self, HostProgram};
use crate::diag::{Diagnostic, Diagnostics};
use crate::front::ast::TranslationUnit;
use crate::source::SourceSet;
use crate::front::{self, PreprocessOptions};
use crate::ir::Module;
use crate::opt::{self, PassConfig, StagingMode};
use crate::private_fs;
pub use crate::private_fs::ScratchDir;
use crate::runtime::{ColorMode, DeviceKind, RuntimeConfig, StatsMode};

mod openmp;
pub use openmp::OpenMpUse;

/// A program compiled to the IR, with everything the later steps need.
pub struct CompiledProgram {
    pub files: Vec<PathBuf>,
    pub sources: SourceSet,
    pub units: Vec<TranslationUnit>,
    pub module: Module,
    /// Warnings from every stage (the CLI prints them).
    pub warnings: Vec<Diagnostic>,
    /// How staged variants were made; the runtime picks among them accordingly.
    pub staging: StagingMode,
    /// What the host build does for OpenMP (`-fopenmp`, or libgomp for OpenMP's API).
    pub openmp: OpenMpUse,
}

/// The compiler's walkers recurse over expression trees, and a generated program may hold an
/// expression of tens of thousands of terms (a left-leaning tree as deep as it is long): the
/// CLI's whole command (and each input of `yosegi-fuzz`) runs on a thread with this much stack
/// (address space reserved, pages used only as deep as the input needs). The parser refuses
/// anything deeper than this can hold
/// (`front::parser::MAX_EXPRESSION_DEPTH`).
pub const COMPILER_STACK_BYTES: usize = 4 << 30;

/// Parses, lowers and maps the program. On failure the sources come back with the diagnostics
/// so the caller can render them.
pub fn compile(
    files: &[PathBuf],
    options: &PreprocessOptions,
    passes: &PassConfig,
) -> Result<CompiledProgram, (SourceSet, Diagnostics)> {
    let parsed = front::parse_program(files, options)?;
    compile_parsed(files.to_vec(), parsed, passes, options.openmp)
}

/// [`compile`] for one file's text that is already preprocessed (see
/// [`front::parse_preprocessed_units`]): no `cpp`, no process. The fuzzer's entry point.
pub fn compile_preprocessed(
    file: PathBuf,
    text: String,
    passes: &PassConfig,
) -> Result<CompiledProgram, (SourceSet, Diagnostics)> {
    compile_preprocessed_units(vec![(file, text)], passes, false)
}

/// [`compile`] for translation units already preprocessed (`yosegi cc` links the units its
/// objects carry); `openmp`: the host code is built with `-fopenmp`.
pub fn compile_preprocessed_units(
    units: Vec<(PathBuf, String)>,
    passes: &PassConfig,
    openmp: bool,
) -> Result<CompiledProgram, (SourceSet, Diagnostics)> {
    let files = units.iter().map(|(p, _)| p.clone()).collect();
    let parsed = front::parse_preprocessed_units(units)?;
    compile_parsed(files, parsed, passes, openmp)
}

/// Lowers a parsed program and runs the passes.
fn compile_parsed(
    files: Vec<PathBuf>,
    parsed: front::ParsedProgram,
    passes: &PassConfig,
    openmp: bool,
) -> Result<CompiledProgram, (SourceSet, Diagnostics)> {
    let mut warnings = parsed.warnings;
    let (mut module, lower_warnings) = match front::lower::lower_program(&parsed.sources, &parsed.units) {
        Ok(result) => result,
        Err(mut diags) => {
            warnings.append(&mut diags.0);
            return Err((parsed.sources, Diagnostics(warnings)));
        }
    };
    warnings.extend(lower_warnings);
    if let Err(message) = opt::run_passes(&mut module, passes) {
        warnings.push(
            Diagnostic::global_error(format!("internal compiler error in the optimisation passes: {message}"))
                .with_help("please report this with the program; removing the region's directives runs it on the host"),
        );
        return Err((parsed.sources, Diagnostics(warnings)));
    }
    let (openmp, openmp_diagnostics) = openmp::examine(&parsed.sources, &parsed.units, &module, openmp);
    warnings.extend(openmp_diagnostics);
    Ok(CompiledProgram {
        files,
        sources: parsed.sources,
        units: parsed.units,
        module,
        warnings,
        staging: passes.staging,
        openmp,
    })
}

/// The host C of a compiled program.
pub fn host_program(program: &CompiledProgram) -> HostProgram {
    host_c::emit_host_program(&program.sources, &program.units, &program.module)
}

/// Writes the host program's files (and `yosegi_rt.h`, for whoever reads them) into `dir`, a
/// directory the user chose (`emit -o`) or the run's private scratch directory; `place` names
/// the folder in the message of a full disk (see [`private_fs::disk_full`]).
pub fn write_host_files(host: &HostProgram, dir: &Path, place: &str) -> Result<(), Diagnostic> {
    std::fs::create_dir_all(dir).map_err(|e| {
        if private_fs::is_disk_full(&e) {
            return private_fs::disk_full(place, &format!("cannot create directory {}", dir.display()));
        }
        Diagnostic::global_error(format!("cannot create directory {}: {e}", dir.display()))
    })?;
    let header = std::iter::once(("yosegi_rt.h", host_c::RUNTIME_HEADER));
    for (name, code) in host.files.iter().map(|f| (f.name.as_str(), f.code.as_str())).chain(header) {
        let path = dir.join(name);
        std::fs::write(&path, code).map_err(|e| private_fs::write_error(&path, &e, place))?;
    }
    Ok(())
}

/// Writes the host program's files into a fresh private scratch directory: each file is new
/// (0600), never written through an entry that was there before.
fn write_private_host_files(host: &HostProgram, dir: &Path) -> Result<(), Diagnostic> {
    let place = private_fs::temp_dir_described();
    let header = std::iter::once(("yosegi_rt.h", host_c::RUNTIME_HEADER));
    for (name, code) in host.files.iter().map(|f| (f.name.as_str(), f.code.as_str())).chain(header) {
        let path = dir.join(name);
        private_fs::write_new(&path, code.as_bytes()).map_err(|e| private_fs::write_error(&path, &e, &place))?;
    }
    Ok(())
}

/// The C compiler: `$CC` when set, else `cc`.
fn c_compiler() -> String {
    std::env::var("CC").ok().filter(|c| !c.trim().is_empty()).unwrap_or_else(|| "cc".to_string())
}

fn defines_main(program: &CompiledProgram) -> bool {
    program.units.iter().flat_map(|u| &u.items).any(|item| {
        matches!(item, crate::front::ast::ExternalDecl::Function(f) if f.declarator.name.as_deref() == Some("main"))
    })
}

/// One item the command line adds to the host code's link, as `cc` takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkItem {
    /// `-lNAME` (also `-l:FILE`).
    Library(String),
    /// `-LDIR`.
    LibraryDir(PathBuf),
    /// `-Wl,...`, for the linker.
    LinkerFlag(String),
    /// An object, archive or shared library given as a file.
    File(PathBuf),
}

/// What `yosegi run`'s command line links the host code with, in its order (libraries resolve
/// left to right).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkOptions {
    pub items: Vec<LinkItem>,
}

impl LinkOptions {
    /// The arguments for the system compiler's link, and the folders the loader must search
    /// for the shared libraries among them: `program.so` is loaded into this process, so each
    /// `-L` folder (and each shared library's own) is also its run-time search path
    /// (`-Wl,-rpath`), as the user's `LD_LIBRARY_PATH` would otherwise have to be. Relative
    /// paths are made absolute: the compiler runs in the scratch folder.
    fn link_arguments(&self) -> Result<(Vec<std::ffi::OsString>, Vec<PathBuf>), Diagnostic> {
        let absolute = |p: &Path| {
            std::path::absolute(p).map_err(|e| Diagnostic::global_error(format!("cannot find {}: {e}", p.display())))
        };
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for item in &self.items {
            match item {
                LinkItem::Library(name) => args.push(format!("-l{name}").into()),
                LinkItem::LibraryDir(dir) => {
                    let dir = absolute(dir)?;
                    args.push(private_fs::glued("-L", &dir));
                    dirs.push(dir);
                }
                LinkItem::LinkerFlag(flag) => {
                    args.push(flag.into());
                    dirs.extend(rpath_dirs(flag));
                }
                LinkItem::File(file) => {
                    let file = absolute(file)?;
                    if is_shared_library(&file)
                        && let Some(parent) = file.parent()
                    {
                        dirs.push(parent.to_path_buf());
                    }
                    args.push(private_fs::operand(&file).into_os_string());
                }
            }
        }
        dirs.dedup();
        for dir in &dirs {
            let mut flag = std::ffi::OsString::from("-Wl,-rpath,");
            flag.push(dir);
            args.push(flag);
        }
        Ok((args, dirs))
    }
}

/// `libx.so`, `libx.so.1`: a shared library, by its name.
pub fn is_shared_library(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.ends_with(".so") || name.contains(".so.")
}

/// Whether a file named on the command line is for the link (an object, an archive, a shared
/// library), not a translation unit.
pub fn is_link_input(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "o" || e == "a") || is_shared_library(path)
}

/// The run-time search folders a `-Wl,` flag gives (`-Wl,-rpath,DIR`, `-Wl,-rpath=DIR`,
/// `-Wl,-R,DIR`), which the link check searches too.
fn rpath_dirs(flag: &str) -> Vec<PathBuf> {
    let Some(rest) = flag.strip_prefix("-Wl,") else { return Vec::new() };
    let parts: Vec<&str> = rest.split(',').collect();
    let mut dirs = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let part = parts[i].trim_start_matches('-');
        if let Some(dir) = part.strip_prefix("rpath=") {
            dirs.extend(dir.split(':').map(PathBuf::from));
        } else if (part == "rpath" || part == "R") && i + 1 < parts.len() {
            dirs.extend(parts[i + 1].split(':').map(PathBuf::from));
            i += 1;
        }
        i += 1;
    }
    dirs
}

/// Whether a tool's messages say that a write failed for want of space (`ENOSPC`, `EDQUOT`),
/// as gcc, clang and the linkers word it in English (tools run with the user's locale).
fn says_disk_full(output: &str) -> bool {
    output.contains("No space left on device") || output.contains("Disk quota exceeded")
}

/// The library a linker's "cannot find -lNAME" names.
fn missing_library(linker_output: &str) -> Option<&str> {
    let at = linker_output.find("cannot find -l")?;
    let rest = &linker_output[at + "cannot find ".len()..];
    Some(rest.split(|c: char| c == ':' || c.is_whitespace()).next().unwrap_or(rest))
}

/// Builds the host side into `scratch/program.so`, linked with `link` (the command line's
/// libraries and objects). The compiler runs in the scratch directory with umask 077 and its
/// temporary files there too.
pub fn build_host(program: &CompiledProgram, scratch: &ScratchDir, link: &LinkOptions) -> Result<PathBuf, Diagnostic> {
    let dir = scratch.path();
    if !defines_main(program) {
        let files: Vec<String> = program.files.iter().map(|f| f.display().to_string()).collect();
        return Err(Diagnostic::global_error(format!("no `main` function in {}", files.join(", ")))
            .with_help("give every file of the program on the command line: `yosegi run main.c util.c`"));
    }
    let host = host_program(program);
    write_private_host_files(&host, dir)?;
    let output = dir.join("program.so");
    let compiler = c_compiler();
    let mut cmd = private_fs::command_private(&compiler, dir);
    // -mcmodel=medium: programs such as Himeno XL define static arrays of many gigabytes, which
    // the small code model cannot address.
    // -Bsymbolic: the program's calls bind to its own functions, as in an executable, even where
    // the C library already loaded into this process has one of that name (NPB LU's `error()`).
    cmd.current_dir(dir).args(["-std=gnu11", "-O2", "-fPIC", "-mcmodel=medium", "-shared", "-Wl,-Bsymbolic", "-w", "-o", "program.so"]);
    cmd.args(program.openmp.compile_flags());
    for file in &host.files {
        cmd.arg(&file.name);
    }
    let (link_args, search_dirs) = link.link_arguments()?;
    cmd.args(link_args).args(program.openmp.link_flags()).arg("-lm");
    // In care: an interruption ends the compiler and everything it started with Yosegi.
    let result = crate::care::output(&mut cmd).map_err(|e| {
        Diagnostic::global_error(format!("cannot run the C compiler `{compiler}`: {e}"))
            .with_help("install a C compiler (gcc or clang) or point $CC at one")
    })?;
    if !result.status.success() {
        let mut text = String::from_utf8_lossy(&result.stderr).into_owned();
        text.push_str(&String::from_utf8_lossy(&result.stdout));
        if says_disk_full(&text) {
            let mut d = private_fs::disk_full(
                &private_fs::temp_dir_described(),
                &format!("the C compiler could not write the program's host code into the scratch folder `{}`", dir.display()),
            );
            d.message = format!("{}; the C compiler said:\n{}", d.message, text.trim_end());
            return Err(d);
        }
        if let Some(library) = missing_library(&text) {
            return Err(Diagnostic::global_error(format!(
                "cannot find the library `{library}`: no `-L` directory and no directory of the system's holds it"
            ))
            .with_help(format!("give the folder that holds lib{}.so or lib{0}.a with `-L DIR`, or install the library", library.trim_start_matches("-l"))));
        }
        return Err(Diagnostic::global_error(format!(
            "the C compiler failed on the program's host code:\n{}",
            text.trim_end()
        ))
        .with_help("this is usually an error in the program itself; `gcc -fsyntax-only` on it shows the same"));
    }
    // A shared object links with undefined functions; refuse them here, at their call.
    crate::back::link_check::check_symbols(&program.units, &output, &search_dirs)?;
    Ok(output)
}

/// Which device runs the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Sim,
    Cuda,
    /// `cuda` when a driver and a GPU are usable, else `sim` (with a one-line notice).
    Auto,
}

/// Whether the runtime prints its counters at exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsReport {
    Off,
    AtExit,
    /// As JSON, at exit.
    Json,
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub device: Device,
    /// How many devices kernels are split over (`--gpus`).
    pub gpus: crate::runtime::DeviceCount,
    pub stats: StatsReport,
    /// The program's own arguments (after `--`), as the shell gave them (not always UTF-8).
    pub args: Vec<std::ffi::OsString>,
}

type EntryFn = unsafe extern "C" fn(*const c_void, c_int, *mut *mut c_char) -> c_int;

/// A program's host code, loaded into this process.
pub struct LoadedProgram {
    entry: EntryFn,
}

/// Loads `program.so`. The file may be deleted afterwards (the scratch directory is, before the
/// program runs, since a program that calls `exit` never comes back to clean up).
pub fn load_program(library: &Path) -> Result<LoadedProgram, Diagnostic> {
    // SAFETY: the library is the one `build_host` just compiled from the user's program; loading
    // it runs no code of the program's beyond its (empty) constructors.
    let lib = unsafe { libloading::Library::new(library) }
        .map_err(|e| Diagnostic::global_error(format!("cannot load the program's host code: {e}")))?;
    // SAFETY: `__yosegi_entry` is defined by the generated glue with exactly this signature.
    let entry: EntryFn = unsafe { lib.get::<EntryFn>(b"__yosegi_entry\0") }
        .map(|sym| *sym)
        .map_err(|e| Diagnostic::global_error(format!("the program's host code has no entry point: {e}")))?;
    // The program's atexit handlers live in the library: it stays loaded until the process ends.
    std::mem::forget(lib);
    Ok(LoadedProgram { entry })
}

impl LoadedProgram {
    /// Installs the runtime, hands the program its table and runs the user's `main` with argv =
    /// [first file, args...]. Returns `main`'s status; a program that calls `exit` does not come
    /// back here.
    pub fn run(&self, program: &CompiledProgram, options: &RunOptions) -> Result<i32, Diagnostic> {
        use std::os::unix::ffi::OsStrExt;
        let argv0 = program.files.first().map(|p| p.as_os_str().to_os_string()).unwrap_or_else(|| "program".into());
        let mut c_args = Vec::new();
        for arg in std::iter::once(&argv0).chain(options.args.iter()) {
            let c = CString::new(arg.as_bytes())
                .map_err(|_| Diagnostic::global_error(format!("the program argument {arg:?} contains a NUL byte")))?;
            c_args.push(c);
        }
        // C's argv: mutable strings, null-terminated list. They live until the process ends.
        let mut argv: Vec<*mut c_char> = c_args.into_iter().map(CString::into_raw).collect();
        let argc = argv.len() as c_int;
        argv.push(std::ptr::null_mut());
        let argv_ptr = argv.as_mut_ptr();
        std::mem::forget(argv);

        let table = install_runtime(program, options)?;
        // SAFETY: the table is 'static, argv is a valid C argv.
        Ok(unsafe { (self.entry)(table, argc, argv_ptr) })
    }
}

/// Loads `program.so` and runs it (see [`LoadedProgram::run`]).
pub fn run_program(program: &CompiledProgram, library: &Path, options: &RunOptions) -> Result<i32, Diagnostic> {
    load_program(library)?.run(program, options)
}

pub use crate::runtime::start::exit_process;

/// `yosegi run --ranks N`: this command again as `N` ranks of an MPI job on this machine
/// (`mpirun -np N`, or `YOSEGI_MPIRUN`), every rank given the same standard input. Returns the
/// launcher's exit status.
pub fn launch_ranks(ranks: u32) -> Result<u8, Diagnostic> {
    use std::io::IsTerminal;
    let launcher = std::env::var("YOSEGI_MPIRUN").ok().filter(|l| !l.trim().is_empty()).unwrap_or_else(|| "mpirun".to_string());
    let version = crate::care::output(std::process::Command::new(&launcher).arg("--version")).map_err(|e| {
        Diagnostic::global_error(format!("--ranks {ranks} needs an MPI launcher, and `{launcher}` cannot be run: {e}"))
            .with_help("install MPI (Open MPI or MPICH), or set YOSEGI_MPIRUN to the site's launcher")
    })?;
    let open_mpi = String::from_utf8_lossy(&version.stdout).contains("Open MPI") || String::from_utf8_lossy(&version.stdout).contains("OpenRTE");
    // The same arguments, less `--ranks` (before `--`: the program's own are kept as they are).
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    let (mut skip_value, mut program_args) = (false, false);
    for arg in std::env::args_os().skip(1) {
        let ours = !program_args && !std::mem::take(&mut skip_value);
        program_args |= arg == "--";
        match arg.to_str() {
            Some("--ranks") if ours => skip_value = true,
            Some(a) if ours && a.starts_with("--ranks=") => {}
            _ if ours || program_args => args.push(arg),
            _ => {}
        }
    }
    let exe = std::env::current_exe().map_err(|e| Diagnostic::global_error(format!("cannot find the yosegi binary: {e}")))?;
    let mut command = std::process::Command::new(&launcher);
    command.arg("-np").arg(ranks.to_string());
    if open_mpi {
        // Several ranks on a machine of fewer cores, as for testing on the simulator.
        command.arg("--oversubscribe");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            command.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
    }
    // The job's scratch folder (private, removed when the job ends or is interrupted). Open MPI
    // keeps a session folder under the temporary folder, and two launchers starting together
    // race to create the shared `ompi.<host>.<uid>` and one fails ("File exists"): each job's
    // is in here.
    let session = ScratchDir::new()?;
    if open_mpi {
        // Open MPI 4 (ORTE) and 5 (PRRTE) name the setting differently.
        command.env("OMPI_MCA_orte_tmpdir_base", session.path()).env("PRTE_MCA_prte_tmpdir_base", session.path());
    }
    command.arg(exe).args(args);
    // Every rank reads the same input: ours, kept in a file in the job's scratch folder (a
    // launcher gives it to rank 0 only).
    if !std::io::stdin().is_terminal() {
        let path = session.path().join("stdin");
        let kept = private_fs::create_new(&path).and_then(|mut file| std::io::copy(&mut std::io::stdin().lock(), &mut file));
        kept.map_err(|e| {
            if private_fs::is_disk_full(&e) {
                return private_fs::write_error(&path, &e, &private_fs::temp_dir_described());
            }
            Diagnostic::global_error(format!("cannot keep the standard input in {}: {e}", path.display()))
        })?;
        command.env(crate::runtime::ranks::STDIN_VARIABLE, &path).stdin(std::process::Stdio::null());
    }
    // In care, in our group: a signal to Yosegi reaches the launcher, which ends its ranks.
    let status = crate::care::status_sharing_group(&mut command).map_err(|e| Diagnostic::global_error(format!("cannot run `{launcher}`: {e}")))?;
    Ok(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

/// Installs the process's runtime for this program and returns the table for its glue.
fn install_runtime(program: &CompiledProgram, options: &RunOptions) -> Result<*const c_void, Diagnostic> {
    use std::io::IsTerminal;
    let config = RuntimeConfig {
        device: match options.device {
            Device::Sim => DeviceKind::Sim,
            Device::Cuda => DeviceKind::Cuda,
            Device::Auto => DeviceKind::Auto,
        },
        stats: match options.stats {
            StatsReport::Off => StatsMode::Off,
            StatsReport::AtExit => StatsMode::Print,
            StatsReport::Json => StatsMode::Json,
        },
        color: if std::io::stderr().is_terminal() { ColorMode::Always } else { ColorMode::Never },
        staging: program.staging,
        gpus: options.gpus,
    };
    crate::runtime::start::install_program(Arc::new(program.module.clone()), Arc::new(program.sources.clone()), config)
        .map_err(|why| Diagnostic::global_error(why).with_help("run on the simulator with --device sim"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile_source(dir: &Path, name: &str, code: &str) -> CompiledProgram {
        let path = dir.join(name);
        std::fs::write(&path, code).unwrap();
        compile(&[path], &PreprocessOptions::default(), &PassConfig::default())
            .unwrap_or_else(|(sources, d)| panic!("{}", crate::diag::render(&sources, &d.0, false)))
    }

    #[test]
    fn compiler_errors_become_a_diagnostic_with_the_output() {
        let dir = ScratchDir::new().unwrap();
        // Parses (the parser does not check types), but the C compiler refuses it.
        let program = compile_source(dir.path(), "bad.c", "struct s { int x; };\nint main(void) { struct s v; return v.y; }\n");
        let err = build_host(&program, &dir, &LinkOptions::default()).unwrap_err();
        assert!(err.message.contains("the C compiler failed"), "{}", err.message);
        assert!(err.message.contains("bad.c"), "{}", err.message);
        assert!(dir.path().join("yosegi_rt.h").exists());
    }

    #[test]
    fn a_program_without_main_is_refused() {
        let dir = ScratchDir::new().unwrap();
        let program = compile_source(dir.path(), "lib.c", "int twice(int x) { return 2 * x; }\n");
        let err = build_host(&program, &dir, &LinkOptions::default()).unwrap_err();
        assert!(err.message.contains("no `main` function"), "{}", err.message);
    }

    #[test]
    fn a_program_without_regions_builds_and_runs() {
        let dir = ScratchDir::new().unwrap();
        let code = "#include <stdlib.h>\nint main(int argc, char **argv) {\n    int *p = malloc(sizeof(int));\n    *p = argc + atoi(argv[1]);\n    int r = *p;\n    free(p);\n    return r;\n}\n";
        let program = compile_source(dir.path(), "ok.c", code);
        let lib = build_host(&program, &dir, &LinkOptions::default()).unwrap();
        let options = RunOptions { device: Device::Sim, gpus: crate::runtime::DeviceCount::All, stats: StatsReport::Off, args: vec!["40".into()] };
        assert_eq!(run_program(&program, &lib, &options).unwrap(), 42);
    }
}
