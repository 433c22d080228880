//! The man pages, made from the clap definitions so that `--help`, the pages and the guide's
//! reference cannot drift (`yosegi man`): yosegi(1), a page per subcommand (yosegi-run(1),
//! ...) and yosegi-cc(1).
//!
//! `yosegi cc` takes a C compiler's command line, which it parses by hand (`cc::parse_args`):
//! [`cc_command`] is a clap [`Command`] that describes those flags, for its man page and for
//! the tests that check every flag the driver handles is described (tests/man_pages.rs) and in
//! the guide's reference (tests/guide_reference.rs). GCC spells its options with one dash
//! (`-fopenmp`, `-MD`); clap writes long options with two, so the page is rendered and then
//! each of those options is written back with one.

use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command};

/// The options of [`cc_command`] that really take two dashes.
const DOUBLE_DASH: &[&str] = &["help", "version", "sysroot"];

/// A flag of the C driver: `name` without its dash, the value's name if it takes one (`=`
/// between them when `equals`), and what it does.
fn gcc_flag(name: &'static str, value: Option<&'static str>, equals: bool, help: &'static str) -> Arg {
    let arg = Arg::new(name).help(help);
    let arg = if name.len() == 1 { arg.short(name.chars().next().unwrap_or('c')) } else { arg.long(name) };
    match value {
        Some(v) if v.starts_with('[') => arg
            .value_name(v.trim_matches(|c| c == '[' || c == ']'))
            .num_args(0..=1)
            .require_equals(true)
            .action(ArgAction::Append),
        Some(v) => arg.value_name(v).require_equals(equals).action(ArgAction::Append),
        None => arg.action(ArgAction::SetTrue),
    }
}

