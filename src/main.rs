//! The `yosegi` command: `run` compiles and runs a C program with OpenACC directives, `explain`
//! says what the compiler made of each region, `emit` writes the generated host C and the IR.
//!
//! Exit statuses: 0 success, 1 the user's program failed (nonzero status from `main`, a kernel
//! fault), 2 bad input or a usage error. A program that calls `exit(n)` ends with status `n`.
//! SIGINT, SIGTERM, SIGHUP or SIGQUIT end the process with that signal, after the tools it
//! started (cpp, cc, an MPI launcher) are ended and its scratch is removed (`yosegi::care`).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use yosegi::diag::Diagnostic;
use yosegi::diag::formats::DiagnosticsFormat;
use yosegi::driver::{self, CompiledProgram, Device, LinkItem, LinkOptions, RunOptions, ScratchDir, StatsReport};
use yosegi::front::{Lang, PreprocessOptions};
use yosegi::source::SourceSet;
use yosegi::opt::{FusionMode, PassConfig, StagingMode};

#[derive(Parser)]
#[command(name = "yosegi", version, about = "Runs C programs with OpenACC directives on GPUs or on a simulated device",
    after_help = "`yosegi cc ARGS...` (or `yosegi-cc`) is a C compiler driver for Makefiles: see yosegi-cc(1) and the user's guide (docs/).")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile and run a program; its arguments follow `--`.
    Run(RunArgs),
    /// Say, for each region, what runs where and what data moves.
    Explain(ExplainArgs),
    /// Write the generated host C, the glue and the IR text into a directory.
    Emit(EmitArgs),
    /// Write the man pages yosegi(1), yosegi-run(1), yosegi-explain(1), yosegi-emit(1),
    /// yosegi-man(1) and yosegi-cc(1) into a directory.
    Man(ManArgs),
}

#[derive(Args)]
struct ManArgs {
    /// The directory to write the pages into (created if missing), such as
    /// `~/.local/share/man/man1`.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// Print every long flag of every command, one `COMMAND FLAG` a line, instead (for the tests
    /// that check the guide's reference).
    #[arg(long, hide = true)]
    list_flags: bool,
}

#[derive(Args)]
struct InputArgs {
    /// Add a directory to the include search path.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// Define a macro (`NAME` or `NAME=VALUE`).
    #[arg(short = 'D', value_name = "NAME[=VAL]")]
    define: Vec<String>,
    /// Shared-memory staging: `auto` stages where the cost model expects a gain and keeps the
    /// variant measured fastest on the GPU; `on` stages every group that fits and always runs
    /// the staged variant; `off` uses global memory only.
    #[arg(long, value_enum, default_value = "auto")]
    staging: StagingArg,
    /// The same as `--staging off`.
    #[arg(long, conflicts_with = "staging")]
    no_staging: bool,
    /// Loop fusion: `auto` fuses chains of a region's kernels through which an array flows when
    /// the estimate expects a gain and keeps whichever of fused and unfused the GPU runs faster;
    /// `on` fuses every legal chain and always runs it; `off` runs every kernel on its own.
    #[arg(long, value_enum, default_value = "auto")]
    fusion: FusionArg,
    /// The language of the files: `auto` reads `.cu` files in the MESI-CUDA dialect and the
    /// others as C with OpenACC; `c` and `mesi` read every file so.
    #[arg(long, value_enum, default_value = "auto")]
    lang: LangArg,
    /// Print no warnings, only errors (as `cc -w`).
    #[arg(short = 'w')]
    no_warnings: bool,
    /// `-fopenmp`: host OpenMP, as `gcc -fopenmp` builds it: `_OPENMP` is defined, the host
    /// code is compiled and linked with `-fopenmp` and its `#pragma omp` directives run on the
    /// host's threads (OpenMP inside compute regions is ignored). Without it, a program that
    /// calls OpenMP's API is linked with libgomp and its directives stay ignored.
    #[arg(short = 'f', value_name = "openmp", value_parser = ["openmp"])]
    features: Vec<String>,
    /// How errors and warnings are written to stderr: `text` (file:line:col and a caret),
    /// `json` (GCC's JSON diagnostics shape) or `sarif` (SARIF 2.1.0). The same as
    /// `YOSEGI_DIAGNOSTICS_FORMAT`, which executables built by `yosegi cc` read.
    #[arg(long, value_name = "FORMAT", value_parser = DiagnosticsFormat::parse, default_value = "text")]
    diagnostics_format: DiagnosticsFormat,
    /// The C files of the program (each one translation unit); on `run`, objects, archives
    /// and shared libraries (`.o`, `.a`, `.so`) among them are linked with its host code.
    #[arg(required = true, value_name = "FILE.c|FILE.cu")]
    files: Vec<PathBuf>,
}

