//! The performance model end to end on the simulator: programs run with `--stats=json`, and
//! per kernel the model's counts (sampled blocks scaled to the grid) agree with what the
//! simulator counted over every block, its device-memory bytes are the access analysis's
//! sections, and the text form shows the predictions. A change in the analysis, the sampler or
//! the counters that breaks the model fails here.

mod common;

use common::{Input, repo_root, run, yosegi};
use serde_json::Value;

/// `yosegi run --device sim --stats=json FILE -- ARGS`: the stats.
fn stats_of(file: &std::path::Path, args: &[&str]) -> Value {
    stats_with(file, &[], args)
}

/// `yosegi run --device sim --stats=json OPTIONS FILE -- ARGS`: the stats. The model's bounds
/// on sampling time are lifted: these tests check what it counts, and a sample slowed past its
/// deadline by the other tests running beside it would leave a launch unpredicted.
fn stats_with(file: &std::path::Path, options: &[&str], args: &[&str]) -> Value {
    stats_in_env(file, options, args, &[("YOSEGI_MODEL_SAMPLE_MS", "off"), ("YOSEGI_MODEL_BUDGET_MS", "off")])
}

/// [`stats_with`] with the environment variables `env` set (the bounds on sampling as they
/// are unless `env` sets them).
fn stats_in_env(file: &std::path::Path, options: &[&str], args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats=json", "-w"]).args(options).arg(file).arg("--").args(args);
    cmd.envs(env.iter().copied());
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let start = out.stderr.find("{\n").unwrap_or_else(|| panic!("no JSON stats on stderr:\n{}", out.stderr));
    serde_json::from_str(&out.stderr[start..]).unwrap_or_else(|e| panic!("stats are not JSON ({e}):\n{}", out.stderr))
}

/// [`stats_of`] a program written to a temporary file `name`.
fn stats_of_source(name: &str, source: &str) -> Value {
    stats_of_source_with(name, source, &[])
}

/// [`stats_with`] a program written to a temporary file `name`, run with `options`.
fn stats_of_source_with(name: &str, source: &str, options: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    stats_with(&source_file(&dir, name, source), options, &[])
}

