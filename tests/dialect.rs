//! The MESI-CUDA dialect beyond agreeing with gcc (which `differential.rs` checks for every
//! program in it): the paper's worked examples get staged variants, and the runtime moves only
//! what the other side changed.

mod common;

use common::{Input, repo_root, run, yosegi};

fn example(name: &str) -> std::path::PathBuf {
    repo_root().join("examples").join("mesi").join(name)
}

fn explain(name: &str, defines: &[&str]) -> String {
    let mut cmd = yosegi();
    cmd.arg("explain").args(defines).arg(example(name));
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    finished.stdout
}

/// The bytes a run moved each way, from `--stats`.
fn bytes_moved(name: &str, defines: &[&str], args: &[&str]) -> (u64, u64) {
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats"]).args(defines).arg(example(name)).arg("--").args(args);
    let finished = run(cmd, Input::Nothing);
    assert_eq!(finished.code(), Some(0), "{}", finished.describe());
    let value = |label: &str| -> u64 {
        finished
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix(label).and_then(|rest| rest.trim().parse().ok()))
            .unwrap_or_else(|| panic!("no `{label}` in\n{}", finished.stderr))
    };
    (value("host->device bytes"), value("device->host bytes"))
}

#[test]
fn the_diffusion_kernel_is_staged_with_its_halo() {
    let text = explain("diffusion.cu", &["-DN=4096"]);
    // The bounds test became the launch's range, so the four reads (src[i] twice) are unconditional.
    assert!(text.contains("4 refs src[__yosegi_tx+{0..2}] form one group, halo [0..2]"), "{text}");
    assert!(text.contains("staged `diffuse_l"), "{text}");
}

#[test]
fn the_histogram_swaps_its_data_through_shared_memory() {
    let text = explain("histogram.cu", &["-DLEN=3000", "-DBINS=300"]);
    assert!(text.contains("data swapping: loop i runs in strips"), "{text}");
    assert!(text.contains("staged data (data[i])"), "{text}");
}

#[test]
fn the_matrix_vector_kernel_stages_the_row_every_thread_reads() {
    let text = explain("matvec.cu", &["-DN=128"]);
    assert!(text.contains("staged a (a[k])"), "{text}");
}

#[test]
fn a_two_dimensional_stencil_is_staged_with_its_halo() {
    let text = explain("jacobi2d.cu", &["-DM=96"]);
    assert!(text.contains("staged src (src[__yosegi_ty+{-1..1}][__yosegi_tx+{-1..1}])"), "{text}");
}

/// Diffusion: `u` goes to the device once and `un` only for the two boundary elements the host
/// set; only `u`'s interior (what the kernels wrote) comes back, when the host reads it.
#[test]
fn diffusion_moves_each_array_once_and_only_what_was_written() {
    let n = 4096u64;
    let (to_device, to_host) = bytes_moved("diffusion.cu", &["-DN=4096"], &["20"]);
    assert_eq!(to_device, 4 * n + 2 * 4, "u whole, and un's two boundary elements");
    assert_eq!(to_host, 4 * (n - 2), "u's interior, which the kernels wrote");
}

/// Histogram: the data goes once; each later round the host changes one element and only that
/// element goes again; the host reads one bin per round (the kernel rewrote it), and at the
/// end the bins it has not read since the last launch.
#[test]
fn histogram_rounds_move_only_the_element_the_host_changed() {
    let (len, bins, rounds) = (3000u64, 300u64, 5u64);
    let (to_device, to_host) = bytes_moved("histogram.cu", &["-DLEN=3000", "-DBINS=300"], &["5"]);
    assert_eq!(to_device, 4 * len + 4 * (rounds - 1));
    assert_eq!(to_host, 4 * rounds + 4 * (bins - 1));
}

/// A host loop over a block of an array (`for (i = first; i < first + LEN / 16; i++)
/// values[i] ^= ...`) makes only that block stale on the device: each later round sends the
/// block again, not the array.
#[test]
fn a_host_loop_over_a_block_sends_only_the_block_again() {
    let (len, rounds) = (5000u64, 4u64);
    let (to_device, _) = bytes_moved("histogram_atomic.cu", &["-DLEN=5000", "-DBINS=64"], &["4"]);
    // The whole array and the `largest` cell once, then a sixteenth of the array per round
    // after the first (the first refill comes before anything is on the device).
    assert_eq!(to_device, 4 * len + 4 + (rounds - 1) * 4 * (len / 16));
}
