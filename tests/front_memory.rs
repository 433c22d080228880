//! The compiler's memory grows with its input by a small factor: a table of millions of
//! numbers (what makes a C source large) is compiled, from preprocessed text to explain, host
//! C, CUDA C and IR text, within ten times the text's size. The heap is counted by this test's
//! own allocator, so that the system preprocessor (another process) is not in the figure; this
//! file holds one test, so no other test allocates beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes the compilation of `text` held at once, beyond what was live before it.
fn peak_bytes_compiling(text: String) -> usize {
    let tuning = tempfile::tempdir().unwrap();
    let tuning_dir = tuning.path().to_path_buf();
    // The compiler's walkers recurse; the CLI runs them on a large stack too.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let before = LIVE.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let verdict = yosegi::fuzz::check_input(std::path::Path::new("table.c"), text, false, &tuning_dir);
            assert_eq!(verdict, yosegi::fuzz::Verdict::Compiled, "the table program does not compile");
            PEAK.load(Ordering::Relaxed) - before
        })
        .unwrap()
        .join()
        .unwrap()
}

/// A program whose text is mostly the initialiser `table` of `count` elements, read by a
/// parallel loop (so that it reaches the lowering and the CUDA writer as well).
fn table_program(decl: &str, table: &str, count: usize, read: &str) -> String {
    format!(
        "int printf(const char *, ...);\n{decl} = {{{table}}};\ndouble out[64];\n\
         int main(void) {{\n    double s = 0;\n\
         #pragma acc parallel loop copyout(out)\n    for (int i = 0; i < 64; i++) out[i] = i * 0.5;\n\
         for (long i = 0; i < {count}; i++) s += {read};\n    printf(\"%f %f\\n\", s, out[63]);\n    return 0;\n}}\n"
    )
}

#[test]
fn a_table_of_millions_of_numbers_compiles_within_ten_times_its_text() {
    let n = 1_500_000;
    let ints: Vec<String> = (0..n).map(|k| (k % 97).to_string()).collect();
    let floats: Vec<String> = (0..n)
        .map(|k| match k % 4 {
            0 => format!("-{}.5", k % 13),
            1 => format!("{}e-3", k % 1000),
            2 => format!("0x{:x}", k),
            _ => format!("{}.25f", k % 7),
        })
        .collect();
    let rows: Vec<String> = ints.chunks(1000).map(|row| format!("{{{}}}", row.join(","))).collect();
    let cases = [
        ("ints", table_program(&format!("static const int t[{n}]"), &ints.join(","), n, "t[i % 64]")),
        ("floats", table_program(&format!("static const double t[{n}]"), &floats.join(", "), n, "t[i % 64]")),
        ("rows", table_program(&format!("static const short t[{}][1000]", n / 1000), &rows.join(",\n"), n / 1000, "t[i][i % 1000]")),
    ];
    for (what, text) in cases {
        let size = text.len();
        let peak = peak_bytes_compiling(text);
        let ratio = peak as f64 / size as f64;
        eprintln!("{what}: {size} bytes of text, {peak} bytes at the peak ({ratio:.1}x)");
        assert!(peak <= 10 * size, "{what}: compiling {size} bytes of text took {peak} bytes at once ({ratio:.1}x the text; the bound is 10x)");
    }
}