/// `source` written to `name` in `dir`: its path.
fn source_file(dir: &tempfile::TempDir, name: &str, source: &str) -> std::path::PathBuf {
    let file = dir.path().join(name);
    std::fs::write(&file, source).unwrap();
    file
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

#[test]
fn a_copy_kernel_is_predicted_from_its_exact_counts_and_sections() {
    let stats = stats_of_source(
        "scale.c",
        "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n  int n = 1 << 16;\n  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);\n  for (int i = 0; i < n; i++) a[i] = i;\n  #pragma acc parallel loop copyin(a[0:n]) copyout(b[0:n])\n  for (int i = 0; i < n; i++) b[i] = 2.0 * a[i];\n  printf(\"%.1f\\n\", b[n - 1]);\n  free(a); free(b);\n  return 0;\n}\n",
    );
    let kernels = stats["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 1, "{stats}");
    let k = &kernels[0];
    let n = 1u64 << 16;
    assert_eq!(count(k, "predicted_launches"), 1);
    let predicted = &k["predicted_counters"];
    assert_eq!(count(predicted, "global_loads"), n);
    assert_eq!(count(predicted, "global_stores"), n);
    assert_eq!(count(predicted, "double_ops"), n);
    // A warp's 32 doubles are 8 sectors, loaded and stored.
    assert_eq!(count(predicted, "global_transactions"), 2 * n / 4);
    // The sections: a read and b written, 8 bytes an element.
    let last = &k["last_prediction"];
    assert_eq!(count(last, "dram_bytes"), 16 * n);
    assert_eq!(count(k, "bytes_moved"), 16 * n);
    assert!(last["seconds"].as_f64().unwrap() > 0.0);
    // The simulator's machine is nominal, and says so.
    assert_eq!(stats["machine"]["measured"], Value::Bool(false));
}

/// Per kernel of the examples (staged variants with shared memory and barriers, reductions,
/// 1-D to 3-D grids): every launch predicted, and the sampled counts within a tenth of the
/// simulator's (blocks at the grid's edges do less than the sampled ones).
#[test]
fn sampled_counts_agree_with_the_simulator_on_the_examples() {
    let cases: [(&str, &[&str]); 5] = [
        ("jacobi2d.c", &["96", "3"]),
        ("heat3d.c", &["20", "2"]),
        ("cg.c", &["24", "4", "0"]),
        ("matmul_vec.c", &["300", "40", "2"]),
        ("diffusion1d.c", &["4096", "3"]),
    ];
    let mut compared = 0;
    for (file, args) in cases {
        let stats = stats_of(&repo_root().join("examples").join(file), args);
        for k in stats["kernels"].as_array().expect("kernels") {
            let name = k["name"].as_str().unwrap();
            assert_eq!(count(k, "predicted_launches"), count(k, "launches"), "{file} {name}: every launch is predicted");
            for key in ["global_transactions", "global_loads", "global_stores", "shared_accesses", "bank_conflict_degree_sum", "shared_wavefronts", "double_ops", "float_ops", "barriers"] {
                let measured = count(&k["counters"], key) as f64;
                let predicted = count(&k["predicted_counters"], key) as f64;
                let error = (predicted - measured).abs() / measured.max(1.0);
                assert!(error <= 0.10, "{file} {name} {key}: predicted {predicted}, simulated {measured}");
                compared += 1;
            }
            let last = &k["last_prediction"];
            assert!(count(last, "dram_bytes") <= count(k, "bytes_moved") / count(k, "launches") + 1, "{file} {name}: device memory within the sections");
        }
    }
    assert!(compared >= 8 * 8, "the examples have kernels to compare ({compared} counts)");
}

#[test]
fn the_text_stats_show_predictions_beside_the_kernels() {
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats"]).arg(repo_root().join("examples").join("jacobi2d.c")).args(["--", "64", "2"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let table = out.stderr.split("model (per launch)").nth(1).unwrap_or_else(|| panic!("no model table:\n{}", out.stderr));
    assert!(table.lines().filter(|l| l.contains("main_l")).count() >= 2, "{table}");
}

/// A run with `--stats` leaves the model's predictions beside the tuning cache; `explain` then
/// shows them per kernel (with the scaling curve over devices) and per region.
#[test]
fn explain_shows_the_predictions_a_stats_run_left() {
    let cache = tempfile::tempdir().unwrap();
    let jacobi = repo_root().join("examples/jacobi2d.c");
    let mut cmd = yosegi();
    cmd.env("YOSEGI_CACHE_DIR", cache.path()).args(["run", "--device", "sim", "--stats=json", "-w"]).arg(&jacobi).args(["--", "64", "3"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).expect("JSON");
    for k in stats["kernels"].as_array().expect("kernels") {
        let curve = k["predicted_scaling_s"].as_array().unwrap_or_else(|| panic!("no scaling curve in {k}"));
        assert_eq!(curve.len(), 8, "{k}");
        assert!(curve.iter().all(|t| t.as_f64().is_some_and(|t| t > 0.0)), "{k}");
    }
    let records = std::fs::read_to_string(cache.path().join("model-predictions.txt")).expect("the run left its predictions");
    assert!(records.lines().any(|l| l.starts_with("p1\tmain_l56\t")), "{records}");

    let mut cmd = yosegi();
    cmd.env("YOSEGI_CACHE_DIR", cache.path()).arg("explain").arg(&jacobi);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let text = out.stdout;
    assert!(text.contains("    model on sim for n=64,j_first=0,j_count=62,i_first=0,i_count=62 (a steady launch; recorded by a run with --stats):\n"), "{text}");
    assert!(text.contains("      `main_l56`: predicted "), "{text}");
    assert!(text.contains(", 3 launches\n"), "{text}");
    assert!(text.contains("        split over devices of this kind: 2: "), "{text}");
    assert!(text.contains("  model on sim: one pass over the region's kernels predicted "), "{text}");

    // Without a run, explain says how to get predictions.
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = yosegi();
    cmd.env("YOSEGI_CACHE_DIR", empty.path()).arg("explain").arg(&jacobi);
    let out = run(cmd, Input::Nothing);
    assert!(out.stdout.contains("    model: no prediction recorded yet (a run with --stats leaves the model's predictions for explain)\n"), "{}", out.stdout);
}

/// The sampled blocks also count the distinct sectors each touched over its run (what the
/// block's own reuse leaves for the caches below it) and the sectors the L2 cache serves (the
/// L1 misses of a block's share of L1, and the stores): a copy touches each sector once, a
/// five-point stencil's rows are shared by its accesses.
#[test]
fn sampled_blocks_count_the_sectors_they_reuse() {
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats=json", "--staging", "off", "-w"]).arg(repo_root().join("examples/jacobi2d.c")).args(["--", "64", "2"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).expect("JSON");
    let kernels = stats["kernels"].as_array().expect("kernels");
    let counters = |name: &str| {
        let k = kernels.iter().find(|k| k["name"] == name).unwrap_or_else(|| panic!("no {name} in {stats}"));
        let c = &k["last_prediction"]["counters"];
        (count(c, "global_transactions"), count(c, "block_sectors"), count(c, "l2_sectors"), count(c, "l2_requests"))
    };
    let (copy_touched, copy_distinct, copy_l2, copy_requests) = counters("main_l56");
    // A coalesced warp access of 32 doubles asks L2 for two or three lines of up to four sectors.
    assert!(copy_requests > 0 && copy_requests * 3 <= copy_l2 && copy_l2 <= copy_requests * 4, "{copy_requests} requests for {copy_l2} sectors");
    assert!(copy_distinct > 0 && copy_distinct <= copy_touched, "{copy_distinct} of {copy_touched}");
    assert!(copy_distinct * 10 >= copy_touched * 9, "a copy reuses little: {copy_distinct} of {copy_touched}");
    // Each sector read once misses L1, and each written goes through it.
    assert_eq!(copy_l2, copy_touched, "the L2 cache serves every sector of a copy");
    // Five reads of A and a read and a write of Anew per point; A's rows are shared.
    let (touched, distinct, l2, _) = counters("main_l48");
    assert!(distinct > 0 && distinct * 2 < touched, "the stencil's block reuses its rows: {distinct} of {touched}");
    // The rows a block reuses stay in its share of L1: L2 serves each distinct sector read
    // once, and each sector stored (distinct counts those apart from the ones read).
    assert!(distinct <= l2 && l2 * 2 < touched, "the L2 cache serves what L1 misses and the stores: {l2} of {touched} ({distinct} distinct)");
}

/// The curves over MPI ranks (`model::cluster`): a 2-D Jacobi sweep of 2048x2048 doubles. Split
/// over two ranks the sweep gains; weak scaling adds each rank's halo (a row per neighbour) over
/// NVLink inside a node and over the network beyond it, by exactly the bytes over the link's
/// rate plus its latency per copy.
#[test]
fn the_model_predicts_the_sweep_over_ranks_and_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(
        &dir,
        "sweep.c",
        "#include <stdio.h>\n#define N 2048\nstatic double a[N][N], b[N][N];\nint main(void) {\n  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) a[i][j] = b[i][j] = (i * 7 + j) % 13;\n  \
         #pragma acc data copy(a, b)\n  for (int t = 0; t < 4; t++) {\n    #pragma acc parallel loop collapse(2)\n    for (int i = 1; i < N - 1; i++) for (int j = 1; j < N - 1; j++) b[i][j] = 0.25 * (a[i-1][j] + a[i+1][j] + a[i][j-1] + a[i][j+1]);\n    \
         #pragma acc parallel loop collapse(2)\n    for (int i = 1; i < N - 1; i++) for (int j = 1; j < N - 1; j++) a[i][j] = b[i][j];\n  }\n  printf(\"%.6f\\n\", a[N / 2][N / 2]);\n  return 0;\n}\n",
    );
    let mut cmd = yosegi();
    cmd.env("YOSEGI_NODE_GPUS", "4").env("YOSEGI_NETWORK_GBPS", "10").env("YOSEGI_NETWORK_LATENCY_US", "7");
    cmd.args(["run", "--device", "sim", "--fusion", "off", "--stats=json", "-w"]).arg(&file);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).unwrap();
    let sweep = stats["kernels"].as_array().unwrap().iter().find(|k| k["name"].as_str().is_some_and(|n| n.starts_with("main_l9"))).expect("the sweep");
    let ranks = &sweep["predicted_ranks"];
    let curve = |key: &str| ranks[key].as_array().unwrap_or_else(|| panic!("no {key}: {sweep}")).iter().map(|t| t.as_f64().unwrap()).collect::<Vec<f64>>();
    assert_eq!(ranks["ranks"], serde_json::json!([1, 2, 4, 8, 16, 32, 64]));
    assert_eq!(ranks["gpus_per_node"], 4);
    let (strong, weak) = (curve("strong_s"), curve("weak_s"));
    // A 32 MB sweep gains from a second rank; beyond, each rank's two halo copies (10 us each
    // on the nominal peer link) cost more than its shrinking part saves.
    assert!(strong[1] < strong[0], "strong scaling gains on two ranks: {strong:?}");
    assert!(strong[6] > strong[1], "64 ranks cost more than 2 for a 32 MB sweep: {strong:?}");
    // Weak scaling: the one-rank time plus an interior rank's halo in two copies, over NVLink
    // inside the node (4 ranks), over the network beyond (8 ranks). The halo is what the 4-rank
    // point says: at most two rows of the sweep's 2046 doubles (a staged variant's sections
    // may read less of them).
    let machine = &stats["machine"];
    let (peer_bw, peer_s) = (machine["peer_bytes_per_s"].as_f64().unwrap(), machine["peer_copy_s"].as_f64().unwrap());
    let halo = (weak[2] - weak[0] - 2.0 * peer_s) * peer_bw;
    assert!(halo > 0.0 && halo <= 2.0 * 2048.0 * 8.0 + 1.0, "halo {halo} bytes: {weak:?}");
    let across = halo / 10e9_f64.min(peer_bw) + 2.0 * 7e-6_f64.max(peer_s);
    assert!((weak[3] - weak[0] - across).abs() < 1e-9, "8 ranks, two nodes: {weak:?} (halo {across} s)");
    assert!(weak[3] > weak[2] && weak[6] >= weak[3], "the network costs more than NVLink: {weak:?}");
    // The region's account in explain names the ranks it pays for.
    let mut explain = yosegi();
    explain.env("YOSEGI_NODE_GPUS", "4").env("YOSEGI_NETWORK_GBPS", "10").env("YOSEGI_NETWORK_LATENCY_US", "7").arg("explain").arg(&file);
    let text = run(explain, Input::Nothing);
    assert!(text.stdout.contains("over MPI ranks of one GPU (4 a node, 10 GB/s and 7 us between nodes)"), "{}", text.stdout);
    assert!(text.stdout.contains("pays for"), "{}", text.stdout);
}

/// The first launch of a kernel pays for loading its code, and the first launch to touch data
/// the host just copied in pays for that touch, once (bench/NOTES.md run 26): a kernel reading
/// a `copyin` array, one reading only `create` arrays (zeroed on the device, no copy from the
/// host), and the first kernel after an `update device` of the array.
#[test]
fn the_first_touch_of_uploaded_data_is_paid_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(
        &dir,
        "touch.c",
        "#include <stdio.h>\n#define N 4096\nstatic double a[N], b[N], c[N];\nint main(void) {\n  for (int i = 0; i < N; i++) a[i] = i;\n  \
         #pragma acc data copyin(a) create(b, c)\n  {\n    for (int t = 0; t < 3; t++) {\n      #pragma acc parallel loop\n      for (int i = 0; i < N; i++) b[i] = 2.0 * a[i];\n    }\n    \
         for (int t = 0; t < 3; t++) {\n      #pragma acc parallel loop\n      for (int i = 0; i < N; i++) c[i] = b[i] + 1.0;\n    }\n    a[0] = 5.0;\n    #pragma acc update device(a[0:1])\n    \
         for (int t = 0; t < 3; t++) {\n      #pragma acc parallel loop\n      for (int i = 0; i < N; i++) c[i] = c[i] + a[i];\n    }\n    #pragma acc update self(b, c)\n  }\n  printf(\"%.1f %.1f\\n\", b[N - 1], c[0]);\n  return 0;\n}\n",
    );
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--fusion", "off", "--stats=json", "-w"]).arg(&file);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert_eq!(out.stdout, "8190.0 16.0\n");
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).unwrap();
    let machine = &stats["machine"];
    let (first, touch) = (machine["first_launch_s"].as_f64().unwrap(), machine["upload_touch_s"].as_f64().unwrap());
    assert!(first > 0.0 && touch > 0.0, "{machine}");
    // Three launches each: the mean less the last (a steady launch) is a third of the extras,
    // give or take the device-memory time of what the earlier launches did not find in L2
    // and the last did (`model::residency`), and for the same reason the round trips of a
    // thread's two loads at most (device memory's instead of L2's, in two launches).
    let kernel = |line: &str| stats["kernels"].as_array().unwrap().iter().find(|k| k["name"] == format!("main_l{line}")).unwrap_or_else(|| panic!("no main_l{line}: {stats}"));
    let extra = |line: &str| {
        let k = kernel(line);
        assert_eq!(count(k, "predicted_launches"), 3, "{k}");
        3.0 * (k["mean_predicted_s"].as_f64().unwrap() - k["last_prediction"]["seconds"].as_f64().unwrap())
    };
    let memory = |line: &str| 3.0 * count(&kernel(line)["last_prediction"], "section_bytes") as f64 / machine["dram_bytes_per_s"].as_f64().unwrap();
    assert!(memory("10") < 0.01 * first, "the arrays are small beside the extras");
    let round_trips = 3.0 * 2.0 * 2.0 * machine["dram_round_trip_s"].as_f64().unwrap();
    assert!(round_trips < 0.5 * touch, "the round trips are small beside the extras");
    // Each first launch loads its code, from idle (`model::Timing::of_launch`): it pays the
    // idle extra too, where the simulator queues every other launch.
    let first = first + machine["idle_launch_observed_s"].as_f64().or(machine["idle_launch_s"].as_f64()).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-8 + memory("10") + round_trips;
    assert!(close(extra("10"), first + touch), "reads the copied-in array: {} against {}", extra("10"), first + touch);
    assert!(close(extra("14"), first), "reads created arrays only: {} against {first}", extra("14"));
    assert!(close(extra("20"), first + touch), "first after the update: {} against {}", extra("20"), first + touch);
}

