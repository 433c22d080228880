//! `yosegi cc` (and `yosegi-cc`): a drop-in C compiler driver for Makefiles.
//!
//! * `-c file.c [-o file.o]` checks the file through Yosegi's front end (diagnostics as
//!   `yosegi run` gives them, exit status 2 on errors), compiles it with the system C compiler
//!   as plain sequential C (an ordinary object: the OpenACC directives ignored), and adds the
//!   preprocessed source as the section `.yosegi_src`.
//! * Linking (no `-c`) gathers every input carrying that section (and every `.c` given
//!   directly), compiles them together as one program (as `yosegi run` would), compiles the
//!   generated host code with the user's code-generation flags, compiles the kernels for the
//!   GPUs `-gpu=ccXY` names ([`gpu_targets`]), embeds the program image (IR, sources and
//!   kernel images, [`crate::image`]) and links the executable against the runtime library
//!   `libyosegi_rt.so` (the `yosegi-rt` crate), whose `yosegi_rt_start` runs it
//!   (`YOSEGI_DEVICE`, `YOSEGI_STATS`). The objects' sequential code is left out then. Static
//!   libraries given as files (`libx.a`, as CMake links its library targets), or found for a
//!   `-lx` in the link's `-L` directories as the linker would find them ([`static_library`]),
//!   are opened: their members with the section join the program the same way, the others
//!   stay in an archive. Inputs without the section (objects of other compilers, libraries of
//!   the system's directories, shared libraries) are linked as they are.
//! * The system compiler is `$YOSEGI_HOST_CC`, else `cc`.
//! * `-fyosegi-staging=auto|on|off` and `-fyosegi-fusion=auto|on|off` are `yosegi run`'s
//!   `--staging` and `--fusion`, for the link (where the kernels are compiled).
//! * Flags: `-I -D -U -std=` reach the preprocessor; `-O* -g* -f* -m* -W* -w -pthread` the host
//!   compiler (a `-f`/`-m` flag the host compiler does not know is dropped with one warning);
//!   `-l -L -Wl,* -shared? -static` the link. `-E`, `-M` and `-MM` (text or dependencies
//!   only) run the system compiler alone; `-MD`, `-MMD` and their `-MF -MT -MQ -MP` have the
//!   system compiler write the dependency file while it compiles the object Yosegi makes. PGI/NVIDIA's OpenACC flags (`-acc`, `-Minfo=` of
//!   other kinds than `accel`, `-Msafeptr`, `-fast`, the items of `-ta=`/`-gpu=` other than architectures) are dropped with one warning: Yosegi always compiles the
//!   directives; `-fopenacc`, which asks for just that, is accepted silently. The sequential
//!   object is compiled with `_OPENACC` defined, as Yosegi's preprocessing defines it, and `-v`
//!   reaches the system compiler: CMake identifies the driver as the GNU compiler it drives,
//!   detects its ABI and finds OpenACC (`find_package(OpenACC)`: `-fopenacc`).
//! * `-Minfo`, `-Minfo=accel`, `-Minfo=all` (or a list with `accel`): each source compiled
//!   prints, on stderr, one line per compute loop and data movement
//!   ([`crate::explain::brief`], what `yosegi explain --brief` prints).
//! * `-fopenmp` (and PGI's `-mp`) is host OpenMP, as gcc builds it: cpp defines `_OPENMP`, the
//!   objects and the generated host code are compiled with it and the link gets it
//!   (`driver::openmp`); without it, a program calling OpenMP's API is linked with libgomp.
//! * `--help`, `--version`, `-v` alone, `-dumpversion`, `-dumpmachine` and the `-print-*`
//!   questions are answered as gcc answers them ([`questions`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::diag::Diagnostic;
use crate::diag::formats::DiagnosticsFormat;
use crate::driver;
use crate::front::preprocess::{self, BuiltinHeaders};
use crate::front::PreprocessOptions;
use crate::image::ProgramImage;
use crate::opt::{FusionMode, PassConfig, StagingMode};
use crate::care;
use crate::private_fs::{self, ScratchDir};
use crate::source::SourceSet;

mod gpu_targets;
mod questions;

/// The section of an object that carries its preprocessed source.
const SOURCE_SECTION: &str = ".yosegi_src";
/// The start of that section's contents; the path and the text follow, separated by a newline.
const SOURCE_MAGIC: &str = "YOSEGI-SRC1\n";
const EXIT_BAD_INPUT: i32 = 2;

/// One item of the link line, in the user's order (libraries resolve left to right).
#[derive(Clone, Debug, PartialEq)]
enum LinkItem {
    Input(PathBuf),
    Flag(String),
}

#[derive(Debug, Default)]
struct CcArgs {
    compile_only: bool,
    output: Option<PathBuf>,
    sources: Vec<PathBuf>,
    /// Inputs and link flags in order; `.c` sources take their place here too.
    link: Vec<LinkItem>,
    preprocess: PreprocessOptions,
    /// Code-generation flags for the host compiler (`-O2`, `-g`, `-fopenmp`, `-march=native`).
    host_flags: Vec<String>,
    /// `-E`, `-M`, `-MM`: only preprocessed text or dependencies are asked for, and the system
    /// compiler does the whole job.
    passthrough: bool,
    /// `-MD`, `-MMD`, `-MP`, `-MF F`, `-MT T`, `-MQ T`: a dependency file written beside a
    /// compile (Makefiles with `-MMD`, CMake): the system compiler writes it while it compiles
    /// the object, which Yosegi makes as without them.
    dependency_flags: Vec<String>,
    no_warnings: bool,
    /// `-fdiagnostics-format=json|sarif-stderr|text` (GCC's spelling): Yosegi's diagnostics in
    /// that format; the host compiler gets the flag too.
    diagnostics_format: Option<DiagnosticsFormat>,
    /// Flags dropped, for the one warning.
    dropped: Vec<String>,
    /// Arguments only Yosegi reads (nvc's `-ta=`, `-gpu=`, `-Minfo`, the `-fyosegi-` passes'
    /// modes), kept from the system compiler when it does the work (`-E`, `-M`).
    yosegi_only: Vec<String>,
    /// `-Minfo`, `-Minfo=accel`, `-Minfo=all` (or a list naming `accel` or `all`): each source
    /// compiled prints [`crate::explain::brief`] on stderr.
    minfo: bool,
    /// `-gpu=cc90,...`: the architectures the link compiles kernels for ([`gpu_targets`]).
    gpus: gpu_targets::GpuChoice,
    /// `-fyosegi-staging=` and `-fyosegi-fusion=`: the passes' modes, as `yosegi run`'s
    /// `--staging` and `--fusion` set them. They act where the kernels are compiled, which is
    /// the link; a compile (`-c`) accepts them and does nothing else with them.
    passes: PassConfig,
}

