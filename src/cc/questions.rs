//! The questions build systems ask a C compiler before they compile anything, answered as gcc
//! answers them (status 0): `--help` (Yosegi's own usage), `--version` (Yosegi's version in
//! gcc's shape, then the system compiler's own text, which tools such as Meson read to know a
//! GNU compiler), `-v` alone (the same, as gcc's `-v` prints its version on stderr), and the
//! system compiler's facts, forwarded to it: `-dumpversion` (the driver presents itself as the
//! GNU compiler it drives, so configure scripts that parse a version number get that
//! compiler's), `-dumpfullversion`, `-dumpmachine`, `-dumpspecs` and every `-print-*`
//! (`-print-prog-name=ld`, `-print-file-name=libgomp.so`, `-print-search-dirs`,
//! `-print-libgcc-file-name`, `-print-multiarch`, `-print-sysroot`, ...).

use std::process::Command;

use crate::care;

use super::host_compiler;

/// What the command line asks, if it is one of those questions.
pub(super) enum Question {
    Help,
    Version,
    /// `-v` alone: gcc prints its version (and how it was configured) on stderr.
    Verbose,
    /// A fact of the system compiler's, with the flags that change its answer (`-m32`).
    SystemCompiler(Vec<String>),
}

fn is_system_query(arg: &str) -> bool {
    arg.starts_with("-print-") || matches!(arg, "-dumpversion" | "-dumpfullversion" | "-dumpmachine" | "-dumpspecs")
}

/// The question `args` asks, if any (as gcc, `--help` and `--version` win over anything else on
/// the line: nothing is compiled).
pub(super) fn question(args: &[String]) -> Option<Question> {
    if args.iter().any(|a| a == "--help" || a == "-help") {
        return Some(Question::Help);
    }
    if args.iter().any(|a| a == "--version") {
        return Some(Question::Version);
    }
    if args.len() == 1 && args[0] == "-v" {
        return Some(Question::Verbose);
    }
    if args.iter().any(|a| is_system_query(a)) {
        // The target and search paths follow these; Yosegi's own flags mean nothing to cc.
        let kept = args
            .iter()
            .filter(|a| is_system_query(a) || a.starts_with("-m") || a.starts_with("-B") || a.starts_with("--sysroot"))
            .filter(|a| !matches!(a.as_str(), "-mp") && !a.starts_with("-mp=") && !a.starts_with("-Minfo"))
            .cloned()
            .collect();
        return Some(Question::SystemCompiler(kept));
    }
    None
}

/// Answers `question`; the exit status.
pub(super) fn answer(question: Question) -> i32 {
    match question {
        Question::Help => {
            print!("{}", help_text());
            0
        }
        Question::Version => {
            print!("{}", version_text());
            match care::output(Command::new(host_compiler()).arg("--version")) {
                Ok(out) if out.status.success() => {
                    println!("\nThe system compiler `{}`:", host_compiler());
                    print!("{}", String::from_utf8_lossy(&out.stdout));
                }
                _ => println!("\n(the system compiler `{}` does not answer --version)", host_compiler()),
            }
            0
        }
        Question::Verbose => {
            eprint!("{}", version_text());
            system_compiler(&["-v".to_string()])
        }
        Question::SystemCompiler(args) => system_compiler(&args),
    }
}

fn system_compiler(args: &[String]) -> i32 {
    match care::status_with_input(Command::new(host_compiler()).args(args)) {
        Ok(status) => status.code().unwrap_or(1),
        Err(e) => {
            eprintln!("yosegi cc: error: cannot run the C compiler `{}`: {e}", host_compiler());
            eprintln!("help: install gcc, or name the system compiler in YOSEGI_HOST_CC");
            super::EXIT_BAD_INPUT
        }
    }
}

/// The system compiler's version (`12.2.0`), or `unknown`.
fn host_version() -> String {
    for flag in ["-dumpfullversion", "-dumpversion"] {
        if let Ok(out) = care::output(Command::new(host_compiler()).arg(flag))
            && out.status.success()
        {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if !text.is_empty() {
                return text;
            }
        }
    }
    "unknown".to_string()
}