/// `yosegi-model-replay` re-predicts stored stats with this build's model: with the run's own
/// figures it gives back the run's predictions, and a figure set lower moves the kernels it
/// bounds (here the L2 cache's rate, which then limits the copy).
#[test]
fn the_replay_gives_back_a_runs_predictions_and_follows_a_changed_figure() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("stats");
    std::fs::create_dir(&stats).unwrap();
    let mut cmd = yosegi();
    cmd.env("YOSEGI_STATS_DIR", &stats).args(["run", "--device", "sim", "--staging", "off", "-w"]).arg(repo_root().join("examples/jacobi2d.c")).args(["--", "64", "2"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let replay = |to: &str, set: &[&str]| -> Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_yosegi-model-replay")).arg(&stats).arg(dir.path().join(to)).args(set).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let file = std::fs::read_dir(dir.path().join(to)).unwrap().next().expect("a replayed file").unwrap().path();
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
    };
    let file = std::fs::read_dir(&stats).unwrap().next().expect("a stats file").unwrap().path();
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let kernel = |stats: &Value, name: &str| stats["kernels"].as_array().unwrap().iter().find(|k| k["name"] == name).unwrap_or_else(|| panic!("no {name}")).clone();
    let same = replay("same", &[]);
    for name in ["main_l48", "main_l56"] {
        let (a, b) = (kernel(&recorded, name)["mean_predicted_s"].as_f64().unwrap(), kernel(&same, name)["mean_predicted_s"].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-9 * a, "{name}: {a} recorded, {b} replayed");
    }
    let slow = replay("slow", &["--set", "l2_bytes_per_s=1e8"]);
    let copy = kernel(&slow, "main_l56");
    assert_eq!(copy["limited_by"], "L2 cache", "{copy}");
    assert!(copy["mean_predicted_s"].as_f64().unwrap() > 10.0 * kernel(&recorded, "main_l56")["mean_predicted_s"].as_f64().unwrap());
    // A changed launch figure moves every launch by the change (the run's own extras stay).
    let late = replay("late", &["--set", "launch_s=1e-3"]);
    let launch_s = recorded["machine"]["launch_s"].as_f64().unwrap();
    for name in ["main_l48", "main_l56"] {
        let (a, b) = (kernel(&recorded, name)["mean_predicted_s"].as_f64().unwrap(), kernel(&late, name)["mean_predicted_s"].as_f64().unwrap());
        assert!((b - a - (1e-3 - launch_s)).abs() < 1e-9, "{name}: {a} recorded, {b} with a 1 ms launch");
    }
    // The copy reads what the sweep before it wrote: the replay keeps what it found in L2,
    // and a cache that keeps none of it reads it all from device memory.
    let memory = |stats: &Value| kernel(stats, "main_l56")["last_prediction"]["memory_s"].as_f64().unwrap();
    let found = &kernel(&recorded, "main_l56")["last_prediction"]["resident_bytes"];
    assert!(found.as_array().is_some_and(|c| c.iter().all(|b| b.as_u64() > Some(0))), "{found}");
    assert_eq!(&kernel(&same, "main_l56")["last_prediction"]["resident_bytes"], found);
    let none = replay("none", &["--set", "l2_resident_share=0"]);
    assert!(memory(&none) > 1.5 * memory(&recorded), "{} with nothing kept against {}", memory(&none), memory(&recorded));
    // A changed idle extra moves each kernel by the shares of it its launches paid: a run
    // whose launches of `main_l48` paid half the extra each, on average (the simulator never
    // idles, so the shares are written in).
    let mut idling = recorded.clone();
    for k in idling["kernels"].as_array_mut().unwrap() {
        if k["name"] == "main_l48" {
            k["predicted_idle_share"] = Value::from(0.5 * k["predicted_launches"].as_f64().unwrap());
        }
    }
    let idle_stats = dir.path().join("idling");
    std::fs::create_dir(&idle_stats).unwrap();
    std::fs::write(idle_stats.join("run.json"), serde_json::to_string(&idling).unwrap()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_yosegi-model-replay")).arg(&idle_stats).arg(dir.path().join("idled")).args(["--set", "idle_launch_observed_s=1e-3"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let idled: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("idled/run.json")).unwrap()).unwrap();
    let recorded_idle = recorded["machine"]["idle_launch_observed_s"].as_f64().or(recorded["machine"]["idle_launch_s"].as_f64()).unwrap();
    // `main_l56` as recorded: its first launch, which loads its code, from idle (the model's
    // `Timing::of_launch`), the others queued.
    let copy = kernel(&recorded, "main_l56");
    let copy_share = copy["predicted_idle_share"].as_f64().unwrap() / copy["predicted_launches"].as_f64().unwrap();
    assert!(copy_share > 0.0 && copy_share < 1.0, "{copy}");
    for (name, share) in [("main_l48", 0.5), ("main_l56", copy_share)] {
        let (a, b) = (kernel(&recorded, name)["mean_predicted_s"].as_f64().unwrap(), kernel(&idled, name)["mean_predicted_s"].as_f64().unwrap());
        assert!((b - a - share * (1e-3 - recorded_idle)).abs() < 1e-9, "{name}: {a} recorded, {b} with a 1 ms idle extra");
    }
}

/// A thread per row of a matrix: each warp access asks L2 for a line per thread (one sector
/// of it), where a coalesced one asks for a few lines of four sectors (the copy above).
#[test]
fn a_strided_warp_access_asks_l2_for_a_line_per_sector() {
    let stats = stats_of_source(
        "rows.c",
        "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n    int n = 256;\n    double *a = malloc(sizeof(double) * n * n), *s = malloc(sizeof(double) * n);\n    \
         for (int i = 0; i < n * n; i++) a[i] = i % 7;\n    #pragma acc parallel loop copyin(a[0:n*n]) copyout(s[0:n])\n    \
         for (int i = 0; i < n; i++) {\n        double t = 0;\n        for (int j = 0; j < n; j++) t += a[i * n + j];\n        s[i] = t;\n    }\n    \
         printf(\"%f\\n\", s[n - 1]);\n    return 0;\n}\n",
    );
    let kernel = stats["kernels"].as_array().unwrap().iter().find(|k| k["last_prediction"].is_object()).unwrap_or_else(|| panic!("no prediction in {stats}"));
    let c = &kernel["last_prediction"]["counters"];
    let (sectors, requests) = (count(c, "l2_sectors"), count(c, "l2_requests"));
    assert!(sectors > 0 && requests * 10 >= sectors * 9, "{requests} requests for {sectors} sectors");
}

/// Column sums of an `m` x `n` array into `y`, the kernel's loop over `k` adding to `y[i]`;
/// `main` runs it on `x` and `y` (apart) and, when `shared` is set, also on two parts of one
/// array, so that the loop's loads may reach the element it adds to.
fn column_sums_source(shared: bool) -> String {
    let second = if shared {
        "  double *z = calloc((size_t)n * (m + 1), sizeof *z);\n  for (int j = 0; j < n * m; j++) z[j] = j % 3;\n  #pragma acc data copy(z[0:n*(m+1)])\n  column_sums(n, m, z, z + (size_t)n * m);\n  s = 0;\n  for (int i = 0; i < n; i++) s += z[(size_t)n * m + i];\n  printf(\"%.1f\\n\", s);\n  free(z);\n"
    } else {
        ""
    };
    format!(
        "#include <stdio.h>\n#include <stdlib.h>\nstatic void column_sums(int n, int m, const double *x, double *y) {{\n  #pragma acc parallel loop present(x[0:n*m], y[0:n])\n  for (int i = 0; i < n; i++)\n    for (int k = 0; k < m; k++) y[i] += x[k * n + i];\n}}\nint main(void) {{\n  int n = 4096, m = 16;\n  double *x = malloc((size_t)n * m * sizeof *x), *y = calloc(n, sizeof *y);\n  for (int j = 0; j < n * m; j++) x[j] = j % 5;\n  #pragma acc data copyin(x[0:n*m]) copy(y[0:n])\n  column_sums(n, m, x, y);\n  double s = 0;\n  for (int i = 0; i < n; i++) s += y[i];\n  printf(\"%.1f\\n\", s);\n{second}  free(x); free(y);\n  return 0;\n}}\n"
    )
}

#[test]
fn an_accumulator_the_gpu_keeps_in_a_register_is_counted_once_a_loop() {
    // `y[i] += x[k * n + i]` over k: with x and y apart, the CUDA C declares both restrict and
    // the compiler loads y[i] before the loop and stores it after; the simulator and the
    // model count that, not the C's load and store every iteration.
    let (n, m) = (4096u64, 16u64);
    let stats = stats_of_source("column_sums.c", &column_sums_source(false));
    let k = &stats["kernels"][0];
    for counters in [&k["counters"], &k["predicted_counters"]] {
        assert_eq!(count(counters, "global_loads"), n * m + n, "{k}");
        assert_eq!(count(counters, "global_stores"), n, "{k}");
        // x's warp reads of 32 doubles are 8 sectors; y's load and store are 8 each.
        assert_eq!(count(counters, "global_transactions"), (n * m + 2 * n) / 4, "{k}");
    }
}

#[test]
fn an_accumulator_the_loops_loads_may_reach_is_counted_every_iteration() {
    // The second call binds x and y to one array, which `y` is written through: no restrict,
    // and the compiler must load and store y[i] every iteration.
    let (n, m) = (4096u64, 16u64);
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(&dir, "column_sums.c", &column_sums_source(true));
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats=json", "-w"]).arg(&file);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    // gcc's answers for the two calls.
    assert_eq!(out.stdout, "131070.0\n65535.0\n");
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).unwrap();
    let c = &stats["kernels"][0]["counters"];
    // The first launch as above, the second with two loads and a store every iteration.
    assert_eq!(count(c, "global_loads"), (n * m + n) + 2 * n * m, "{c}");
    assert_eq!(count(c, "global_stores"), n + n * m, "{c}");
}