/// `_OPENACC` as `cpp -fopenacc` (Yosegi's preprocessing) defines it: OpenACC 2.6's date.
const OPENACC_MACRO: &str = "-D_OPENACC=201711";

/// `yosegi run --staging` and `--fusion` in the driver's GCC-style spelling.
const STAGING_FLAG: &str = "-fyosegi-staging=";
const FUSION_FLAG: &str = "-fyosegi-fusion=";

/// The mode `arg` (`FLAG` followed by `auto`, `on` or `off`) names, from `modes` in that order.
fn pass_mode<T: Copy>(arg: &str, flag: &str, pass: &str, modes: [T; 3]) -> Result<T, String> {
    match &arg[flag.len()..] {
        "auto" => Ok(modes[0]),
        "on" => Ok(modes[1]),
        "off" => Ok(modes[2]),
        other => Err(format!("`{flag}{other}`: the {pass} mode is auto, on or off")),
    }
}

/// Flags taking their value as the next argument.
const WITH_VALUE: &[&str] = &["-o", "-I", "-D", "-U", "-L", "-l", "-MF", "-MT", "-MQ", "-include", "-isystem", "-x"];

fn parse_args(args: &[String]) -> Result<CcArgs, String> {
    let mut cc = CcArgs::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        let mut value = |flag: &str| -> Result<String, String> {
            if arg.len() > flag.len() {
                return Ok(arg[flag.len()..].to_string());
            }
            let v = args.get(i).cloned().ok_or_else(|| format!("`{flag}` needs a value"))?;
            i += 1;
            Ok(v)
        };
        let flag = WITH_VALUE.iter().copied().filter(|f| arg.starts_with(f)).max_by_key(|f| f.len());
        match flag {
            Some("-o") => cc.output = Some(PathBuf::from(value("-o")?)),
            Some("-I") => cc.preprocess.include_dirs.push(PathBuf::from(value("-I")?)),
            Some("-D") => cc.preprocess.defines.push(value("-D")?),
            Some("-U") => cc.preprocess.cpp_flags.push(format!("-U{}", value("-U")?)),
            Some("-L") => cc.link.push(LinkItem::Flag(format!("-L{}", value("-L")?))),
            Some("-l") => cc.link.push(LinkItem::Flag(format!("-l{}", value("-l")?))),
            Some(f @ ("-MF" | "-MT" | "-MQ")) => {
                let v = value(f)?;
                cc.dependency_flags.extend([f.to_string(), v]);
            }
            Some(f @ ("-include" | "-isystem")) => {
                let v = value(f)?;
                cc.preprocess.cpp_flags.extend([f.to_string(), v]);
            }
            Some("-x") => {
                let v = value("-x")?;
                if v != "c" {
                    return Err(format!("`-x {v}`: Yosegi compiles C only"));
                }
            }
            _ => match arg {
                "-c" => cc.compile_only = true,
                "-w" => {
                    cc.no_warnings = true;
                    cc.host_flags.push("-w".into());
                }
                "-E" | "-M" | "-MM" => {
                    cc.passthrough = true;
                    cc.host_flags.push(arg.to_string());
                }
                "-MD" | "-MMD" | "-MP" => cc.dependency_flags.push(arg.to_string()),
                // Asks for what Yosegi always does (CMake's `find_package(OpenACC)` adds it).
                "-fopenacc" => {}
                "-acc" | "-fast" => cc.dropped.push(arg.to_string()),
                // PGI/NVIDIA's OpenMP (`-mp`, `-mp=multicore`, `-mp=gpu`): host OpenMP here,
                // where a `target` construct runs on the host as gcc runs it without offload.
                _ if arg == "-mp" || arg.starts_with("-mp=") => {
                    if !cc.host_flags.iter().any(|f| f == "-fopenmp") {
                        cc.host_flags.push("-fopenmp".to_string());
                    }
                }
                "-pthread" | "-static" | "-rdynamic" => cc.host_flags.push(arg.to_string()),
                // Verbose: the system compiler's commands (CMake reads the link line from it).
                "-v" => cc.host_flags.push(arg.to_string()),
                "-S" => return Err("`-S`: Yosegi produces objects and executables, not assembly".to_string()),
                "-shared" => return Err("`-shared`: Yosegi links executables; build libraries without OpenACC with the system compiler".to_string()),
                _ if arg.starts_with("-ta=") || arg.starts_with("-gpu=") => {
                    cc.yosegi_only.push(arg.to_string());
                    if let Some(unused) = cc.gpus.read_flag(arg)? {
                        cc.dropped.push(unused);
                    }
                }
                _ if minfo_accel(arg) => {
                    cc.minfo = true;
                    cc.yosegi_only.push(arg.to_string());
                }
                _ if arg.starts_with("-acc=") || arg.starts_with("-Minfo") || arg.starts_with("-M") => cc.dropped.push(arg.to_string()),
                _ if arg.starts_with("-std=") => cc.preprocess.cpp_flags.push(arg.to_string()),
                _ if arg.starts_with(STAGING_FLAG) => {
                    cc.passes.staging = pass_mode(arg, STAGING_FLAG, "staging", [StagingMode::Auto, StagingMode::Force, StagingMode::Off])?;
                    cc.yosegi_only.push(arg.to_string());
                }
                _ if arg.starts_with(FUSION_FLAG) => {
                    cc.passes.fusion = pass_mode(arg, FUSION_FLAG, "fusion", [FusionMode::Auto, FusionMode::On, FusionMode::Off])?;
                    cc.yosegi_only.push(arg.to_string());
                }
                _ if arg.starts_with("-fdiagnostics-format=") => {
                    cc.diagnostics_format = Some(DiagnosticsFormat::parse(&arg["-fdiagnostics-format=".len()..])?);
                    cc.host_flags.push(arg.to_string());
                }
                _ if arg.starts_with("-Wl,") || arg.starts_with("-Xlinker") => cc.link.push(LinkItem::Flag(arg.to_string())),
                _ if arg.starts_with("-O") || arg.starts_with("-g") || arg.starts_with("-W") => cc.host_flags.push(arg.to_string()),
                _ if arg.starts_with("-f") || arg.starts_with("-m") => cc.host_flags.push(arg.to_string()),
                _ if arg.starts_with('-') && arg.len() > 1 => return Err(format!("unknown flag `{arg}`")),
                _ => {
                    let path = PathBuf::from(arg);
                    if path.extension().is_some_and(|e| e == "c") {
                        cc.sources.push(path.clone());
                    }
                    cc.link.push(LinkItem::Input(path));
                }
            },
        }
    }
    // `_OPENMP` for Yosegi's preprocessing as for the system compiler's (`-fopenmp` once,
    // however many `-mp` spellings asked for it).
    cc.preprocess.openmp = cc.host_flags.iter().any(|f| f == "-fopenmp");
    let mut seen = false;
    cc.host_flags.retain(|f| f != "-fopenmp" || !std::mem::replace(&mut seen, true));
    if cc.link.iter().all(|l| !matches!(l, LinkItem::Input(_))) && !cc.passthrough {
        return Err("no input files".to_string());
    }
    if cc.compile_only && cc.output.is_some() && cc.sources.len() > 1 {
        return Err("`-o` with `-c` and several sources: give one source per command, or no `-o`".to_string());
    }
    Ok(cc)
}