/// yosegi-cc's command line, as a clap [`Command`] (never used to parse: `cc::parse_args` does).
pub fn cc_command() -> Command {
    let flags = [
        gcc_flag("c", None, false, "Check FILE.c through Yosegi's front end (errors with file:line:column, exit status 2) and write an object: the system compiler's sequential build of it plus its preprocessed source in the section .yosegi_src, which the link compiles."),
        gcc_flag("o", Some("FILE"), false, "The object or executable to write (default FILE.o, a.out)."),
        gcc_flag("I", Some("DIR"), false, "Add DIR to the include path (the preprocessor's)."),
        gcc_flag("D", Some("NAME[=VAL]"), false, "Define a macro (the preprocessor's)."),
        gcc_flag("U", Some("NAME"), false, "Undefine a macro (the preprocessor's)."),
        gcc_flag("std", Some("STD"), true, "The C standard, for the preprocessor and the system compiler."),
        gcc_flag("include", Some("FILE"), false, "Include FILE first (the preprocessor's)."),
        gcc_flag("isystem", Some("DIR"), false, "Add DIR to the system include path (the preprocessor's)."),
        gcc_flag("x", Some("LANG"), false, "The language of the files after it (`c`, or `none`), as gcc takes it."),
        gcc_flag("O", Some("[LEVEL]"), false, "Optimisation, for the system compiler's build of the host code (-O, -O2, -O3, -Os...)."),
        gcc_flag("g", Some("[LEVEL]"), false, "Debug information in the host code (-g, -g3...)."),
        gcc_flag("f", Some("FLAG"), false, "A code-generation flag for the system compiler (-fPIC, -fno-strict-aliasing...); one it does not accept is dropped with one warning."),
        gcc_flag("m", Some("FLAG"), false, "A machine flag for the system compiler (-march=native, -mcmodel=large...); the link uses -mcmodel=medium unless one is given."),
        gcc_flag("W", Some("WARNING|l,OPTIONS"), false, "-Wl,OPTIONS passes OPTIONS to the linker, in order with the inputs; any other -W flag reaches the system compiler."),
        gcc_flag("Xlinker", Some("OPTION"), false, "An option for the linker, in order with the inputs."),
        gcc_flag("w", None, false, "Print no warnings, only errors."),
        gcc_flag("pthread", None, false, "For the system compiler and the link."),
        gcc_flag("static", None, false, "Link statically (also chooses libx.a over libx.so for -lx)."),
        gcc_flag("rdynamic", None, false, "For the link."),
        gcc_flag("l", Some("LIB"), false, "Link with LIB (-lLIB, -l:libx.a), in order: a static library whose members yosegi cc -c made joins the program."),
        gcc_flag("L", Some("DIR"), false, "Add DIR to the folders the link searches for -l."),
        gcc_flag("fopenmp", None, false, "Host OpenMP: _OPENMP is defined, the objects, the generated host code and the link get -fopenmp, and #pragma omp directives run on the host's threads (OpenMP inside compute regions is ignored). Without it a program calling OpenMP's API is linked with libgomp."),
        gcc_flag("fopenacc", None, false, "Accepted: Yosegi always compiles the OpenACC directives (CMake's find_package(OpenACC) finds it)."),
        gcc_flag("fyosegi-staging", Some("auto|on|off"), true, "Shared-memory staging's mode, as yosegi run --staging (on the link, where kernels are compiled; a -c accepts it)."),
        gcc_flag("fyosegi-fusion", Some("auto|on|off"), true, "Loop fusion's mode, as yosegi run --fusion (on the link)."),
        gcc_flag("fdiagnostics-format", Some("text|json|sarif-stderr"), true, "Yosegi's diagnostics in that format (GCC's JSON shape, SARIF 2.1.0); the system compiler gets the flag too."),
        gcc_flag("E", None, false, "Preprocess only: the system compiler alone."),
        gcc_flag("M", None, false, "Dependencies only: the system compiler alone."),
        gcc_flag("MM", None, false, "Dependencies on user headers only: the system compiler alone."),
        gcc_flag("MD", None, false, "Write a dependency file beside the object (the system compiler writes it while it compiles the object Yosegi makes)."),
        gcc_flag("MMD", None, false, "As -MD, user headers only (Makefiles' and CMake's form)."),
        gcc_flag("MF", Some("FILE"), false, "The dependency file's name."),
        gcc_flag("MT", Some("TARGET"), false, "The dependency rule's target."),
        gcc_flag("MQ", Some("TARGET"), false, "The dependency rule's target, quoted for make."),
        gcc_flag("MP", None, false, "Phony targets for the headers in the dependency file."),
        gcc_flag("S", None, false, "Refused: Yosegi produces objects and executables, not assembly."),
        gcc_flag("shared", None, false, "Refused: Yosegi links executables; build libraries without OpenACC with the system compiler."),
        gcc_flag("gpu", Some("ccXY,...|ccall|ccnative"), true, "NVIDIA's flag: the architectures the link compiles kernels for (cubins, plus PTX for the lowest); ccall: sm_75 to sm_120; ccnative: this machine's GPUs. Default: this machine's GPUs, else cc80,cc90. Other items are dropped with one warning."),
        gcc_flag("ta", Some("tesla:ccXY,..."), true, "PGI's spelling of -gpu= (its architectures are read; other items dropped with one warning)."),
        gcc_flag("acc", Some("[..]"), true, "PGI/NVIDIA's OpenACC flag: dropped with one warning (Yosegi always compiles the directives)."),
        gcc_flag("Minfo", Some("[accel|all]"), true, "NVIDIA's compile-time feedback: -Minfo=accel (also -Minfo, -Minfo=all) prints on stderr one line per compute loop and per data movement (jacobi.c:42: parallel loop collapse(2): gangs x 128 threads, p staged with halo 1), as yosegi explain --brief does."),
        gcc_flag("Msafeptr", None, false, "PGI/NVIDIA's flag: dropped with one warning (other -M.. flags of PGI's too)."),
        gcc_flag("fast", None, false, "PGI/NVIDIA's flag: dropped with one warning."),
        gcc_flag("mp", Some("[multicore|gpu]"), true, "PGI/NVIDIA's OpenMP flag: read as -fopenmp."),
        gcc_flag("v", None, false, "Alone: the version lines, then the system compiler's -v on stderr; with other arguments: the system compiler's commands."),
        gcc_flag("dumpversion", None, false, "The system compiler's answer (as gcc answers it)."),
        gcc_flag("dumpfullversion", None, false, "The system compiler's answer."),
        gcc_flag("dumpmachine", None, false, "The system compiler's answer."),
        gcc_flag("dumpspecs", None, false, "The system compiler's answer."),
        gcc_flag("print-prog-name", Some("PROG"), true, "The system compiler's answer (every -print-* question is forwarded, with the line's -m, -B and --sysroot flags)."),
        gcc_flag("print-file-name", Some("FILE"), true, "The system compiler's answer."),
        gcc_flag("print-search-dirs", None, false, "The system compiler's answer."),
        gcc_flag("print-libgcc-file-name", None, false, "The system compiler's answer."),
        gcc_flag("B", Some("DIR"), false, "Kept on the -print-* questions forwarded to the system compiler."),
        gcc_flag("sysroot", Some("DIR"), true, "Kept on the -print-* questions forwarded to the system compiler."),
        Arg::new("help").long("help").action(ArgAction::SetTrue).help("The driver's usage: its flags, what it does with PGI's, the -fyosegi-* flags and the environment (also -help)."),
        Arg::new("version").long("version").action(ArgAction::SetTrue).help("yosegi-cc (Yosegi VERSION) HOST-VERSION, then the system compiler's own --version text."),
        Arg::new("files").value_name("FILE.c|FILE.o|LIB.a").num_args(1..).help("C sources, objects and archives: without -c, every unit the objects and static libraries made by yosegi cc carry, and every FILE.c given, become one program."),
    ];
    Command::new("yosegi-cc")
        .version(env!("CARGO_PKG_VERSION"))
        .about("C compiler driver for Makefiles and CMake: C with OpenACC directives, compiled by Yosegi")
        .long_about(
            "yosegi-cc (the same as `yosegi cc`) is a drop-in C compiler driver: `make CC=yosegi-cc`, or \
             `cmake -DCMAKE_C_COMPILER=yosegi-cc`. A compile (-c) checks the file and writes an ordinary object \
             carrying its preprocessed source; the link compiles every unit as one program, compiles its kernels \
             for the GPU, embeds them and links against the runtime library libyosegi_rt.so. The system C \
             compiler ($YOSEGI_HOST_CC, else cc) builds the host code. It presents itself as the GNU compiler \
             it drives.",
        )
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args(flags)
        .after_help(
            "ENVIRONMENT when the program is built: YOSEGI_HOST_CC (the system compiler, default cc; not $CC), \
             YOSEGI_LIB_DIR (the folder of libyosegi_rt.so), YOSEGI_DIAGNOSTICS_FORMAT (text, json or sarif), \
             YOSEGI_NVRTC=off (no kernel images embedded), YOSEGI_CACHE_DIR. When it runs: YOSEGI_DEVICE=auto|cuda|sim, \
             YOSEGI_GPUS=N|all, YOSEGI_STATS=1|json, YOSEGI_STATS_DIR=DIR, YOSEGI_FUSION=off and the others \
             yosegi(1) lists. The user's guide (docs/ in Yosegi's sources) has every flag and variable.",
        )
}

