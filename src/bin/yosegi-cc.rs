//! `yosegi-cc`: the same as `yosegi cc`, for Makefiles whose `CC` must be one word
//! (`make CC=yosegi-cc`).

/// Out of memory is an error with exit status 2, not an abort (`yosegi::oom`).
#[global_allocator]
static ALLOCATOR: yosegi::oom::ExitOnOutOfMemory = yosegi::oom::ExitOnOutOfMemory;

fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::ExitCode::from(yosegi::cc::main(&args).clamp(0, 255) as u8)
}