/// Whether `arg` asks nvc for its accelerator feedback: `-Minfo` alone (all of it),
/// `-Minfo=accel`, `-Minfo=all`, or a comma list naming one of them (`-Minfo=accel,loop`).
/// Other kinds (`-Minfo=inline`) say what nvc's host optimiser did and stay dropped.
fn minfo_accel(arg: &str) -> bool {
    match arg.strip_prefix("-Minfo") {
        Some("") => true,
        Some(list) => list.strip_prefix('=').is_some_and(|l| l.split(',').any(|k| k == "accel" || k == "all")),
        None => false,
    }
}

/// `yosegi cc ARGS...`: returns the exit status.
pub fn main(args: &[OsString]) -> i32 {
    let args: Vec<String> = match args.iter().map(|a| a.clone().into_string()).collect() {
        Ok(a) => a,
        Err(bad) => return usage_error(&format!("the argument {bad:?} is not UTF-8")),
    };
    if let Some(question) = questions::question(&args) {
        return questions::answer(question);
    }
    let mut cc = match parse_args(&args) {
        Ok(cc) => cc,
        Err(message) => return usage_error(&message),
    };
    if let Some(format) = cc.diagnostics_format {
        format.choose();
    }
    if cc.passthrough {
        return run_system_compiler(&cc, &args);
    }
    filter_host_flags(&mut cc);
    cc.preprocess.openmp = cc.host_flags.iter().any(|f| f == "-fopenmp");
    if !cc.dropped.is_empty() && !cc.no_warnings {
        eprintln!("yosegi cc: warning: ignoring {} (Yosegi compiles the OpenACC directives itself)", cc.dropped.join(" "));
    }
    let scratch = match ScratchDir::new() {
        Ok(s) => s,
        Err(d) => return report(&SourceSet::default(), &[d]),
    };
    let result = if cc.compile_only { compile_objects(&cc, &scratch) } else { link(&cc, &scratch) };
    match result {
        Ok(()) => 0,
        Err(Failure::Diagnostics(sources, diags)) => report(&sources, &diags),
        Err(Failure::Status(code)) => code,
    }
}

enum Failure {
    Diagnostics(SourceSet, Vec<Diagnostic>),
    /// The system compiler or linker failed and said why on stderr.
    Status(i32),
}

impl From<Diagnostic> for Failure {
    fn from(d: Diagnostic) -> Failure {
        Failure::Diagnostics(SourceSet::default(), vec![d])
    }
}

fn usage_error(message: &str) -> i32 {
    eprintln!("yosegi cc: error: {message}");
    eprintln!("usage: yosegi cc [-c] [-o OUT] [-I DIR] [-D NAME[=VAL]] [-O2] [-fopenmp] [-lLIB] FILE.c|FILE.o...  (yosegi cc --help lists the options)");
    EXIT_BAD_INPUT
}