/// The flags of the C driver as it spells them (`-fopenmp`, `--help`), in definition order.
pub fn cc_flags() -> Vec<String> {
    let cmd = cc_command();
    let mut out = Vec::new();
    for arg in cmd.get_arguments() {
        if let Some(short) = arg.get_short() {
            out.push(format!("-{short}"));
        }
        if let Some(long) = arg.get_long() {
            out.push(if DOUBLE_DASH.contains(&long) { format!("--{long}") } else { format!("-{long}") });
        }
    }
    out
}

/// Every long flag of `cmd` and of its subcommands, as (`yosegi run`, `--device`), depth
/// first; clap's own `--help` and `--version` left out, hidden flags too.
pub fn long_flags(cmd: &Command) -> Vec<(String, String)> {
    fn walk(cmd: &Command, path: &str, out: &mut Vec<(String, String)>) {
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() {
                continue;
            }
            if let Some(long) = arg.get_long()
                && long != "help"
                && long != "version"
            {
                out.push((path.to_string(), format!("--{long}")));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                walk(sub, &format!("{path} {}", sub.get_name()), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(cmd, cmd.get_name(), &mut out);
    out
}

/// Renders `cmd`'s page into `dir` as `NAME.1`.
fn render(cmd: Command, name: &str, dir: &Path, fix: impl Fn(String) -> String) -> std::io::Result<PathBuf> {
    let mut bytes = Vec::new();
    clap_mangen::Man::new(cmd).title(name.to_uppercase()).section("1").render(&mut bytes)?;
    let text = fix(String::from_utf8_lossy(&bytes).into_owned());
    let path = dir.join(format!("{name}.1"));
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Writes yosegi.1, a page per subcommand of `yosegi` (yosegi-run.1, ...) and yosegi-cc.1
/// into `dir` (created if missing); returns the files written.
pub fn write(yosegi: Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut yosegi = yosegi.name("yosegi").bin_name("yosegi");
    yosegi.build();
    let mut written = Vec::new();
    for sub in yosegi.get_subcommands() {
        if sub.get_name() == "help" || sub.is_hide_set() {
            continue;
        }
        // clap's names are `&'static str`: the few pages' names live until the process ends.
        let name: &'static str = Box::leak(format!("yosegi-{}", sub.get_name()).into_boxed_str());
        let page = sub.clone().name(name).bin_name(format!("yosegi {}", sub.get_name()));
        written.push(render(page, name, dir, |t| t)?);
    }
    written.insert(0, render(yosegi, "yosegi", dir, |t| t)?);
    let single: Vec<String> = cc_command()
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| !DOUBLE_DASH.contains(l))
        .map(|l| l.replace('-', "\\-"))
        .collect();
    written.push(render(cc_command(), "yosegi-cc", dir, |mut text| {
        // Longest first, so that `-MMD` is not taken for `-MM` followed by `D`.
        let mut names = single.clone();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for name in names {
            text = text.replace(&format!("\\-\\-{name}"), &format!("\\-{name}"));
        }
        text
    })?);
    Ok(written)
}