/// gcc's first line is `gcc (DISTRIBUTION VERSION) VERSION`: this one names Yosegi in the
/// parentheses and ends with the version of the compiler it drives, which scripts that take
/// the last word of the first line read as the compiler's.
fn version_text() -> String {
    let host = host_version();
    let compiler = host_compiler();
    format!(
        "yosegi-cc (Yosegi {yosegi}) {host}\n\
         Yosegi's C compiler driver: it compiles C with OpenACC directives, and presents itself as\n\
         the GNU C compiler it drives, `{compiler}` (version {host}): -dumpversion, -dumpmachine and\n\
         the -print-* options give that compiler's answers. `yosegi cc --help` lists its options.\n",
        yosegi = env!("CARGO_PKG_VERSION"),
    )
}

fn help_text() -> String {
    format!(
        r#"Usage: yosegi cc [options] FILE.c|FILE.o|LIB.a...   (or yosegi-cc; Yosegi {version})

A drop-in C compiler driver for Makefiles and CMake: C with OpenACC directives, compiled by
Yosegi, with the system C compiler ($YOSEGI_HOST_CC, else cc) for the host code.

  -c                  check FILE.c through Yosegi's front end (errors with file:line:column,
                      status 2) and write an object: the system compiler's sequential build
                      of it plus its preprocessed source, which the link compiles
  -o FILE             the object or executable to write (default FILE.o, a.out)
  (no -c)             link: every unit the objects and static libraries made by yosegi cc
                      carry, and every FILE.c given, become one program; its kernels run
                      through the runtime library libyosegi_rt.so
  -I DIR  -D NAME[=VAL]  -U NAME  -std=..  -include FILE  -isystem DIR
                      reach the preprocessor
  -O..  -g..  -f..  -m..  -W..  -w  -pthread  -static  -rdynamic
                      reach the system compiler (a -f/-m flag it does not take is dropped,
                      with one warning)
  -fopenmp            host OpenMP: _OPENMP defined, the host code compiled and linked with
                      -fopenmp, its #pragma omp directives run on the host's threads (OpenMP
                      inside compute regions is ignored). Without it, a program that calls
                      OpenMP's API (omp_get_wtime) is linked with libgomp, directives ignored
  -fopenacc           accepted: Yosegi always compiles the OpenACC directives
  -l LIB  -L DIR  -Wl,..
                      reach the link, in order
  -E  -M  -MM         run the system compiler alone
  -MD  -MMD  -MF  -MT  -MQ  -MP
                      the system compiler writes the dependency file beside the object
  -fdiagnostics-format=text|json|sarif-stderr
                      Yosegi's diagnostics in that format
  -fyosegi-staging=auto|on|off  -fyosegi-fusion=auto|on|off
                      the passes' modes (yosegi run's --staging and --fusion), on the link
  -Minfo  -Minfo=accel  -Minfo=all  (or a list with accel)
                      while compiling, one line per compute loop and data movement on
                      stderr (file:line: ...), as yosegi explain --brief prints them
  -acc  -ta=..  -gpu=..  -acc=..  -Minfo=..  -Msafeptr  -fast
                      PGI/NVIDIA OpenACC flags: dropped, with one warning
  -mp, -mp=..         PGI/NVIDIA's OpenMP flag: read as -fopenmp
  -v                  alone: the version; with other options: the system compiler's commands
  --version  -dumpversion  -dumpmachine  -print-prog-name=..  -print-file-name=..
  -print-search-dirs  -print-libgcc-file-name  -print-*
                      answered as gcc answers them (the system compiler's facts)

Environment, when the built program runs:
  YOSEGI_DEVICE=auto|cuda|sim   the device (default auto)
  YOSEGI_GPUS=N|all             how many devices kernels are split over
  YOSEGI_STATS=1|json           the runtime's counters at exit; YOSEGI_STATS_DIR=DIR writes them
                                to DIR/<pid>.json
  YOSEGI_FUSION=off             every kernel on its own
And when it is built:
  YOSEGI_HOST_CC                the system compiler (default cc; not $CC)
  YOSEGI_LIB_DIR                the folder of libyosegi_rt.so
  YOSEGI_DIAGNOSTICS_FORMAT     text, json or sarif
"#,
        version = env!("CARGO_PKG_VERSION"),
    )
}