#[test]
fn every_launch_of_a_step_fused_kernel_is_predicted_with_the_chains_bytes() {
    // diffusion1d's time steps run fused, eight to a launch, swapping two buffers: each launch
    // moves the arrays, and the odd ones read the second buffer, which has no host copy to
    // sample (the prediction samples the first).
    let stats = stats_of(&repo_root().join("examples/diffusion1d.c"), &["65536", "40"]);
    let fused: Vec<&Value> = stats["kernels"].as_array().unwrap().iter().filter(|k| k["name"].as_str().unwrap().contains("_steps")).collect();
    assert!(!fused.is_empty(), "no step-fused kernel ran: {stats}");
    for k in fused {
        assert!(count(k, "launches") > 1, "{k}");
        assert_eq!(count(k, "predicted_launches"), count(k, "launches"), "{k}");
        assert!(count(&k["last_prediction"], "section_bytes") > 0, "{k}");
    }
}

/// A chain fused without its intermediates' stores moves in device memory what its first
/// member reads and its last stores: NPB BT's `y_solve` shape reads `u0`-`u3` and writes `la`,
/// `lb` and `lc` (rows 1 to n-2); `fjac` and `njac` pass from one member to the next in shared
/// memory (bench/NOTES.md run 39: the members' sections summed counted them too, 57% more).
#[test]
fn a_fused_chain_moves_what_its_members_read_first_and_it_stores() {
    let n = 64u64;
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats=json", "--fusion", "on", "-w"]).arg(repo_root().join("bench/fusion/y_solve.c")).args(["--", "64", "2"]);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).unwrap();
    let fused = stats["kernels"].as_array().unwrap().iter().find(|k| k["name"] == "y_solve_l29_fused_nostore").unwrap_or_else(|| panic!("the chain did not run fused: {stats}"));
    let expected = 8 * (4 * n * n + 3 * (n - 2) * n);
    assert_eq!(count(&fused["last_prediction"], "section_bytes"), expected, "{fused}");
    assert_eq!(count(fused, "bytes_moved"), expected * count(fused, "launches"), "{fused}");
}