fn report(sources: &SourceSet, diags: &[Diagnostic]) -> i32 {
    use std::io::IsTerminal;
    if !diags.is_empty() {
        eprint!("{}", DiagnosticsFormat::current().render(sources, diags, std::io::stderr().is_terminal()));
    }
    if diags.iter().any(Diagnostic::is_error) { EXIT_BAD_INPUT } else { 0 }
}

/// The system compiler with the user's arguments, less what only Yosegi reads.
fn run_system_compiler(cc: &CcArgs, args: &[String]) -> i32 {
    let keep: Vec<&String> = args.iter().filter(|a| !cc.dropped.contains(a) && !cc.yosegi_only.contains(a)).collect();
    // Given our input: `cc -E -` reads it.
    match care::status_with_input(Command::new(host_compiler()).args(keep)) {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("yosegi cc: error: cannot run the C compiler `{}`: {e}", host_compiler());
            EXIT_BAD_INPUT
        }
    }
}

/// Drops the `-f`/`-m` flags the host compiler does not accept (PGI's `-mcmodel=medium` is
/// gcc's too; `-Msafeptr` never gets here).
fn filter_host_flags(cc: &mut CcArgs) {
    let compiler = host_compiler();
    let mut kept = Vec::new();
    for flag in std::mem::take(&mut cc.host_flags) {
        let probe = flag.starts_with("-f") || flag.starts_with("-m");
        let accepted = !probe
            || care::status(
                Command::new(&compiler)
                    .args([flag.as_str(), "-Werror", "-E", "-x", "c", "/dev/null", "-o", "/dev/null"])
                    .stderr(std::process::Stdio::null()),
            )
            .is_ok_and(|s| s.success());
        if accepted { kept.push(flag) } else { cc.dropped.push(flag) }
    }
    cc.host_flags = kept;
}

/// Preprocesses and checks one source through the front end; its text for the object.
fn check_source(cc: &CcArgs, source: &Path, builtin: &BuiltinHeaders) -> Result<String, Failure> {
    let text = preprocess::preprocess(source, &cc.preprocess, builtin)?;
    match driver::compile_preprocessed_units(vec![(source.to_path_buf(), text.clone())], &cc.passes, cc.preprocess.openmp) {
        Ok(program) => {
            if !cc.no_warnings {
                report(&program.sources, &program.warnings);
            }
            if cc.minfo {
                eprint!("{}", crate::explain::brief::brief(&program));
            }
            Ok(text)
        }
        Err((sources, diags)) => {
            let shown = diags.0.into_iter().filter(|d| !cc.no_warnings || d.is_error()).collect();
            Err(Failure::Diagnostics(sources, shown))
        }
    }
}

fn object_name(source: &Path) -> PathBuf {
    PathBuf::from(source.file_stem().unwrap_or_default()).with_extension("o")
}

fn compile_objects(cc: &CcArgs, scratch: &ScratchDir) -> Result<(), Failure> {
    let builtin = BuiltinHeaders::new()?;
    for source in &cc.sources {
        let text = check_source(cc, source, &builtin)?;
        let output = cc.output.clone().unwrap_or_else(|| object_name(source));
        let plain = scratch.path().join("plain.o");
        let mut cmd = Command::new(host_compiler());
        cmd.arg("-c").args(&cc.host_flags);
        for dir in &cc.preprocess.include_dirs {
            cmd.arg(private_fs::glued("-I", dir));
        }
        for def in &cc.preprocess.defines {
            cmd.arg(format!("-D{def}"));
        }
        // The sequential object sees the program as Yosegi does: with `_OPENACC` (OpenACC's
        // macro, which Yosegi's preprocessing defines), so that `#ifdef _OPENACC` code compiles
        // the same branch in both.
        cmd.arg(OPENACC_MACRO);
        cmd.args(&cc.preprocess.cpp_flags).args(dependency_flags(cc, &output)).arg(private_fs::operand(source)).arg("-o").arg(&plain);
        run(&mut cmd)?;
        let payload = scratch.path().join("source.payload");
        let mut bytes = SOURCE_MAGIC.as_bytes().to_vec();
        bytes.extend(source.to_string_lossy().as_bytes());
        bytes.push(b'\n');
        bytes.extend(text.as_bytes());
        std::fs::write(&payload, bytes).map_err(|e| scratch_write_error(&payload, &e))?;
        let mut objcopy = Command::new("objcopy");
        objcopy
            .arg(format!("--add-section={SOURCE_SECTION}={}", payload.display()))
            .arg(format!("--set-section-flags={SOURCE_SECTION}=readonly,contents"))
            .arg(&plain)
            .arg(&output);
        run(&mut objcopy)?;
    }
    Ok(())
}

/// The dependency flags for the compile of the object `output`: the user's, with the file and
/// the target named as the user's compiler would name them (`x.d` and `x.o` for `-o x.o`), since
/// the system compiler writes its object to a scratch file first.
fn dependency_flags(cc: &CcArgs, output: &Path) -> Vec<std::ffi::OsString> {
    let flags = &cc.dependency_flags;
    if !flags.iter().any(|f| f == "-MD" || f == "-MMD") {
        return Vec::new();
    }
    let mut out: Vec<std::ffi::OsString> = flags.iter().map(Into::into).collect();
    if !flags.iter().any(|f| f == "-MF") {
        out.push("-MF".into());
        out.push(output.with_extension("d").into_os_string());
    }
    if !flags.iter().any(|f| f == "-MT" || f == "-MQ") {
        out.push("-MT".into());
        out.push(output.as_os_str().to_owned());
    }
    out
}

