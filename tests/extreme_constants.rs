//! Constants near the ends of `i64` in subscripts: the analyses and the fusion planner reason
//! about them with checked arithmetic, so a program whose offsets overflow is never planned
//! with wrapped values. A fused kernel must not serve a wild read from its exchange tile (the
//! simulator reports the read as it does without fusion), and a dependence distance of
//! `i64::MIN` is reported as what it is. (Under the fuzz profile's overflow checks the same
//! inputs panicked in `opt/fusion/chain.rs` and `analysis::dependence`.)

mod common;

use common::{Input, run, yosegi};

/// Two loops of one `parallel` region, the second reading the first's array at `offset`.
fn chain_with_offset(offset: &str) -> String {
    format!(
        "#include <stdio.h>\nint main(void) {{\n    double a[100], b[100], c[100];\n    for (int i = 0; i < 100; i++) {{ a[i] = i; b[i] = 0; c[i] = 0; }}\n\
         #pragma acc parallel copyin(a) create(b) copyout(c)\n    {{\n\
         #pragma acc loop independent\n        for (int i = 0; i < 100; i++) b[i] = a[i];\n\
         #pragma acc loop independent\n        for (int i = 1; i < 99; i++) c[i] = b[i + ({offset})];\n    }}\n\
         printf(\"%f\\n\", c[50]);\n    return 0;\n}}\n"
    )
}

const EXTREMES: &[&str] = &[
    "-0x7fffffffffffffff - 1",
    "0x7fffffffffffffff",
    "-0x7fffffffffffffff",
    "0x4000000000000000",
    "-0x4000000000000000",
];

#[test]
fn a_wild_read_is_reported_with_fusion_as_without() {
    let dir = tempfile::tempdir().unwrap();
    for offset in EXTREMES {
        let path = dir.path().join("chain.c");
        std::fs::write(&path, chain_with_offset(offset)).unwrap();
        let mut outcomes = Vec::new();
        for fusion in ["on", "off"] {
            let mut cmd = yosegi();
            cmd.args(["run", "--device", "sim", "-w", "--fusion", fusion]).arg(&path);
            let out = run(cmd, Input::Nothing);
            assert_eq!(out.code(), Some(1), "offset {offset}, fusion {fusion}: {}", out.describe());
            assert!(out.stderr.contains("out-of-bounds read of `b`"), "offset {offset}, fusion {fusion}: {}", out.describe());
            assert!(!out.stderr.contains("panicked"), "{}", out.describe());
            outcomes.push(out.stderr.lines().find(|l| l.contains("out-of-bounds")).unwrap_or_default().to_string());
        }
        assert_eq!(outcomes[0], outcomes[1], "offset {offset}: fusion changed the fault");
    }
}

#[test]
fn explain_plans_no_wrapped_halo_or_distance() {
    let dir = tempfile::tempdir().unwrap();
    let chain = dir.path().join("chain.c");
    std::fs::write(&chain, chain_with_offset("-0x7fffffffffffffff - 1")).unwrap();
    let mut cmd = yosegi();
    cmd.args(["explain", "--fusion", "on", "-w"]).arg(&chain);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    // Not fused, with the reason, rather than planned with a wrapped extension; the halo a
    // split would need is the offset's true size, 2^63, not a wrapped one.
    assert!(out.stdout.contains("not fused: `main_l8` and `main_l10`: `main_l8` would need more redundant iterations along its dim 1 than can be counted"), "{}", out.describe());
    assert!(out.stdout.contains("a halo of 9223372036854775808 before"), "{}", out.describe());
    assert!(!out.stdout.contains("halo of 9223372036854775807") && !out.stdout.contains("cost -"), "{}", out.describe());

    let dep = dir.path().join("dep.c");
    std::fs::write(
        &dep,
        "#include <stdio.h>\nint main(void) {\n    double a[12];\n    int i;\n    for (i = 0; i < 12; i++) a[i] = i;\n\
         #pragma acc kernels\n    for (i = 1; i < 12; i++) a[i] = a[i - (-0x7fffffffffffffff - 1)] * 0.5 + a[i];\n\
         printf(\"%f\\n\", a[5]);\n    return 0;\n}\n",
    )
    .unwrap();
    let mut cmd = yosegi();
    cmd.args(["explain"]).arg(&dep);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    // `i - INT64_MIN` has no affine form in i64 (its offset is 2^63), so the subscript is
    // irregular and the loop stays sequential with the reason; never a wrapped distance.
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("warning: loop left sequential"), "{}", out.describe());
    assert!(all.contains("irregular"), "{}", out.describe());
    assert!(out.stdout.contains("sequential: `a[i]` and `a[(long long)i - (-9223372036854775807ll - 1ll)]` may touch the same element"), "{}", out.describe());
    assert!(!all.contains("distance -") && !all.contains("distance 9223372036854775807"), "{}", out.describe());
}

/// `INT_MIN / -1` in a kernel is caught on the simulator as division by zero is (gcc's build
/// of the same program dies of SIGFPE), with the kernel's line.
#[test]
fn int_min_divided_by_minus_one_is_a_fault_on_sim() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("divide.c");
    std::fs::write(
        &path,
        "#include <stdio.h>\n#include <limits.h>\nint main(void) {\n    int d[4] = {1, 2, -1, 4}, q[4];\n    int top = INT_MIN;\n\
         #pragma acc parallel loop copyin(d) copyout(q)\n    for (int i = 0; i < 4; i++)\n        q[i] = top / d[i];\n\
         printf(\"%d\\n\", q[0]);\n    return 0;\n}\n",
    )
    .unwrap();
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "-w"]).arg(&path);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    assert!(out.stderr.contains("integer division overflow (the most negative value divided by -1)"), "{}", out.describe());
    assert!(out.stderr.contains("divide.c:8"), "{}", out.describe());
}