#[test]
fn a_kernel_finds_in_l2_what_the_kernel_before_it_wrote() {
    // Unfused: the first kernel reads `a`, which the copy in left in L2, and writes `b`; the
    // second reads `b`, which the first left there, and writes `c`, which nothing touched: half
    // of each one's bytes are found, at every share of the cache (1.5 MB in all, far below a
    // quarter of it).
    let n = 1u64 << 16;
    let source = format!(
        "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {{\n  int n = {n};\n  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);\n  for (int i = 0; i < n; i++) a[i] = i % 7;\n  #pragma acc data copyin(a[0:n]) create(b[0:n]) copyout(c[0:n])\n  {{\n    #pragma acc parallel loop\n    for (int i = 0; i < n; i++) b[i] = 2 * a[i];\n    #pragma acc parallel loop\n    for (int i = 0; i < n; i++) c[i] = b[i] + 1;\n  }}\n  double s = 0;\n  for (int i = 0; i < n; i++) s += c[i];\n  printf(\"%.1f\\n\", s);\n  free(a); free(b); free(c);\n  return 0;\n}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(&dir, "two_kernels.c", &source);
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats=json", "--fusion", "off", "-w"]).arg(&file);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    // gcc's answer: 2 * (i % 7) + 1 summed.
    let expected: u64 = (0..n).map(|i| 2 * (i % 7) + 1).sum();
    assert_eq!(out.stdout, format!("{expected}.0\n"));
    let start = out.stderr.find("{\n").expect("JSON stats");
    let stats: Value = serde_json::from_str(&out.stderr[start..]).unwrap();
    let kernels = stats["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 2, "{stats}");
    let resident = |k: &Value| -> Vec<u64> {
        let p = &k["last_prediction"];
        assert_eq!(count(p, "section_bytes"), 2 * n * 8, "{k}");
        p["resident_bytes"].as_array().unwrap_or_else(|| panic!("no resident bytes in {k}")).iter().map(|b| b.as_u64().unwrap()).collect()
    };
    assert_eq!(resident(&kernels[0]), vec![n * 8; 4]);
    assert_eq!(resident(&kernels[1]), vec![n * 8; 4]);
}

/// Column sums of a 16 x 4096 array, a thread per column: each iteration's warp load asks for
/// lines no earlier load fetched (far loads, every one). With nothing stored in the loop the
/// compiler issues four iterations' loads together, so a thread waits a quarter as many
/// times, also where the loop adds to an element it keeps in a register; with a store to a
/// new place each iteration, once an iteration for each two of its far loads.
#[test]
fn a_loop_that_stores_nothing_overlaps_its_far_loads() {
    let source = |body: &str| {
        format!(
            "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {{\n  int n = 4096, m = 16;\n  double *a = malloc(sizeof(double) * n * m), *b = malloc(sizeof(double) * n * m), *c = malloc(sizeof(double) * n * m), *s = malloc(sizeof(double) * n);\n  \
             for (int i = 0; i < n * m; i++) a[i] = c[i] = i % 7;\n  #pragma acc parallel loop copyin(a[0:n*m], c[0:n*m]) copyout(s[0:n], b[0:n*m])\n  \
             for (int i = 0; i < n; i++) {{\n    double t = 0;\n    for (int k = 0; k < m; k++) {{ {body} }}\n    s[i] = t;\n  }}\n  \
             printf(\"%f\\n\", s[n - 1]);\n  return 0;\n}}\n"
        )
    };
    let rounds = |body: &str| {
        let stats = stats_of_source("columns.c", &source(body));
        let k = stats["kernels"].as_array().unwrap().iter().find(|k| k["last_prediction"].is_object()).cloned().unwrap_or_else(|| panic!("no prediction in {stats}"));
        let c = &k["last_prediction"]["counters"];
        (count(c, "global_loads"), count(c, "far_loads"), count(c, "load_rounds"), k["last_prediction"]["latency_s"].as_f64().unwrap())
    };
    let (n, m) = (4096u64, 16u64);
    let (loads, far, overlapped, overlapped_s) = rounds("t += a[k * n + i];");
    assert_eq!((loads, far), (n * m, n * m));
    assert_eq!(overlapped, n * m / 4);
    let (_, _, kept, _) = rounds("t += a[k * n + i]; s[i] = t;");
    assert_eq!(kept, n * m / 4);
    let (loads, far, waited, waited_s) = rounds("t += a[k * n + i]; b[k * n + i] = t;");
    assert_eq!((loads, far), (n * m, n * m));
    assert_eq!(waited, n * m);
    assert!(waited_s > 3.0 * overlapped_s, "{waited_s} s waiting each load against {overlapped_s} s");
    // Two far loads an iteration are waited for together.
    let (loads, far, paired, _) = rounds("t += a[k * n + i] * b[k * n + i]; b[k * n + i] = t;");
    assert_eq!((loads, far), (2 * n * m, 2 * n * m));
    assert_eq!(paired, n * m);
    // The same loads and store in another order: the load after the store is not moved above
    // it (they might alias), so the iteration waits twice (NPB SP's forward sweeps, run 36).
    let (loads, far, together, together_s) = rounds("t += c[k * n + i]; b[k * n + i] = a[k * n + i];");
    assert_eq!((loads, far, together), (2 * n * m, 2 * n * m, n * m));
    let (loads, far, apart, apart_s) = rounds("b[k * n + i] = a[k * n + i]; t += c[k * n + i];");
    assert_eq!((loads, far, apart), (2 * n * m, 2 * n * m, 2 * n * m));
    assert!(apart_s > 1.5 * together_s, "{apart_s} s against {together_s} s");
}

/// A copy to the device writes through its L2 cache: the kernel after a `copyin` finds the
/// array there, as it would after a kernel that wrote it, and a kernel after more than the
/// cache holds was copied in finds nothing.
#[test]
fn the_kernel_after_a_copy_in_finds_the_array_in_l2() {
    let source = |n: u64| {
        format!(
            "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {{\n  long n = {n};\n  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);\n  \
             for (long i = 0; i < n; i++) a[i] = i % 7;\n  #pragma acc parallel loop copyin(a[0:n]) copyout(b[0:n])\n  \
             for (long i = 0; i < n; i++) b[i] = 2.0 * a[i];\n  printf(\"%.1f\\n\", b[n - 1]);\n  return 0;\n}}\n"
        )
    };
    let found = |n: u64| {
        let stats = stats_of_source("copied.c", &source(n));
        let k = &stats["kernels"][0];
        let curve = k["last_prediction"]["resident_bytes"].as_array().unwrap_or_else(|| panic!("no resident bytes in {k}")).clone();
        (curve.iter().map(|b| b.as_u64().unwrap()).max().unwrap(), stats["machine"]["l2_bytes"].as_u64().unwrap())
    };
    let (resident, l2) = found(1 << 16);
    assert_eq!(resident, 8 << 16, "the read array, all of it");
    let n = 2 * l2 / 8;
    let (resident, _) = found(n);
    assert_eq!(resident, 0, "{n} doubles copied in: more than L2 holds");
}

/// Math functions are counted by what they cost: `fabs` is an instruction, `sqrt` a function,
/// `pow` several.
#[test]
fn math_calls_are_counted_by_their_cost() {
    let stats = stats_of_source(
        "norms.c",
        "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\nint main(void) {\n  int n = 1 << 12;\n  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);\n  \
         for (int i = 0; i < n; i++) a[i] = i % 5 - 2;\n  #pragma acc parallel loop copyin(a[0:n]) copyout(b[0:n])\n  \
         for (int i = 0; i < n; i++) b[i] = pow(a[i], 2.0) + fabs(a[i]) + sqrt(fabs(a[i]));\n  \
         printf(\"%.3f\\n\", b[n - 1]);\n  free(a); free(b);\n  return 0;\n}\n",
    );
    let k = &stats["kernels"][0];
    let n = 1u64 << 12;
    for counters in [&k["counters"], &k["predicted_counters"]] {
        assert_eq!(count(counters, "math_calls"), 4 * n, "{k}");
        assert_eq!(count(counters, "math_instructions"), 2 * n, "{k}");
        assert_eq!(count(counters, "math_pows"), n, "{k}");
    }
}

/// A launch moves in device memory no more than the distinct sectors its blocks touch, read
/// and written apart (bench/NOTES.md run 40): threads that each come back to the first
/// sector of their line of a 3-D array, eight times, move those sectors once, not the hull of
/// their section (the whole array) nor their eight passes; and a sector updated in place is
/// read and written back, two sectors' worth.
#[test]
fn a_launch_moves_the_distinct_sectors_its_blocks_touch() {
    // Unstaged: a staged variant would read the plane into shared memory once.
    let stats = stats_of_source_with(
        "plane.c",
        "#include <stdio.h>\n#define N 64\nstatic double a[N][N][N], s[N][N], u[N * N];\nint main(int argc, char **argv) {\n  int p = argc + 4;\n  \
         for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) { u[k * N + j] = k; for (int i = 0; i < N; i++) a[k][j][i] = k + j + i; }\n  \
         #pragma acc data copyin(a) copy(s, u)\n  {\n  \
         #pragma acc parallel loop collapse(2)\n  for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) {\n    double t = 0.0;\n    for (int r = 0; r < 8; r++) t += a[k][j][(p + r) % 4] * r;\n    s[k][j] = t;\n  }\n  \
         #pragma acc parallel loop\n  for (int i = 0; i < N * N; i++) u[i] = u[i] + 1.0;\n  }\n  \
         printf(\"%.1f %.1f\\n\", s[3][4], u[7]);\n  return 0;\n}\n",
        &["--staging", "off"],
    );
    let kernels = stats["kernels"].as_array().expect("kernels");
    let kernel = |name: &str| kernels.iter().find(|k| k["name"] == name).unwrap_or_else(|| panic!("no {name}: {stats}"));
    let n = 64u64;
    // Each thread's four elements lie in a sector of its own, read eight times; s is
    // written once. The section of a[k][j][(p + r) % 4] spans nearly the whole array.
    let plane = &kernel("main_l10")["last_prediction"];
    let c = &plane["counters"];
    let (touched, distinct) = (count(c, "global_transactions"), count(c, "block_sectors"));
    assert_eq!(distinct, n * n + n * n / 4, "a sector a thread of a, a quarter of one of s: {c}");
    assert!(touched >= 8 * n * n, "eight passes over the plane: {touched}");
    assert!(count(plane, "section_bytes") > n * n * n * 8 / 2, "the section is a hull: {plane}");
    assert_eq!(count(plane, "dram_bytes"), 32 * distinct, "{plane}");
    // In place: u's sectors read and written back.
    let update = &kernel("main_l16")["last_prediction"];
    assert_eq!(count(&update["counters"], "block_sectors"), 2 * n * n / 4, "{update}");
    assert_eq!(count(update, "dram_bytes"), 2 * n * n * 8, "{update}");
}

/// The replay moves a kernel launched at several sizes by its own mean: its launches' work in
/// proportion to its last launch's (bench/NOTES.md run 40: moved by the last launch's change,
/// MG's `interp` came out negative). Here three small launches and a large one last, with
/// device memory ten times slower.
#[test]
fn the_replay_moves_a_kernel_of_several_sizes_by_its_mean() {
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(
        &dir,
        "sizes.c",
        "#include <stdio.h>\n#include <stdlib.h>\nint main(void) {\n  int big = 1 << 20;\n  double *a = malloc(big * sizeof *a), *b = malloc(big * sizeof *b);\n  for (int i = 0; i < big; i++) a[i] = i;\n  \
         #pragma acc data copyin(a[0:big]) copyout(b[0:big])\n  for (int r = 0; r < 4; r++) {\n    int n = r < 3 ? 1 << 12 : big;\n    \
         #pragma acc parallel loop\n    for (int i = 0; i < n; i++) b[i] = 2.0 * a[i];\n  }\n  printf(\"%.1f\\n\", b[big - 1]);\n  free(a); free(b);\n  return 0;\n}\n",
    );
    let stats = dir.path().join("stats");
    std::fs::create_dir(&stats).unwrap();
    let mut cmd = yosegi();
    cmd.env("YOSEGI_STATS_DIR", &stats).args(["run", "--device", "sim", "-w"]).arg(&file);
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    let read = |dir: &std::path::Path| -> Value {
        let file = std::fs::read_dir(dir).unwrap().next().expect("a stats file").unwrap().path();
        let stats: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        stats["kernels"].as_array().unwrap().iter().find(|k| count(k, "launches") == 4).unwrap_or_else(|| panic!("no kernel launched 4 times: {stats}")).clone()
    };
    let recorded = read(&stats);
    let machine: Value = {
        let file = std::fs::read_dir(&stats).unwrap().next().unwrap().unwrap().path();
        serde_json::from_str::<Value>(&std::fs::read_to_string(file).unwrap()).unwrap()["machine"].clone()
    };
    let slower = machine["dram_bytes_per_s"].as_f64().unwrap() / 10.0;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_yosegi-model-replay"))
        .arg(&stats)
        .arg(dir.path().join("slow"))
        .args(["--set", &format!("dram_bytes_per_s={slower}")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let slow = read(&dir.path().join("slow"));
    let busy = |k: &Value| k["last_prediction"]["seconds"].as_f64().unwrap() - k["last_prediction"]["launch_s"].as_f64().unwrap();
    let ratio = busy(&slow) / busy(&recorded);
    assert!(ratio > 5.0, "the large launch is bound by device memory: {ratio}");
    let mean_busy = recorded["predicted_busy_s"].as_f64().unwrap() / 4.0;
    assert!(mean_busy < 0.5 * busy(&recorded), "the small launches keep the mean's work below the last's: {mean_busy} against {}", busy(&recorded));
    let (before, after) = (recorded["mean_predicted_s"].as_f64().unwrap(), slow["mean_predicted_s"].as_f64().unwrap());
    let moved = mean_busy * (ratio - 1.0);
    assert!((after - before - moved).abs() < 1e-9, "{before} -> {after}: moved {} against {moved}", after - before);
}

/// 12 launches of a kernel of one block whose 128 threads each run a long dependent chain, the
/// outer iteration passed in as a value only (as NPB EP passes its offset).
const LONG_CHAINS: &str = "#include <stdio.h>\nint main(void) {\n  int n = 128;\n  static double a[128];\n  for (int it = 0; it < 12; it++) {\n    #pragma acc parallel loop copy(a[0:n])\n    for (int i = 0; i < n; i++) {\n      double x = a[i] + it;\n      for (int k = 0; k < 10000; k++) x = x * 0.5 + 1.0;\n      a[i] = x;\n    }\n  }\n  printf(\"%.1f\\n\", a[0]);\n  return 0;\n}\n";

/// The one kernel of `stats` and the model's sampling account.
fn long_chains_kernel(stats: &Value) -> (&Value, &Value) {
    let kernels = stats["kernels"].as_array().expect("kernels");
    assert_eq!(kernels.len(), 1, "{stats}");
    (&kernels[0], &stats["model_sampling"])
}

fn seconds(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// A sample that runs past its deadline (`YOSEGI_MODEL_SAMPLE_MS`) is given up, the launch
/// marked unfinished; the iteration passed in does not make each launch a new shape, so one
/// sample stands for all of them, and the sampling time stays within the deadline and the cap.
#[test]
fn a_sample_past_its_deadline_is_marked_unfinished_and_taken_once_per_shape() {
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(&dir, "long.c", LONG_CHAINS);
    let stats = stats_in_env(&file, &[], &[], &[("YOSEGI_MODEL_SAMPLE_MS", "2")]);
    let (k, sampling) = long_chains_kernel(&stats);
    assert_eq!(count(k, "launches"), 12);
    assert_eq!(count(k, "predicted_launches"), 0);
    assert_eq!(k["prediction"], "unfinished", "{k}");
    assert_eq!(count(&k["unpredicted_launches"], "deadline"), 12, "{k}");
    assert_eq!((count(sampling, "samples"), count(sampling, "unfinished")), (1, 1), "{sampling}");
    assert_eq!(seconds(sampling, "deadline_s"), 0.002);
    let spent = seconds(sampling, "sampling_s");
    // One sample, stopped at its deadline: well short of the 25 ms or so it would run (the
    // slack is for the other tests running beside this one).
    assert!(spent < 0.002 + 0.010, "one sample at its deadline: {spent} s");
    let cap = seconds(sampling, "cap_share") * seconds(&stats, "elapsed_s") + seconds(sampling, "cap_allowance_s");
    assert!(spent <= cap, "{spent} s over the cap of {cap} s");

    // The text says why, and what sampling cost.
    let mut cmd = yosegi();
    cmd.args(["run", "--device", "sim", "--stats", "-w"]).arg(&file).env("YOSEGI_MODEL_SAMPLE_MS", "2");
    let out = run(cmd, Input::Nothing);
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(out.stderr.contains(": 12 of 12 launches not predicted: unfinished: its sample ran past the deadline of 2 ms"), "{}", out.stderr);
    assert!(out.stderr.contains("model sampling: ") && out.stderr.contains(" in 1 samples ("), "{}", out.stderr);
}

/// With no fixed allowance (`YOSEGI_MODEL_BUDGET_MS=0`) the model may sample for 2% of the run
/// so far: the launches are not sampled, or their samples are cut short at the cap, and the
/// sampling time reported stays within 2% of the run.
#[test]
fn the_sampling_time_stays_within_its_share_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = source_file(&dir, "long.c", LONG_CHAINS);
    let stats = stats_in_env(&file, &[], &[], &[("YOSEGI_MODEL_BUDGET_MS", "0")]);
    let (k, sampling) = long_chains_kernel(&stats);
    assert_eq!(k["prediction"], "not sampled", "{k}");
    assert_eq!(count(&k["unpredicted_launches"], "time_budget"), 12, "{k}");
    assert_eq!(seconds(sampling, "cap_allowance_s"), 0.0);
    assert!(count(sampling, "samples") >= 1, "the run earned room for a sample: {sampling}");
    let (spent, run) = (seconds(sampling, "sampling_s"), seconds(&stats, "elapsed_s"));
    // A sample passes its limit by a look at the clock and its set-up, and by any time the
    // system takes the thread away (the other tests run beside this one): 2 ms at most here.
    assert!(spent <= 0.02 * run + 0.002, "{spent} s of sampling in a {run} s run");
}