/// The sources the members of the static library `archive` carry (members made by `yosegi cc
/// -c`, as CMake's library targets are), and the archive to link instead: the original when no
/// member carries a source, one of the other members when some do (their sequential code is
/// left out, as for objects), none when all do. `tag` keeps the scratch folders apart.
fn archive_units(archive: &Path, tag: usize, scratch: &ScratchDir) -> Result<(Vec<CarriedSource>, Option<PathBuf>), Failure> {
    if !archive.is_file() {
        return Err(Diagnostic::global_error(format!("cannot read {}: no such file", archive.display())).into());
    }
    let absolute = std::fs::canonicalize(archive).map_err(|e| Diagnostic::global_error(format!("cannot read {}: {e}", archive.display())))?;
    let dir = scratch.path().join(format!("archive{tag}-{}", archive.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()));
    std::fs::create_dir_all(&dir).map_err(|e| Diagnostic::global_error(format!("cannot create {}: {e}", dir.display())))?;
    let listed = care::output(Command::new("ar").arg("t").arg(&absolute)).map_err(|e| Diagnostic::global_error(format!("cannot run `ar`: {e}")).with_help("install binutils"))?;
    if !listed.status.success() {
        // Not an archive `ar` reads: linked as it is.
        return Ok((Vec::new(), Some(archive.to_path_buf())));
    }
    run(Command::new("ar").current_dir(&dir).arg("x").arg(&absolute))?;
    let mut carried = Vec::new();
    let mut rest = Vec::new();
    for member in String::from_utf8_lossy(&listed.stdout).lines().map(str::trim).filter(|m| !m.is_empty()) {
        let path = dir.join(member);
        match carried_source(&path, scratch)? {
            Some(unit) => carried.push(unit),
            None => rest.push(path),
        }
    }
    if carried.is_empty() {
        return Ok((carried, Some(archive.to_path_buf())));
    }
    if rest.is_empty() {
        return Ok((carried, None));
    }
    let filtered = dir.join("rest.a");
    run(Command::new("ar").arg("rcs").arg(&filtered).args(&rest))?;
    Ok((carried, Some(filtered)))
}

/// A source an object carries: the file it was compiled from and its preprocessed text.
type CarriedSource = (PathBuf, String);

/// The source an object carries, if it was made by `yosegi cc -c`.
fn carried_source(object: &Path, scratch: &ScratchDir) -> Result<Option<CarriedSource>, Failure> {
    let is_object = object.extension().is_some_and(|e| e == "o");
    if !is_object {
        return Ok(None);
    }
    if !object.is_file() {
        return Err(Diagnostic::global_error(format!("cannot read {}: no such file", object.display())).into());
    }
    let out = scratch.path().join("carried.bin");
    let _ = std::fs::remove_file(&out);
    // objcopy refuses to dump a section the object lacks: an object of another compiler.
    let dumped = care::status(
        Command::new("objcopy")
            .arg(format!("--dump-section={SOURCE_SECTION}={}", out.display()))
            .arg(object)
            .arg(scratch.path().join("carried.o"))
            .stderr(std::process::Stdio::null()),
    )
    .map_err(|e| Diagnostic::global_error(format!("cannot run `objcopy`: {e}")).with_help("install binutils"))?;
    if !dumped.success() {
        return Ok(None);
    }
    let bytes = std::fs::read(&out).unwrap_or_default();
    let Some(rest) = bytes.strip_prefix(SOURCE_MAGIC.as_bytes()) else { return Ok(None) };
    let text = String::from_utf8_lossy(rest).into_owned();
    let (path, source) = text.split_once('\n').unwrap_or((&text, ""));
    Ok(Some((PathBuf::from(path), source.to_string())))
}

/// The static library the linker would take for `-lNAME` (or `-l:FILE`) from the link's `-L`
/// directories, in order: `libNAME.a` in the first directory that has `libNAME.a` or
/// `libNAME.so`, unless that is the shared one and the link is not `-static`. Libraries found
/// only in the system's directories are the system's, never built by `yosegi cc`: `None`.
fn static_library(cc: &CcArgs, flag: &str) -> Option<PathBuf> {
    let name = flag.strip_prefix("-l")?;
    let static_link = cc.host_flags.iter().chain(cc.link.iter().filter_map(|l| match l {
        LinkItem::Flag(f) => Some(f),
        LinkItem::Input(_) => None,
    })).any(|f| f == "-static" || f == "-Wl,-Bstatic");
    let dirs = cc.link.iter().filter_map(|l| match l {
        LinkItem::Flag(f) => f.strip_prefix("-L").map(PathBuf::from),
        LinkItem::Input(_) => None,
    });
    for dir in dirs {
        if let Some(file) = name.strip_prefix(':') {
            let path = dir.join(file);
            if path.is_file() {
                return path.extension().is_some_and(|e| e == "a").then_some(path);
            }
            continue;
        }
        let (archive, shared) = (dir.join(format!("lib{name}.a")), dir.join(format!("lib{name}.so")));
        if shared.exists() && !static_link {
            return None;
        }
        if archive.is_file() {
            return Some(archive);
        }
    }
    None
}

