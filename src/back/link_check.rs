//! A missing function must never reach the dynamic loader. The host side is built as a shared
//! object (`program.so`), and a shared object may leave symbols undefined: a call to a function
//! no file of the program defines links without complaint and fails only when the program,
//! already running, reaches it (`undefined symbol`). So after the build every undefined symbol
//! of `program.so` is looked up as the loader will look it up, in this process and in the
//! libraries `program.so` names (`DT_NEEDED`: the C and math libraries, libgomp with OpenMP, the
//! libraries of the command line's `-l`, found in its `-L` folders as the loader finds them
//! through `program.so`'s run path); a symbol found nowhere is refused with a diagnostic at the
//! first place the user's code names it.
//!
//! The symbols come from the object's ELF dynamic symbol table (weak ones may stay undefined);
//! a file that is not a 64-bit little-endian ELF object is not checked.

use std::ffi::c_void;
use std::path::Path;

use crate::diag::{Diagnostic, Span};
use crate::front::ast::{ExprKind, TranslationUnit};

/// Refuses `library` (just built from `units`) when it needs a symbol nothing provides: the
/// diagnostic points at the first use of the first such symbol in the user's code. `search`:
/// the folders of `library`'s run path (the command line's `-L` folders), where its needed
/// libraries are looked for before the system's.
pub fn check_symbols(units: &[TranslationUnit], library: &Path, search: &[std::path::PathBuf]) -> Result<(), Diagnostic> {
    let Ok(bytes) = std::fs::read(library) else { return Ok(()) };
    let Some(symbols) = DynamicSymbols::parse(&bytes) else { return Ok(()) };
    let missing = unresolved(&symbols, search);
    if missing.is_empty() {
        return Ok(());
    }
    let linked = symbols.needed.iter().any(|n| !n.starts_with("libc.so") && !n.starts_with("libm.so"));
    Err(missing_symbol_diagnostic(units, &missing, linked))
}

/// What a shared object needs from elsewhere.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DynamicSymbols {
    /// Undefined symbols with global (not weak) binding.
    pub undefined: Vec<String>,
    /// The libraries it names (`DT_NEEDED`).
    pub needed: Vec<String>,
}

const SHT_DYNAMIC: u32 = 6;
const SHT_DYNSYM: u32 = 11;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const STB_GLOBAL: u8 = 1;
const SHN_UNDEF: u16 = 0;

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}
fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}
fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// The NUL-terminated string at `offset` of a string table.
fn string_at(table: &[u8], offset: usize) -> Option<String> {
    let rest = table.get(offset..)?;
    let end = rest.iter().position(|&c| c == 0)?;
    Some(String::from_utf8_lossy(&rest[..end]).into_owned())
}

/// A section header's type, file range and linked section.
struct Section {
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
    entsize: usize,
}