impl InputArgs {
    /// The translation units among the files (the others are for the link).
    fn units(&self) -> Vec<PathBuf> {
        self.files.iter().filter(|f| !driver::is_link_input(f)).cloned().collect()
    }

    fn openmp(&self) -> bool {
        self.features.iter().any(|f| f == "openmp")
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum LangArg {
    Auto,
    C,
    Mesi,
}

#[derive(Clone, Copy, ValueEnum)]
enum StagingArg {
    Auto,
    On,
    Off,
}

#[derive(Clone, Copy, ValueEnum)]
enum FusionArg {
    Auto,
    On,
    Off,
}

/// How `--stats` prints.
#[derive(Clone, Copy, ValueEnum)]
enum StatsFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum DeviceArg {
    Auto,
    Sim,
    Cuda,
}

#[derive(Args)]
struct RunArgs {
    /// Which device runs the kernels.
    #[arg(long, value_enum, default_value = "auto")]
    device: DeviceArg,
    /// How many devices to split kernels over: a number, or `all` (every usable GPU; kernels
    /// too small to gain stay on one). On one GPU, a number above 1 gives that many logical
    /// devices on it; on `sim`, that many simulated devices. The same as `YOSEGI_GPUS` for
    /// executables built by `yosegi cc`, which `run` also reads when `--gpus` is not given.
    #[arg(long, value_name = "N|all", value_parser = parse_gpus)]
    gpus: Option<yosegi::runtime::DeviceCount>,
    /// Print the runtime's counters (launches, transfers) and the performance model's
    /// predicted time per kernel at exit; `--stats=json` prints them as JSON, for tools.
    #[arg(long, value_enum, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "text")]
    stats: Option<StatsFormat>,
    /// Keep the CUDA source of every kernel compiled for the GPU in DIR (the same as
    /// `YOSEGI_KEEP=DIR`; by default they go to `sources/` in the kernel cache directory).
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Run the program as N MPI ranks on this machine, one device each (`mpirun -np N`, or
    /// the launcher in `YOSEGI_MPIRUN`): the same program, its parallel loops split over the
    /// ranks' devices, printing what one process prints. Under a launcher already, ignored.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    ranks: Option<u32>,
    /// Link the host code with the library LIB (`-lLIB`, as `cc` takes it); it must be found
    /// when the program is loaded too: each `-L` folder is also its run-time search path.
    #[arg(short = 'l', value_name = "LIB")]
    libraries: Vec<String>,
    /// Add DIR to the folders `-l` searches (`-LDIR`).
    #[arg(short = 'L', value_name = "DIR")]
    library_dirs: Vec<PathBuf>,
    /// `-Wl,OPTIONS`: options for the linker, as `cc` passes them (`-Wl,-rpath,DIR`).
    #[arg(short = 'W', value_name = "l,OPTIONS", value_parser = parse_linker_flag, allow_hyphen_values = true)]
    linker_flags: Vec<String>,
    #[command(flatten)]
    input: InputArgs,
    /// Arguments for the program.
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<std::ffi::OsString>,
}

#[derive(Args)]
struct ExplainArgs {
    #[command(flatten)]
    input: InputArgs,
    /// `text` (the default) or `json`: the same facts, for tools.
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
    /// One line per compute loop and per data movement, `file:line: ...` (what `yosegi cc
    /// -Minfo=accel` prints while it compiles); the full account is the default.
    #[arg(long, conflicts_with = "format")]
    brief: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExplainFormat {
    Text,
    Json,
}

#[derive(Args)]
struct EmitArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The directory to write into (created if missing).
    #[arg(short = 'o', value_name = "DIR", required = true)]
    output: PathBuf,
}

/// `-Wl,...` (clap gives what follows `-W`); other `-W` flags are the system compiler's
/// warnings, which the host build does not print.
fn parse_linker_flag(text: &str) -> Result<String, String> {
    match text.strip_prefix("l,") {
        Some(options) if !options.is_empty() => Ok(format!("-Wl,{options}")),
        _ => Err(format!("`-W{text}`: `yosegi run` takes `-Wl,OPTIONS` for the linker only (the host code's warnings are not printed; Yosegi's own are, `-w` silences them)")),
    }
}

/// The command line's link items in the order given: `-l`, `-L`, `-Wl,` and the files that are
/// objects or libraries (the order matters to the linker, which clap's fields do not keep).
fn link_options(matches: &clap::ArgMatches, args: &RunArgs) -> LinkOptions {
    let mut placed: Vec<(usize, LinkItem)> = Vec::new();
    let mut take = |id: &str, items: Vec<LinkItem>| {
        let indices: Vec<usize> = matches.indices_of(id).map(|i| i.collect()).unwrap_or_default();
        placed.extend(indices.into_iter().zip(items));
    };
    take("libraries", args.libraries.iter().cloned().map(LinkItem::Library).collect());
    take("library_dirs", args.library_dirs.iter().cloned().map(LinkItem::LibraryDir).collect());
    take("linker_flags", args.linker_flags.iter().cloned().map(LinkItem::LinkerFlag).collect());
    let files: Vec<(usize, &PathBuf)> = matches.indices_of("files").map(|i| i.zip(&args.input.files).collect()).unwrap_or_default();
    placed.extend(files.into_iter().filter(|(_, f)| driver::is_link_input(f)).map(|(i, f)| (i, LinkItem::File(f.clone()))));
    placed.sort_by_key(|(i, _)| *i);
    LinkOptions { items: placed.into_iter().map(|(_, item)| item).collect() }
}

fn parse_gpus(text: &str) -> Result<yosegi::runtime::DeviceCount, String> {
    yosegi::runtime::DeviceCount::parse(text)
}

/// Out of memory is an error with exit status 2, not an abort (`yosegi::oom`).
#[global_allocator]
static ALLOCATOR: yosegi::oom::ExitOnOutOfMemory = yosegi::oom::ExitOnOutOfMemory;

const EXIT_PROGRAM_FAILED: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;

fn main() -> ExitCode {
    let worker = std::thread::Builder::new().name("yosegi".into()).stack_size(driver::COMPILER_STACK_BYTES).spawn(command);
    match worker.map(|w| w.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // No thread (address space exhausted): run on this one.
        Err(_) => command(),
    }
}

fn command() -> ExitCode {
    // `yosegi cc` takes a C compiler's command line, which clap's conventions do not fit.
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|a| a == "cc") {
        return ExitCode::from(yosegi::cc::main(&raw[2..]).clamp(0, 255) as u8);
    }
    let parsed = Cli::command().try_get_matches().and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let (cli, matches) = match parsed {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_BAD_INPUT } else { 0 });
        }
    };
    let input = match &cli.command {
        Command::Run(args) => &args.input,
        Command::Explain(args) => &args.input,
        Command::Emit(args) => &args.input,
        Command::Man(args) => return man(args),
    };
    // Text (the default) leaves the environment's choice in force.
    if input.diagnostics_format != DiagnosticsFormat::Text {
        input.diagnostics_format.choose();
    }
    match cli.command {
        Command::Run(args) => {
            let link = link_options(matches.subcommand_matches("run").unwrap_or(&matches), &args);
            run(args, &link)
        }
        Command::Explain(args) => explain(args),
        Command::Emit(args) => emit(args),
        Command::Man(args) => man(&args),
    }
}