fn link(cc: &CcArgs, scratch: &ScratchDir) -> Result<(), Failure> {
    let builtin = BuiltinHeaders::new()?;
    let output = cc.output.clone().unwrap_or_else(|| PathBuf::from("a.out"));
    let mut units = Vec::new();
    let mut others = Vec::new();
    for item in &cc.link {
        match item {
            LinkItem::Input(path) if cc.sources.contains(path) => {
                units.push((path.clone(), check_source(cc, path, &builtin)?));
            }
            LinkItem::Input(path) if path.extension().is_some_and(|e| e == "a") => {
                let (carried, rest) = archive_units(path, units.len(), scratch)?;
                units.extend(carried);
                others.extend(rest.map(LinkItem::Input));
            }
            LinkItem::Input(path) => match carried_source(path, scratch)? {
                Some(unit) => units.push(unit),
                None => others.push(item.clone()),
            },
            LinkItem::Flag(flag) => match static_library(cc, flag) {
                // A static library of the project's (`-L lib -lsolver`): its members made by
                // `yosegi cc -c` join the program as an archive given as a file does.
                Some(archive) => {
                    let (carried, rest) = archive_units(&archive, units.len(), scratch)?;
                    if carried.is_empty() {
                        others.push(item.clone());
                    } else {
                        units.extend(carried);
                        others.extend(rest.map(LinkItem::Input));
                    }
                }
                None => others.push(item.clone()),
            },
        }
    }
    let mut cmd = Command::new(host_compiler());
    cmd.args(&cc.host_flags);
    if units.is_empty() {
        // Nothing of Yosegi's: an ordinary link.
        add_link_items(&mut cmd, &others);
        cmd.arg("-o").arg(&output);
        return run(&mut cmd);
    }
    let program = match driver::compile_preprocessed_units(units, &cc.passes, cc.preprocess.openmp) {
        Ok(p) => p,
        Err((sources, diags)) => return Err(Failure::Diagnostics(sources, diags.0)),
    };
    let host = driver::host_program(&program);
    let dir = scratch.path();
    driver::write_host_files(&host, dir, &private_fs::temp_dir_described())?;
    let mut objects = Vec::new();
    let mcmodel = cc.host_flags.iter().any(|f| f.starts_with("-mcmodel="));
    for file in &host.files {
        let object = dir.join(&file.name).with_extension("o");
        let mut c = Command::new(host_compiler());
        c.current_dir(dir).arg("-c").args(&cc.host_flags).args(["-std=gnu11", "-w", "-Dmain=__yosegi_user_main"]);
        if !mcmodel {
            // Programs such as NPB define static arrays larger than the small model addresses.
            c.arg("-mcmodel=medium");
        }
        c.arg(&file.name).arg("-o").arg(&object);
        run(&mut c)?;
        objects.push(object);
    }
    let kernel_images = ahead_of_time_images(cc, &program);
    let image = ProgramImage::encode(&program.module, &program.sources, program.staging, &kernel_images);
    let image_path = dir.join("program.image");
    std::fs::write(&image_path, image).map_err(|e| scratch_write_error(&image_path, &e))?;
    let start = dir.join("yosegi_start.c");
    std::fs::write(&start, start_code(&image_path)).map_err(|e| scratch_write_error(&start, &e))?;
    let start_object = dir.join("yosegi_start.o");
    run(Command::new(host_compiler()).arg("-c").arg(&start).arg("-o").arg(&start_object))?;
    let lib_dir = runtime_library_dir()?;
    cmd.args(&objects).arg(&start_object);
    add_link_items(&mut cmd, &others);
    // With -fopenmp (in the host flags) the compiler links libgomp itself; without, a program
    // calling OpenMP's API gets it here.
    if !program.openmp.enabled {
        cmd.args(program.openmp.link_flags());
    }
    cmd.arg(private_fs::glued("-L", &lib_dir)).arg(format!("-Wl,-rpath,{}", lib_dir.display())).args(["-lyosegi_rt", "-lm"]);
    cmd.arg("-o").arg(&output);
    run(&mut cmd)
}

/// The kernels compiled for the GPUs the link targets (`runtime::cuda::embedded`), in parallel;
/// none, with one warning, on a machine without NVRTC (the executable then compiles them when
/// it first runs). A kernel NVRTC refuses (a compiler bug) is warned about and left to run time.
fn ahead_of_time_images(cc: &CcArgs, program: &driver::CompiledProgram) -> Vec<yosegi_rt::runtime::cuda::embedded::KernelImage> {
    use yosegi_rt::runtime::cuda::embedded;
    if program.module.grid_kernels.iter().next().is_none() {
        return Vec::new();
    }
    let targets = cc.gpus.targets(&embedded::local_architectures());
    match embedded::compile_ahead(&program.module, &program.sources, &targets) {
        Ok((images, failures)) => {
            if !cc.no_warnings {
                for f in &failures {
                    eprintln!("yosegi cc: warning: NVRTC could not compile `{}` for {} (it is compiled when the program runs; please report this):\n{}", f.symbol, f.target.describe(), f.log);
                }
            }
            images
        }
        Err(why) => {
            if !cc.no_warnings {
                eprintln!("yosegi cc: warning: kernels are not compiled ahead of time: {why}; the executable compiles them when it first runs");
            }
            Vec::new()
        }
    }
}

fn add_link_items(cmd: &mut Command, items: &[LinkItem]) {
    for item in items {
        match item {
            LinkItem::Input(p) => cmd.arg(private_fs::operand(p)),
            LinkItem::Flag(f) => cmd.arg(f),
        };
    }
}

/// The executable's `main`: the program image (embedded with `.incbin`) goes to the runtime
/// library, which runs the user's `main` (renamed `__yosegi_user_main`) through the glue.
fn start_code(image: &Path) -> String {
    let quoted = image.display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
    format!(
        "/* Generated by yosegi cc: the executable's entry. */\n\
         __asm__(\".section .rodata.yosegi_image,\\\"a\\\"\\n.balign 16\\n\
         .globl __yosegi_image\\n__yosegi_image:\\n.incbin \\\"{quoted}\\\"\\n\
         .globl __yosegi_image_end\\n__yosegi_image_end:\\n.previous\");\n\
         extern const unsigned char __yosegi_image[], __yosegi_image_end[];\n\
         int __yosegi_entry(const void *rt, int argc, char **argv);\n\
         int yosegi_rt_start(const unsigned char *image, unsigned long len, int argc, char **argv,\n\
         \x20                   int (*entry)(const void *, int, char **));\n\
         int main(int argc, char **argv) {{\n\
         \x20   return yosegi_rt_start(__yosegi_image, (unsigned long)(__yosegi_image_end - __yosegi_image), argc, argv, __yosegi_entry);\n\
         }}\n"
    )
}