impl DynamicSymbols {
    /// Reads the dynamic symbols of a 64-bit little-endian ELF object; `None` for anything else.
    pub fn parse(b: &[u8]) -> Option<DynamicSymbols> {
        if b.get(0..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
            return None;
        }
        let shoff = read_u64(b, 0x28)? as usize;
        let shentsize = read_u16(b, 0x3a)? as usize;
        let shnum = read_u16(b, 0x3c)? as usize;
        if shentsize < 64 {
            return None;
        }
        let sections: Vec<Section> = (0..shnum)
            .map(|i| {
                let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
                Some(Section {
                    kind: read_u32(b, h + 4)?,
                    offset: read_u64(b, h + 24)? as usize,
                    size: read_u64(b, h + 32)? as usize,
                    link: read_u32(b, h + 40)? as usize,
                    entsize: read_u64(b, h + 56)? as usize,
                })
            })
            .collect::<Option<_>>()?;
        let contents = |s: &Section| b.get(s.offset..s.offset.checked_add(s.size)?);
        let mut out = DynamicSymbols::default();
        for section in &sections {
            match section.kind {
                SHT_DYNSYM => {
                    let strings = contents(sections.get(section.link)?)?;
                    let table = contents(section)?;
                    let entsize = if section.entsize >= 24 { section.entsize } else { 24 };
                    for sym in table.chunks_exact(entsize) {
                        let name = read_u32(sym, 0)? as usize;
                        let binding = sym[4] >> 4;
                        let index = read_u16(sym, 6)?;
                        if name != 0 && index == SHN_UNDEF && binding == STB_GLOBAL {
                            out.undefined.push(string_at(strings, name)?);
                        }
                    }
                }
                SHT_DYNAMIC => {
                    let strings = contents(sections.get(section.link)?)?;
                    for entry in contents(section)?.chunks_exact(16) {
                        match read_u64(entry, 0)? {
                            DT_NULL => break,
                            DT_NEEDED => out.needed.push(string_at(strings, read_u64(entry, 8)? as usize)?),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Some(out)
    }
}

/// The undefined symbols that neither this process nor the needed libraries define (each looked
/// for in `search` first, as the loader reads `program.so`'s run path).
fn unresolved(symbols: &DynamicSymbols, search: &[std::path::PathBuf]) -> Vec<String> {
    use libloading::os::unix::{Library, RTLD_LAZY, RTLD_LOCAL};
    let this = Library::this();
    let place = |name: &String| -> std::ffi::OsString {
        if name.contains('/') {
            return name.into();
        }
        search.iter().map(|dir| dir.join(name)).find(|p| p.is_file()).map_or_else(|| name.into(), |p| p.into_os_string())
    };
    // SAFETY: the libraries are the ones the object was linked against (the C and math
    // libraries, and those the command line names), about to be loaded with the program
    // anyway; opening them runs their initialisers, as loading the program will.
    let libraries: Vec<Library> =
        symbols.needed.iter().filter_map(|name| unsafe { Library::open(Some(place(name)), RTLD_LAZY | RTLD_LOCAL) }.ok()).collect();
    // SAFETY: only the symbol's presence is asked; the pointer is never used.
    let defined = |name: &str| {
        std::iter::once(&this).chain(&libraries).any(|lib| unsafe { lib.get::<*const c_void>(name.as_bytes()) }.is_ok())
    };
    let mut missing: Vec<String> = symbols.undefined.iter().filter(|name| !defined(name)).cloned().collect();
    missing.dedup();
    missing
}

/// The first place the user's code calls `name` (else names it at all).
fn first_use(units: &[TranslationUnit], name: &str) -> Option<Span> {
    let (mut call, mut mention) = (None, None);
    for unit in units {
        super::host_c::visit_unit_exprs(unit, &mut |e| match &e.kind {
            ExprKind::Call { callee, .. } if matches!(&callee.kind, ExprKind::Ident(n) if n == name) => {
                call.get_or_insert(e.span);
            }
            ExprKind::Ident(n) if n == name => {
                mention.get_or_insert(e.span);
            }
            _ => {}
        });
        if call.is_some() {
            break;
        }
    }
    call.or(mention)
}

/// `linked`: the program is linked with libraries beyond the C and math ones.
fn missing_symbol_diagnostic(units: &[TranslationUnit], missing: &[String], linked: bool) -> Diagnostic {
    let mut uses: Vec<(Option<Span>, &String)> = missing.iter().map(|name| (first_use(units, name), name)).collect();
    // The first in the program's text (files in command-line order) is the one pointed at.
    uses.sort_by_key(|(span, _)| span.map_or((u32::MAX, u32::MAX), |s| (s.tu, s.lo)));
    let (span, name) = uses[0];
    let libraries = if linked {
        "none of the OpenACC runtime API, the C and math libraries or the libraries the program is linked with provide it"
    } else {
        "neither the OpenACC runtime API nor the C and math libraries provide it"
    };
    let message = format!("`{name}` is defined nowhere: no file of the program defines it, and {libraries}");
    let mut help = if name.starts_with("acc_") {
        format!("`{name}` is not a routine of the OpenACC 3.3 API that Yosegi provides (include/openacc.h lists them); check its spelling")
    } else if name.starts_with("omp_") {
        format!("`{name}` is not a routine of OpenMP's API (libgomp); check its spelling")
    } else {
        "define it, give the file that defines it on the command line (`yosegi run main.c other.c`), or link the library that provides it (`yosegi run -L DIR -lNAME ...`)".to_string()
    };
    let others: Vec<&str> = uses[1..].iter().map(|(_, n)| n.as_str()).collect();
    if !others.is_empty() {
        help.push_str(&format!("; also undefined: {}", others.join(", ")));
    }
    match span {
        Some(span) => Diagnostic::error(span, message).with_label(format!("call to undefined `{name}`")),
        None => Diagnostic::global_error(message),
    }
    .with_help(help)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_elf_input_is_not_checked() {
        assert_eq!(DynamicSymbols::parse(b"not an object"), None);
        assert_eq!(DynamicSymbols::parse(b""), None);
    }

    #[test]
    fn a_truncated_object_is_not_checked() {
        let mut header = b"\x7fELF\x02\x01\x01".to_vec();
        header.resize(0x40, 0);
        // Section headers said to lie far past the end of the file.
        header[0x28..0x30].copy_from_slice(&0x1_0000u64.to_le_bytes());
        header[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        header[0x3c..0x3e].copy_from_slice(&3u16.to_le_bytes());
        assert_eq!(DynamicSymbols::parse(&header), None);
    }

    #[test]
    fn a_shared_object_lists_its_undefined_functions_and_libraries() {
        let dir = tempfile::tempdir().expect("temp dir");
        let source = dir.path().join("lib.c");
        std::fs::write(
            &source,
            "#include <math.h>\nextern int undefined_here(int);\n__attribute__((weak)) int maybe(void);\n\
             int defined_here(int x) { return undefined_here(x) + (int)sqrt((double)x) + (maybe ? maybe() : 0); }\n",
        )
        .expect("write");
        let object = dir.path().join("lib.so");
        let built = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-o"])
            .arg(&object)
            .arg(&source)
            .arg("-lm")
            .status()
            .expect("cc runs");
        assert!(built.success());
        let symbols = DynamicSymbols::parse(&std::fs::read(&object).expect("built")).expect("an ELF object");
        assert!(symbols.undefined.contains(&"undefined_here".to_string()), "{symbols:?}");
        assert!(!symbols.undefined.iter().any(|s| s == "defined_here" || s == "maybe"), "{symbols:?}");
        assert!(symbols.needed.iter().any(|n| n.starts_with("libm.so")), "{symbols:?}");
        assert_eq!(unresolved(&symbols, &[]), vec!["undefined_here".to_string()]);
    }

    /// A library of the command line's `-L` folder is found there, as the loader finds it
    /// through the program's run path, and provides its symbols; not searched, it is found
    /// nowhere and neither is its symbol.
    #[test]
    fn needed_libraries_are_looked_for_in_the_search_folders() {
        let dir = tempfile::tempdir().expect("temp dir");
        let source = dir.path().join("t.c");
        std::fs::write(&source, "int yosegi_link_check_probe(int x) { return x + 1; }\n").expect("write");
        let built = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(dir.path().join("libyosegiprobe.so"))
            .arg(&source)
            .status()
            .expect("cc runs");
        assert!(built.success());
        let symbols = DynamicSymbols {
            undefined: vec!["yosegi_link_check_probe".into()],
            needed: vec!["libyosegiprobe.so".into(), "libc.so.6".into()],
        };
        assert!(unresolved(&symbols, &[dir.path().to_path_buf()]).is_empty());
        assert_eq!(unresolved(&symbols, &[]), vec!["yosegi_link_check_probe".to_string()]);
    }

    #[test]
    fn symbols_of_the_c_library_resolve_and_invented_ones_do_not() {
        let symbols = DynamicSymbols {
            undefined: vec!["printf".into(), "sqrt".into(), "yosegi_no_such_function_x".into()],
            needed: vec!["libm.so.6".into(), "libc.so.6".into()],
        };
        assert_eq!(unresolved(&symbols, &[]), vec!["yosegi_no_such_function_x".to_string()]);
    }
}