/// `yosegi man`: the man pages, from the clap definitions (`yosegi::manpages`).
fn man(args: &ManArgs) -> ExitCode {
    if args.list_flags {
        let mut text = String::new();
        for (command, flag) in yosegi::manpages::long_flags(&Cli::command()) {
            text.push_str(&format!("{command} {flag}\n"));
        }
        for flag in yosegi::manpages::cc_flags() {
            text.push_str(&format!("yosegi-cc {flag}\n"));
        }
        use std::io::Write;
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        return ExitCode::SUCCESS;
    }
    match yosegi::manpages::write(Cli::command(), &args.out) {
        Ok(pages) => {
            for page in pages {
                println!("{}", page.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("yosegi: error: cannot write the man pages into `{}`: {e}", args.out.display());
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn preprocess_options(input: &InputArgs) -> PreprocessOptions {
    let lang = match input.lang {
        LangArg::Auto => Lang::ByExtension,
        LangArg::C => Lang::C,
        LangArg::Mesi => Lang::Mesi,
    };
    PreprocessOptions { include_dirs: input.include.clone(), defines: input.define.clone(), cpp_flags: Vec::new(), lang, openmp: input.openmp() }
}

fn pass_config(input: &InputArgs) -> PassConfig {
    let staging = match (input.no_staging, input.staging) {
        (true, _) | (false, StagingArg::Off) => StagingMode::Off,
        (false, StagingArg::Auto) => StagingMode::Auto,
        (false, StagingArg::On) => StagingMode::Force,
    };
    let fusion = match input.fusion {
        FusionArg::Auto => FusionMode::Auto,
        FusionArg::On => FusionMode::On,
        FusionArg::Off => FusionMode::Off,
    };
    PassConfig { staging, fusion, ..PassConfig::default() }
}

fn print_diagnostics(sources: &SourceSet, diags: &[Diagnostic]) {
    if diags.is_empty() {
        return;
    }
    let color = std::io::stderr().is_terminal();
    eprint!("{}", DiagnosticsFormat::current().render(sources, diags, color));
}

/// Compiles, printing warnings; on errors prints them and gives the exit status.
fn compile(input: &InputArgs) -> Result<CompiledProgram, ExitCode> {
    for file in &input.files {
        if let Some(what) = yosegi::front::preprocess::unreadable_input(file) {
            print_diagnostics(
                &SourceSet::default(),
                &[Diagnostic::global_error(format!("cannot read `{}`: the file {what}", file.display()))
                    .with_help("check the path of the C file to compile")],
            );
            return Err(ExitCode::from(EXIT_BAD_INPUT));
        }
    }
    let units = input.units();
    if units.is_empty() {
        print_diagnostics(
            &SourceSet::default(),
            &[Diagnostic::global_error("no C file to compile: the files given are all objects or libraries").with_help("give the program's .c files too: `yosegi run main.c libx.a`")],
        );
        return Err(ExitCode::from(EXIT_BAD_INPUT));
    }
    match driver::compile(&units, &preprocess_options(input), &pass_config(input)) {
        Ok(program) => {
            if !input.no_warnings {
                print_diagnostics(&program.sources, &program.warnings);
            }
            Ok(program)
        }
        Err((sources, diags)) => {
            let shown: Vec<Diagnostic> = diags.0.into_iter().filter(|d| !input.no_warnings || d.is_error()).collect();
            print_diagnostics(&sources, &shown);
            Err(ExitCode::from(EXIT_BAD_INPUT))
        }
    }
}

fn fail(sources: &SourceSet, d: Diagnostic) -> ExitCode {
    print_diagnostics(sources, &[d]);
    ExitCode::from(EXIT_BAD_INPUT)
}

fn run(args: RunArgs, link: &LinkOptions) -> ExitCode {
    // A watchdog that is not a number of seconds is refused before the build, not ignored.
    if let Err(why) = yosegi::runtime::sim::timeout_from_env() {
        eprintln!("yosegi: error: {why}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    if let Some(dir) = &args.keep {
        // SAFETY: set before the run starts any thread that reads the environment.
        unsafe { std::env::set_var("YOSEGI_KEEP", dir) };
    }
    let device = match args.device {
        DeviceArg::Sim => Device::Sim,
        DeviceArg::Auto => Device::Auto,
        DeviceArg::Cuda => Device::Cuda,
    };
    let program = match compile(&args.input) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Some(ranks) = args.ranks.filter(|&n| n > 1)
        && yosegi::runtime::ranks::launched_size().is_none()
    {
        return match driver::launch_ranks(ranks) {
            Ok(status) => ExitCode::from(status),
            Err(d) => fail(&program.sources, d),
        };
    }
    let scratch = match ScratchDir::new() {
        Ok(s) => s,
        Err(d) => return fail(&program.sources, d),
    };
    if device != Device::Sim {
        // The kernels compile on workers while the system compiler builds the host code.
        yosegi::runtime::cuda::jit::start_ahead(&Arc::new(program.module.clone()), &Arc::new(program.sources.clone()));
    }
    let library = match driver::build_host(&program, &scratch, link) {
        Ok(lib) => lib,
        Err(d) => return fail(&program.sources, d),
    };
    let gpus = match args.gpus {
        Some(gpus) => gpus,
        None => match std::env::var("YOSEGI_GPUS").ok().filter(|v| !v.trim().is_empty()) {
            Some(text) => match parse_gpus(&text) {
                Ok(gpus) => gpus,
                Err(why) => {
                    eprintln!("yosegi: error: YOSEGI_GPUS: {why}");
                    return ExitCode::from(EXIT_BAD_INPUT);
                }
            },
            None => yosegi::runtime::DeviceCount::All,
        },
    };
    let options = RunOptions {
        device,
        gpus,
        stats: match args.stats {
            None if std::env::var_os(yosegi::runtime::abi::STATS_DIR_VARIABLE).is_some() => StatsReport::Json,
            None => StatsReport::Off,
            Some(StatsFormat::Text) => StatsReport::AtExit,
            Some(StatsFormat::Json) => StatsReport::Json,
        },
        args: args.args,
    };
    let loaded = match driver::load_program(&library) {
        Ok(loaded) => loaded,
        Err(d) => return fail(&program.sources, d),
    };
    drop(scratch);
    let status = match loaded.run(&program, &options) {
        Ok(status) => status,
        Err(d) => return fail(&program.sources, d),
    };
    let code = if status == 0 {
        0
    } else {
        eprintln!("yosegi: the program exited with status {status}");
        i32::from(EXIT_PROGRAM_FAILED)
    };
    // Through C's exit, so the program's atexit handlers and stdio buffers are served.
    driver::exit_process(code)
}

fn explain(args: ExplainArgs) -> ExitCode {
    let program = match compile(&args.input) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let text = match args.format {
        ExplainFormat::Text if args.brief => yosegi::explain::brief::brief(&program),
        ExplainFormat::Text => yosegi::explain::explain(&program),
        ExplainFormat::Json => serde_json::to_string_pretty(&yosegi::explain::json::explain_json(&program, None)).unwrap_or_default() + "\n",
    };
    // A closed pipe (`| head`) ends the output, not the process with a panic.
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

fn emit(args: EmitArgs) -> ExitCode {
    let program = match compile(&args.input) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let host = driver::host_program(&program);
    let place = format!("the output folder `{}`", args.output.display());
    if let Err(d) = driver::write_host_files(&host, &args.output, &place) {
        return fail(&program.sources, d);
    }
    let outputs = [
        ("program.ir", yosegi::ir::text::module_text(&program.module)),
        ("kernels.cu", yosegi::back::cuda::module_cuda(&program.module)),
    ];
    for (name, text) in outputs {
        let path = args.output.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            return fail(&program.sources, yosegi::private_fs::write_error(&path, &e, &place));
        }
    }
    ExitCode::SUCCESS
}