/// The runtime library a release build carries (`build.rs`; empty in other builds).
static EMBEDDED_RUNTIME: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libyosegi_rt.so"));

/// Where `libyosegi_rt.so` is: `$YOSEGI_LIB_DIR`, else next to this executable (cargo puts the
/// library and the binaries in one folder), else the copy this binary carries, written once
/// into the cache folder (an installed compiler: `cargo install` installs binaries only).
fn runtime_library_dir() -> Result<PathBuf, Diagnostic> {
    let explicit = std::env::var_os("YOSEGI_LIB_DIR").map(PathBuf::from);
    let dir = match &explicit {
        Some(d) => d.clone(),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| e.canonicalize().ok())
            .and_then(|e| e.parent().map(Path::to_path_buf))
            .unwrap_or_default(),
    };
    if dir.join("libyosegi_rt.so").is_file() {
        return Ok(dir);
    }
    if explicit.is_none()
        && let Some(cache) = yosegi_rt::runtime::cuda::trusted_dir()
        && let Some(written) = embedded_runtime_in(&cache, EMBEDDED_RUNTIME)
    {
        return Ok(written);
    }
    Err(Diagnostic::global_error(format!("cannot find the runtime library libyosegi_rt.so in {}", dir.display()))
        .with_help("build it with `cargo build --release` (it lands next to the yosegi binary), or point YOSEGI_LIB_DIR at its folder"))
}

/// The folder under `cache` holding `library` as `libyosegi_rt.so` (named by the library's
/// hash, so that two versions of the compiler never share one), written there when missing;
/// `None` for an empty library or when it cannot be written.
fn embedded_runtime_in(cache: &Path, library: &[u8]) -> Option<PathBuf> {
    if library.is_empty() {
        return None;
    }
    let dir = cache.join(format!("runtime-{:016x}", yosegi_rt::runtime::cuda::fnv1a64(library)));
    let path = dir.join("libyosegi_rt.so");
    if std::fs::read(&path).is_ok_and(|held| held == library) {
        return Some(dir);
    }
    private_fs::create_private_dir_all(&dir).ok()?;
    private_fs::replace_file(&path, library).ok()?;
    Some(dir)
}

/// The system C compiler: `$YOSEGI_HOST_CC`, else `cc`. Not `$CC`: under `make CC="yosegi cc"`
/// that is this driver.
fn host_compiler() -> String {
    std::env::var("YOSEGI_HOST_CC").ok().filter(|c| !c.trim().is_empty()).unwrap_or_else(|| "cc".to_string())
}

/// What a failed write into the scratch directory says (a full disk named as such).
fn scratch_write_error(path: &Path, e: &std::io::Error) -> Diagnostic {
    private_fs::write_error(path, e, &private_fs::temp_dir_described())
}

/// Runs a tool of the toolchain (in care: an interruption ends it with Yosegi); its own
/// messages, a full disk's among them, reach the user's stderr.
fn run(cmd: &mut Command) -> Result<(), Failure> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    match care::status(cmd) {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(Failure::Status(status.code().unwrap_or(1))),
        Err(e) => Err(Diagnostic::global_error(format!("cannot run `{program}`: {e}"))
            .with_help("install a C toolchain (gcc and binutils) and make sure it is on PATH")
            .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn minfo_asks_for_the_brief_account_when_it_names_accel() {
        for flag in ["-Minfo", "-Minfo=accel", "-Minfo=all", "-Minfo=loop,accel", "-Minfo=accel,inline"] {
            assert!(minfo_accel(flag), "{flag}");
            let cc = parse_args(&args(&format!("-c {flag} x.c"))).unwrap();
            assert!(cc.minfo && cc.dropped.is_empty(), "{flag}: {:?}", cc.dropped);
        }
        for flag in ["-Minfo=inline", "-Minfo=", "-Minfoo", "-Msafeptr"] {
            assert!(!minfo_accel(flag), "{flag}");
            let cc = parse_args(&args(&format!("-c {flag} x.c"))).unwrap();
            assert!(!cc.minfo && cc.dropped == vec![flag.to_string()], "{flag}");
        }
    }

    #[test]
    fn compile_flags_go_where_they_belong() {
        let cc = parse_args(&args("-c -O3 -I../common -DCLASS=S -UX -std=c99 -mcmodel=medium -acc -ta=tesla -Minfo=accel cg.c -o cg.o")).unwrap();
        assert!(cc.compile_only);
        assert_eq!(cc.output, Some(PathBuf::from("cg.o")));
        assert_eq!(cc.sources, vec![PathBuf::from("cg.c")]);
        assert_eq!(cc.preprocess.include_dirs, vec![PathBuf::from("../common")]);
        assert_eq!(cc.preprocess.defines, vec!["CLASS=S".to_string()]);
        assert_eq!(cc.preprocess.cpp_flags, vec!["-UX".to_string(), "-std=c99".to_string()]);
        assert_eq!(cc.host_flags, vec!["-O3".to_string(), "-mcmodel=medium".to_string()]);
        // `-ta=tesla` names the NVIDIA target, which the link compiles for (`gpu_targets`).
        assert_eq!(cc.dropped, vec!["-acc".to_string()]);
        assert!(cc.minfo);
    }

    #[test]
    fn the_pass_modes_are_yosegi_flags_not_the_host_compilers() {
        let cc = parse_args(&args("-O2 -fyosegi-fusion=on -fyosegi-staging=off -fopenmp a.o -o prog")).unwrap();
        assert_eq!((cc.passes.fusion, cc.passes.staging), (FusionMode::On, StagingMode::Off));
        assert_eq!(cc.host_flags, vec!["-O2".to_string(), "-fopenmp".to_string()]);
        let defaults = parse_args(&args("a.o -o prog")).unwrap();
        assert_eq!((defaults.passes.fusion, defaults.passes.staging), (FusionMode::Auto, StagingMode::Auto));
        let bad = parse_args(&args("-fyosegi-fusion=always a.o")).unwrap_err();
        assert!(bad.contains("the fusion mode is auto, on or off"), "{bad}");
        assert!(parse_args(&args("-fyosegi-staging= a.o")).is_err());
    }

    #[test]
    fn openmp_flags_reach_the_preprocessor_and_the_host_compiler() {
        let cc = parse_args(&args("-c -fopenmp a.c")).unwrap();
        assert!(cc.preprocess.openmp);
        assert_eq!(cc.host_flags, vec!["-fopenmp".to_string()]);
        // PGI's OpenMP flag is gcc's, once.
        let cc = parse_args(&args("-mp=multicore -fopenmp -mp a.o")).unwrap();
        assert!(cc.preprocess.openmp && cc.dropped.is_empty());
        assert_eq!(cc.host_flags, vec!["-fopenmp".to_string()]);
        assert!(!parse_args(&args("-O2 a.c")).unwrap().preprocess.openmp);
    }

    #[test]
    fn build_systems_questions_are_told_apart_from_compiles() {
        use questions::{Question, question};
        assert!(matches!(question(&args("--help")), Some(Question::Help)));
        assert!(matches!(question(&args("-c a.c --version")), Some(Question::Version)));
        assert!(matches!(question(&args("-v")), Some(Question::Verbose)));
        // `-v` with more is the system compiler's verbose compile (CMake reads its link line).
        assert!(question(&args("-v a.c -o a")).is_none());
        match question(&args("-fyosegi-fusion=on -m32 -O2 -print-file-name=libgomp.so")) {
            Some(Question::SystemCompiler(kept)) => assert_eq!(kept, args("-m32 -print-file-name=libgomp.so")),
            _ => panic!("a -print- question"),
        }
        assert!(matches!(question(&args("-dumpmachine")), Some(Question::SystemCompiler(_))));
        assert!(question(&args("-c a.c")).is_none());
    }

    #[test]
    fn link_items_keep_their_order() {
        let cc = parse_args(&args("-o prog a.o -L /opt/lib b.o -lm -Wl,--as-needed")).unwrap();
        assert_eq!(
            cc.link,
            vec![
                LinkItem::Input("a.o".into()),
                LinkItem::Flag("-L/opt/lib".into()),
                LinkItem::Input("b.o".into()),
                LinkItem::Flag("-lm".into()),
                LinkItem::Flag("-Wl,--as-needed".into()),
            ]
        );
    }

    #[test]
    fn bad_command_lines_are_named() {
        assert_eq!(parse_args(&args("-O2")).unwrap_err(), "no input files");
        assert_eq!(parse_args(&args("a.c -o")).unwrap_err(), "`-o` needs a value");
        assert_eq!(parse_args(&args("--frobnicate a.c")).unwrap_err(), "unknown flag `--frobnicate`");
        assert!(parse_args(&args("-c a.c b.c -o x.o")).unwrap_err().contains("one source per command"));
        assert!(parse_args(&args("-MM a.c")).unwrap().passthrough);
    }

    #[test]
    fn dash_l_finds_the_projects_static_library_as_the_linker_would() {
        let dir = tempfile::tempdir().unwrap();
        let (only_static, both) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&only_static).unwrap();
        std::fs::create_dir_all(&both).unwrap();
        std::fs::write(only_static.join("libx.a"), b"").unwrap();
        std::fs::write(both.join("libx.a"), b"").unwrap();
        std::fs::write(both.join("libx.so"), b"").unwrap();
        let line = |extra: &str, first: &Path| format!("-o prog main.o -L{} -L{} {extra} -lx", first.display(), only_static.display());
        // The first directory holding either wins; a shared library there wins over both archives.
        let cc = parse_args(&args(&line("", &both))).unwrap();
        assert_eq!(static_library(&cc, "-lx"), None);
        let cc = parse_args(&args(&line("-static", &both))).unwrap();
        assert_eq!(static_library(&cc, "-lx"), Some(both.join("libx.a")));
        let cc = parse_args(&args(&line("", &only_static))).unwrap();
        assert_eq!(static_library(&cc, "-lx"), Some(only_static.join("libx.a")));
        assert_eq!(static_library(&cc, "-l:libx.a"), Some(only_static.join("libx.a")));
        // Not in the -L directories: the system's library.
        assert_eq!(static_library(&cc, "-lm"), None);
        assert_eq!(static_library(&cc, "-O2"), None);
    }

    /// The carried runtime library is written once into a folder named by its hash, found again
    /// without rewriting, kept apart from another version's, and never written when empty.
    #[test]
    fn the_carried_runtime_library_is_written_once_per_version() {
        let cache = tempfile::tempdir().unwrap();
        let first = embedded_runtime_in(cache.path(), b"library one").expect("written");
        assert_eq!(std::fs::read(first.join("libyosegi_rt.so")).unwrap(), b"library one");
        let modified = std::fs::metadata(first.join("libyosegi_rt.so")).unwrap().modified().unwrap();
        assert_eq!(embedded_runtime_in(cache.path(), b"library one"), Some(first.clone()));
        assert_eq!(std::fs::metadata(first.join("libyosegi_rt.so")).unwrap().modified().unwrap(), modified);
        let second = embedded_runtime_in(cache.path(), b"library two").expect("written");
        assert_ne!(first, second);
        assert_eq!(embedded_runtime_in(cache.path(), b""), None);
    }
}
