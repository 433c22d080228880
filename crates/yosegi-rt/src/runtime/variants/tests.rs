//! The chooser with hand-made variants: a mapped kernel `b[i] = 2 * a[i]` and a clone of its
//! grid kernel marked `Staged` (the runtime cannot tell a clone from a real staged variant, and
//! a clone computes the same results, as every variant must). Timings are injected through
//! `VariantChooser::record_time`, as the runtime reports them from `Device::launch_timed`.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::analysis::testing::{B, array_param, kernel as make_kernel, scalar_param};
use crate::back::cuda::specialisable_params;
use crate::diag::Span;
use crate::source::SourceSet;
use crate::ir::{BinaryOp, HostArg, HostArgKind, Region, RegionKind, ScalarType, SharedArray, VariantInfo};
use crate::runtime::abi::{self, YosegiArg};
use crate::runtime::device::LaunchOutcome;
use crate::runtime::{RuntimeConfig, StatsMode};

/// Param 0 is `n`, 1 is `a` (read), 2 is `b` (written).
const A: u32 = 1;

/// `b[i] = 2 * a[i]` mapped by the real passes, plus one staged clone per `(ratio, shared
/// bytes)`, in order. Region 0 launches it with args (n, a, b).
fn scale_with_variants(staged: &[(f64, u32)]) -> (Module, Handle<Kernel>) {
    let mut b = B::new();
    let i = b.loop_var("i");
    let zero = b.int(0);
    let n = b.param(0);
    let dim = b.dim(i, zero, n);
    let iv = b.local(i);
    let load = b.load(A, vec![iv]);
    let two = b.float(2.0, ScalarType::F64);
    let product = b.bin(BinaryOp::Mul, load, two);
    let store = b.store(2, vec![iv], product);
    b.body.block = vec![store];
    let params = vec![scalar_param("n", 0), array_param("a", vec![None], 1), array_param("b", vec![None], 2)];
    let mut module = Module::default();
    let kernel = module.kernels.append(make_kernel("scale_l3", params, vec![dim], b.body));
    let arg = |kind| HostArg { c_expr: String::new(), kind, size_expr: None };
    module.regions.push(Region {
        id: 0,
        span: Span::default(),
        body_span: None,
        kind: RegionKind::Compute { kernels: vec![kernel], data: vec![] },
        args: vec![arg(HostArgKind::Int), arg(HostArgKind::Pointer), arg(HostArgKind::Pointer)],
        if_arg: None,
        function: "main".into(),
        unread_on_host: Vec::new(),
        host_after: Vec::new(),
        settle_after: Vec::new(),
    });
    let config = crate::opt::PassConfig { staging: StagingMode::Off, ..Default::default() };
    crate::opt::run_passes(&mut module, &config).expect("maps");
    let plain = module.grid_of(kernel).expect("mapped");
    for (index, &(ratio, shared_bytes)) in staged.iter().enumerate() {
        let mut variant = module.grid_kernels[plain].clone();
        variant.name = if index == 0 { format!("{}_staged", variant.name) } else { format!("{}_staged{index}", variant.name) };
        variant.variant = VariantInfo {
            kind: VariantKind::Staged,
            estimated_ratio: ratio,
            notes: vec![format!("a staged (test clone {index})")],
            staged_params: vec![A],
        };
        if shared_bytes > 0 {
            variant.shared.push(SharedArray { name: "tile".into(), elem: ScalarType::F64, dims: vec![shared_bytes / 8] });
        }
        module.grid_kernels.append(variant);
    }
    (module, kernel)
}

fn trial(name: &str, ratio: f64, index: usize) -> Trial {
    Trial::new(Handle::new(index), name.into(), ratio)
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v / 1e3)
}

#[test]
fn exploration_times_each_candidate_twice_lowest_estimate_first() {
    let mut e = Exploration::new(vec![trial("plain", 1.0, 0), trial("staged", 0.6, 1)]);
    let mut order = Vec::new();
    let times = [ms(0.9), ms(0.7), ms(0.8), ms(0.6)];
    for time in times {
        let next = e.next_to_time(|_| true).expect("still exploring");
        order.push(e.trials[next].name.clone());
        e.record(next, time);
    }
    assert_eq!(order, ["staged", "plain", "staged", "plain"]);
    // staged: 0.9, 0.8 (best 0.8); plain: 0.7, 0.6 (best 0.6).
    assert_eq!(e.winner, Some(0), "the staged variant was slower: plain wins");
    assert_eq!(e.next_to_time(|_| true), None, "exploration is over");
}

#[test]
fn a_strictly_faster_variant_wins_and_a_tie_keeps_the_plain_one() {
    let run = |plain: [f64; 2], staged: [f64; 2]| {
        let mut e = Exploration::new(vec![trial("plain", 1.0, 0), trial("staged", 0.6, 1)]);
        for k in 0..2 {
            e.record(0, ms(plain[k]));
            assert_eq!(e.winner, None, "not every candidate has its samples yet");
            e.record(1, ms(staged[k]));
        }
        e.winner
    };
    assert_eq!(run([0.82, 0.80], [0.61, 0.70]), Some(1));
    assert_eq!(run([0.80, 0.90], [0.95, 0.80]), Some(0), "equal best times: plain");
    assert_eq!(run([0.80, 0.90], [0.785, 0.80]), Some(0), "faster by 1.9%: within the margin");
    assert_eq!(run([0.80, 0.90], [0.78, 0.80]), Some(1), "faster by 2.5%");
    assert_eq!(run([0.009, 0.011], [0.0075, 0.007]), Some(0), "faster by 2 us of 9: timing noise");
    assert_eq!(run([0.011, 0.012], [0.0078, 0.009]), Some(1), "faster by 3.2 us");
    assert_eq!(run([0.50, 0.90], [0.60, 0.55]), Some(0), "the best time counts, not the mean");
}

#[test]
fn a_fusion_comparison_samples_more_only_while_close_and_needs_a_clear_win() {
    // The typical sample is the median (the lower middle one): one lucky sample does not move it.
    assert_eq!(typical_sample(&[ms(3.0), ms(1.0), ms(2.0)]), ms(2.0));
    assert_eq!(typical_sample(&[ms(3.0), ms(1.0)]), ms(1.0));
    assert_eq!(typical_sample(&[ms(0.1), ms(1.0), ms(1.0), ms(1.0)]), ms(1.0));
    // Two samples at least; then more only while within FUSION_CLOSE of the rival.
    assert!(fusion_needs_sample(&[ms(0.1)], None));
    assert!(!fusion_needs_sample(&[ms(0.1), ms(0.1)], None));
    assert!(fusion_needs_sample(&[ms(0.1), ms(0.1)], Some(ms(0.11))));
    assert!(!fusion_needs_sample(&[ms(0.1), ms(0.1)], Some(ms(0.2))));
    assert!(!fusion_needs_sample(&[ms(0.2), ms(0.2)], Some(ms(0.1))));
    // ...up to FUSION_MAX_SAMPLES samples or FUSION_SAMPLED_TIME of them.
    assert!(fusion_needs_sample(&[ms(0.1); FUSION_MAX_SAMPLES - 1], Some(ms(0.1))));
    assert!(!fusion_needs_sample(&[ms(0.1); FUSION_MAX_SAMPLES], Some(ms(0.1))));
    assert!(!fusion_needs_sample(&[ms(1.0), ms(1.0)], Some(ms(1.0))));
    // The fused side wins by more than FUSION_WIN_MARGIN of the typical unfused time only.
    assert!(!fusion_wins(&[ms(0.96), ms(0.96)], &[ms(1.0), ms(1.0)]));
    assert!(fusion_wins(&[ms(0.94), ms(0.94)], &[ms(1.0), ms(1.0)]));
    // A lucky fused sample does not win alone.
    assert!(!fusion_wins(&[ms(0.5), ms(1.0), ms(1.0)], &[ms(1.0), ms(1.0), ms(1.0)]));
}

#[test]
fn a_clearly_slower_candidate_is_timed_once() {
    let mut e = Exploration::new(vec![trial("plain", 1.0, 0), trial("slow", 0.5, 1), trial("close", 0.6, 2)]);
    // Round one, lowest estimate first: slow, close, plain.
    for (t, time) in [(1, 1.48), (2, 0.95), (0, 0.85)] {
        assert_eq!(e.next_to_time(|_| true), Some(t));
        e.record(t, ms(time));
    }
    // 1.48 > 1.5 x 0.85 + 0.02: `slow` is done; `close` (0.95) and plain take their second samples.
    assert_eq!(e.next_to_time(|_| true), Some(2));
    e.record(2, ms(0.93));
    assert_eq!(e.next_to_time(|_| true), Some(0));
    e.record(0, ms(0.83));
    assert_eq!(e.winner, Some(0));
    assert_eq!(e.trials[1].times.len(), 1);
    // A few-microsecond kernel is sampled fully however slow its first launch: 20 us of slack.
    let mut short = Exploration::new(vec![trial("plain", 1.0, 0), trial("staged", 0.5, 1)]);
    short.record(1, ms(0.020));
    short.record(0, ms(0.009));
    assert_eq!(short.next_to_time(|_| true), Some(1));
}

#[test]
fn a_slow_sample_of_a_candidate_the_model_predicts_faster_is_checked_by_a_second() {
    let predicted = |plain: f64, staged: f64| {
        let mut e = Exploration::new(vec![trial("plain", 1.0, 0), trial("staged", 0.6, 1)]);
        e.trials[0].predicted_s = Some(plain);
        e.trials[1].predicted_s = Some(staged);
        // Staged first (the lower estimate): an outlier of 0.126 ms, then plain at 0.036.
        e.record(1, ms(0.126));
        e.record(0, ms(0.036));
        e
    };
    // The model says staged is faster: its second sample is taken, and it wins on it.
    let mut e = predicted(27e-6, 25e-6);
    assert_eq!(e.next_to_time(|_| true), Some(1));
    e.record(1, ms(0.021));
    assert_eq!(e.next_to_time(|_| true), Some(0));
    e.record(0, ms(0.037));
    assert_eq!(e.winner, Some(1));
    // The model says staged is slower: one clearly slower sample settles it, as without a model.
    let mut e = predicted(25e-6, 27e-6);
    assert_eq!(e.next_to_time(|_| true), Some(0));
    e.record(0, ms(0.036));
    assert_eq!(e.winner, Some(0));
    assert_eq!(e.trials[1].times.len(), 1);
}

#[test]
fn unusable_candidates_are_not_timed() {
    let e = Exploration::new(vec![trial("plain", 1.0, 0), trial("staged", 0.6, 1)]);
    let next = e.next_to_time(|v| v != Handle::new(1)).expect("plain can run");
    assert_eq!(e.trials[next].name, "plain");
    assert_eq!(e.next_to_time(|_| false), None);
}

fn array(alloc: u64) -> DeviceParam {
    DeviceParam::Array { alloc: DeviceAlloc(alloc), offset: 0 }
}

/// The params of a launch over all of `0..n` (the partition's first and count last).
fn bound(n: i64, a: u64, b: u64) -> Vec<DeviceParam> {
    vec![DeviceParam::Value(ParamValue::Int(n)), array(a), array(b), DeviceParam::Value(ParamValue::Int(0)), DeviceParam::Value(ParamValue::Int(n))]
}

#[test]
fn a_staged_variant_is_unusable_when_its_array_shares_memory_with_a_written_one() {
    let (module, kernel) = scale_with_variants(&[(0.5, 0)]);
    let [plain, staged] = module.variants_of(kernel)[..] else { panic!("two variants") };
    let (plain, staged) = (&module.grid_kernels[plain], &module.grid_kernels[staged]);
    assert_eq!(staged.written_array_params(), std::collections::BTreeSet::from([2]));
    assert!(variant_is_usable(staged, &bound(100, 1, 2), SHARED_MEMORY_LIMIT));
    assert!(!variant_is_usable(staged, &bound(100, 7, 7), SHARED_MEMORY_LIMIT), "a and b are one allocation");
    assert!(variant_is_usable(plain, &bound(100, 7, 7), SHARED_MEMORY_LIMIT), "the plain variant reads global memory");
}

#[test]
fn a_variant_writing_through_a_tile_is_unusable_when_that_array_shares_memory_with_any_other() {
    let (mut module, kernel) = scale_with_variants(&[(0.5, 0)]);
    let staged = module.variants_of(kernel)[1];
    module.grid_kernels[staged].variant.staged_params = vec![2];
    let staged = &module.grid_kernels[staged];
    assert!(variant_is_usable(staged, &bound(100, 1, 2), SHARED_MEMORY_LIMIT));
    // b is copied back at the end: a, read through global memory, must not see b's memory
    // either (the plain kernel's read would see the write, the tile holds it back).
    assert!(!variant_is_usable(staged, &bound(100, 7, 7), SHARED_MEMORY_LIMIT));
}

#[test]
fn a_variant_over_the_shared_memory_limit_is_never_launched() {
    let (module, kernel) = scale_with_variants(&[(0.5, 48 * 1024 + 8)]);
    let staged = &module.grid_kernels[module.variants_of(kernel)[1]];
    assert_eq!(staged.shared_memory_bytes(), 48 * 1024 + 8);
    assert!(!variant_is_usable(staged, &bound(100, 1, 2), SHARED_MEMORY_LIMIT));
    let mut chooser = VariantChooser::new(StagingMode::Force, TuningCache::in_dir(None));
    let (pick, _) = choose(&mut chooser, &module, kernel, "gpu", &bound(100, 1, 2));
    assert_eq!(pick.variant, module.variants_of(kernel)[0]);
}

#[test]
fn the_shared_memory_limit_is_the_one_the_device_reports() {
    let (module, kernel) = scale_with_variants(&[(0.5, 8 * 1024)]);
    let [plain, staged] = module.variants_of(kernel)[..] else { panic!("two variants") };
    let mut chooser = VariantChooser::new(StagingMode::Force, TuningCache::in_dir(None));
    assert_eq!(choose(&mut chooser, &module, kernel, "big", &bound(100, 1, 2)).0.variant, staged, "8 KiB fit the default 48 KiB");
    chooser.set_shared_memory_limit("small", 4 * 1024);
    assert_eq!(choose(&mut chooser, &module, kernel, "small", &bound(100, 1, 2)).0.variant, plain, "a device with 4 KiB per block");
    assert_eq!(choose(&mut chooser, &module, kernel, "big", &bound(100, 1, 2)).0.variant, staged, "per device");
}

#[test]
fn off_runs_plain_and_on_runs_the_usable_staged_variants_in_turn() {
    let (module, kernel) = scale_with_variants(&[(0.5, 0), (0.9, 0)]);
    let variants = module.variants_of(kernel);
    let picks = |mode, params: &[DeviceParam], launches: usize| {
        let mut chooser = VariantChooser::new(mode, TuningCache::in_dir(None));
        (0..launches)
            .map(|_| {
                let (pick, _) = choose(&mut chooser, &module, kernel, "gpu", params);
                assert_eq!(pick.measure, None, "only auto measures");
                pick.variant
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(picks(StagingMode::Off, &bound(100, 1, 2), 2), vec![variants[0]; 2]);
    assert_eq!(picks(StagingMode::Force, &bound(100, 1, 2), 5), vec![variants[1], variants[2], variants[1], variants[2], variants[1]]);
    assert_eq!(picks(StagingMode::Force, &bound(100, 3, 3), 3), vec![variants[0]; 3], "aliased: plain, silently");
}

#[test]
fn auto_on_a_device_that_cannot_time_follows_the_estimate() {
    let (module, kernel) = scale_with_variants(&[(0.9, 0), (0.4, 0)]);
    let variants = module.variants_of(kernel);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let (first, _) = choose(&mut chooser, &module, kernel, "sim", &bound(100, 1, 2));
    assert_eq!((first.variant, first.measure), (variants[2], None), "a key's first launch: the lowest estimate, untimed");
    let (second, _) = choose(&mut chooser, &module, kernel, "sim", &bound(100, 1, 2));
    assert_eq!(second.variant, variants[2], "the first timed launch already runs the lowest estimate");
    let measurement = second.measure.expect("whether the device times is not known yet");
    assert_eq!(chooser.record_time(&module, measurement, None), None);
    for n in [100, 200] {
        let (pick, _) = choose(&mut chooser, &module, kernel, "sim", &bound(n, 1, 2));
        assert_eq!((pick.variant, pick.measure), (variants[2], None));
    }
    let (aliased, _) = choose(&mut chooser, &module, kernel, "sim", &bound(100, 5, 5));
    assert_eq!(aliased.variant, variants[0], "no staged variant is usable: plain");
}

/// In a job of several ranks every launch takes the compiler's estimate, never timed and never
/// from the tuning cache, so that every rank picks the same variant for every part.
#[test]
fn in_a_job_every_launch_follows_the_estimate_untimed() {
    let (module, kernel) = scale_with_variants(&[(0.9, 0), (0.4, 0)]);
    let variants = module.variants_of(kernel);
    let dir = tempfile::tempdir().unwrap();
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    chooser.choose_by_estimate_only();
    for _ in 0..12 {
        let (pick, decision) = choose(&mut chooser, &module, kernel, "gpu", &bound(100, 1, 2));
        assert_eq!((pick.variant, pick.measure, decision), (variants[2], None, None));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written to the tuning cache");
}

/// `VariantChooser::choose` with the plain variant's specialisable params worked out here, as
/// the runtime works them out once per kernel.
fn choose(
    chooser: &mut VariantChooser,
    module: &Module,
    kernel: Handle<Kernel>,
    device: &str,
    params: &[DeviceParam],
) -> (Pick, Option<VariantDecision>) {
    let plain = &module.grid_kernels[module.variants_of(kernel)[0]];
    chooser.choose(module, kernel, device, params, &specialisable_params(plain), &mut |_| None)
}

/// A key's first launch on a timing device: the lowest estimate, untimed (see the module doc).
fn first_sighting(chooser: &mut VariantChooser, module: &Module, kernel: Handle<Kernel>, device: &str, params: &[DeviceParam]) {
    let (pick, _) = choose(chooser, module, kernel, device, params);
    assert_eq!(pick.measure, None, "a key's first launch is not timed");
    let lowest = module.variants_of(kernel).iter().copied().min_by(|&a, &b| {
        module.grid_kernels[a].variant.estimated_ratio.total_cmp(&module.grid_kernels[b].variant.estimated_ratio)
    });
    assert_eq!(Some(pick.variant), lowest);
}

/// Drives one exploration on device `gpu` with the given device times per variant name (from
/// the key's untimed first launch when the chooser has not seen the key yet). Returns the
/// launches it timed, in order, and the decision; every candidate's untimed warm-up comes
/// before its first timed launch.
fn explore(
    chooser: &mut VariantChooser,
    module: &Module,
    kernel: Handle<Kernel>,
    times: &[(&str, [f64; 2])],
) -> (Vec<String>, VariantDecision) {
    let plain = &module.grid_kernels[module.variants_of(kernel)[0]];
    let key = LaunchKey::of(plain, &specialisable_params(plain), &bound(4096, 1, 2), "gpu");
    let slot = (kernel, key);
    if !chooser.explorations.contains_key(&slot) {
        first_sighting(chooser, module, kernel, "gpu", &bound(4096, 1, 2));
    }
    let mut warmed: std::collections::HashSet<String> =
        chooser.explorations[&slot].trials.iter().filter(|t| t.warmed_up).map(|t| t.name.clone()).collect();
    let mut ran = Vec::new();
    let mut samples: HashMap<String, usize> = HashMap::new();
    loop {
        let (pick, _) = choose(chooser, module, kernel, "gpu", &bound(4096, 1, 2));
        let name = module.grid_kernels[pick.variant].name.clone();
        let Some(measurement) = pick.measure else {
            assert!(warmed.insert(name.clone()), "{name} warmed up twice");
            continue;
        };
        assert!(warmed.contains(&name), "{name} timed before its warm-up");
        ran.push(name.clone());
        let k = samples.entry(name.clone()).or_default();
        let (_, t) = times.iter().find(|(n, _)| *n == name).expect("a time for every variant");
        let time = ms(t[*k]);
        *k += 1;
        if let Some(decision) = chooser.record_time(module, measurement, Some(time)) {
            return (ran, decision);
        }
        assert!(ran.len() < 10, "exploration does not end: {ran:?}");
    }
}

/// A kernel's first launches run slow (its module loads), so no candidate is timed on its
/// first launch for a key: the key's first launch warms up the lowest estimate, and every
/// other candidate runs once untimed before its first sample.
#[test]
fn every_candidate_runs_once_untimed_before_its_samples() {
    let (module, kernel) = scale_with_variants(&[(0.6, 0), (0.8, 0)]);
    let variants = module.variants_of(kernel);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let mut launches = Vec::new();
    for _ in 0..12 {
        let (pick, _) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
        let which = variants.iter().position(|&v| v == pick.variant).expect("a variant of the kernel");
        launches.push((which, pick.measure.is_some()));
        if let Some(m) = pick.measure {
            // The plain variant is the fastest: every candidate keeps being timed twice.
            chooser.record_time(&module, m, Some(ms(if which == 0 { 0.5 } else { 0.6 })));
        }
    }
    assert_eq!(
        launches,
        [
            (1, false), // the key's first launch: the lowest estimate, untimed
            (1, true),
            (2, false), // warm-up
            (2, true),
            (0, false), // warm-up
            (0, true),
            (1, true),
            (2, true),
            (0, true),
            (0, false), // the winner, untimed from now on
            (0, false),
            (0, false),
        ]
    );
    assert_eq!(chooser.exploring_launches(), 9, "warm-ups are launches of the exploration");
}

#[test]
fn auto_on_a_timing_device_explores_then_keeps_and_caches_the_winner() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let variants = module.variants_of(kernel);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    let times = [("scale_l3", [0.82, 0.85]), ("scale_l3_staged", [0.70, 0.61])];
    let plain_name = module.grid_kernels[variants[0]].name.clone();
    let staged_name = module.grid_kernels[variants[1]].name.clone();
    assert_eq!((plain_name.as_str(), staged_name.as_str()), ("scale_l3", "scale_l3_staged"), "names the test uses");
    let (ran, decision) = explore(&mut chooser, &module, kernel, &times);
    assert_eq!(ran, [staged_name.clone(), plain_name.clone(), staged_name.clone(), plain_name.clone()]);
    assert_eq!(decision.winner, staged_name);
    assert_eq!(decision.sizes, "i_first=0,i_count=4096");
    assert_eq!(decision.how, Decided::Measured);
    for _ in 0..3 {
        let (pick, cached) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
        assert_eq!((pick.variant, pick.measure, cached), (variants[1], None, None), "exploit the winner");
    }
    first_sighting(&mut chooser, &module, kernel, "gpu", &bound(100, 1, 2));
    let (other_size, _) = choose(&mut chooser, &module, kernel, "gpu", &bound(100, 1, 2));
    assert!(other_size.measure.is_some(), "another size is explored on its own");

    // A new run finds the winner in the cache and skips exploration.
    let mut next_run = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    let (pick, cached) = choose(&mut next_run, &module, kernel, "gpu", &bound(4096, 1, 2));
    assert_eq!((pick.variant, pick.measure), (variants[1], None));
    let cached = cached.expect("the cache decided");
    assert_eq!(cached.how, Decided::Cached);
    assert_eq!(cached.times.len(), 2);
    let found = cached_choices(&module, kernel, Some(dir.path().to_path_buf()));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].best_time(&staged_name), Some(ms(0.61)));
    assert_eq!(found[0].best_time(&plain_name), Some(ms(0.82)));
    // Another device explores again.
    first_sighting(&mut next_run, &module, kernel, "other gpu", &bound(4096, 1, 2));
    let (elsewhere, _) = choose(&mut next_run, &module, kernel, "other gpu", &bound(4096, 1, 2));
    assert!(elsewhere.measure.is_some());
}

/// Launches after an exploration are answered without building a launch key; they must still
/// tell sizes, devices and aliasing apart.
#[test]
fn a_settled_winner_is_rechecked_for_size_device_and_aliasing_at_every_launch() {
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let variants = module.variants_of(kernel);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let (_, decision) = explore(&mut chooser, &module, kernel, &[("scale_l3", [0.82, 0.85]), ("scale_l3_staged", [0.70, 0.61])]);
    assert_eq!(decision.winner, "scale_l3_staged");
    let pick = |chooser: &mut VariantChooser, device: &str, params: &[DeviceParam]| {
        let (pick, _) = choose(chooser, &module, kernel, device, params);
        (pick.variant, pick.measure.is_some())
    };
    assert_eq!(pick(&mut chooser, "gpu", &bound(4096, 1, 2)), (variants[1], false));
    assert_eq!(pick(&mut chooser, "gpu", &bound(4096, 3, 3)), (variants[0], false), "aliased: plain");
    assert_eq!(pick(&mut chooser, "gpu", &bound(4096, 1, 2)), (variants[1], false));
    assert_eq!(pick(&mut chooser, "gpu", &bound(4097, 1, 2)), (variants[1], false), "another size: its first launch");
    assert!(pick(&mut chooser, "gpu", &bound(4097, 1, 2)).1, "another size is explored");
    assert_eq!(pick(&mut chooser, "gpu", &bound(4096, 1, 2)), (variants[1], false), "back to the settled size");
    assert!(!pick(&mut chooser, "other gpu", &bound(4096, 1, 2)).1);
    assert!(pick(&mut chooser, "other gpu", &bound(4096, 1, 2)).1, "another device is explored");
}

#[test]
fn a_variant_measured_slower_than_plain_is_never_kept() {
    let (module, kernel) = scale_with_variants(&[(0.3, 0)]);
    let variants = module.variants_of(kernel);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let (_, decision) = explore(&mut chooser, &module, kernel, &[("scale_l3", [0.5, 0.5]), ("scale_l3_staged", [0.9, 0.5])]);
    assert_eq!(decision.winner, "scale_l3");
    let (pick, _) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
    assert_eq!(pick.variant, variants[0]);
}

#[test]
fn a_cache_for_changed_kernels_or_a_corrupt_file_is_ignored() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let identity = KernelIdentity::of(&module, kernel);
    let path = dir.path().join(TUNING_CACHE_FILE);
    let good = format!(
        "v1\tscale_l3\t{:016x}\tgpu\tn=4096\tscale_l3_staged\tscale_l3=820000/830000,scale_l3_staged=610000/700000\n",
        identity.hash
    );
    let stale = good.replace(&format!("{:016x}", identity.hash), &format!("{:016x}", identity.hash ^ 1));
    let lookups = |text: &str| {
        std::fs::write(&path, text).expect("write cache");
        cached_choices(&module, kernel, Some(dir.path().to_path_buf())).len()
    };
    assert_eq!(lookups(&good), 1);
    assert_eq!(lookups(&stale), 0, "the kernel's CUDA changed: the old winner does not apply");
    assert_eq!(lookups(&good.replace("610000/", "61x/")), 0, "a malformed time");
    assert_eq!(lookups(&good.replace("\tscale_l3_staged\t", "\tgone\t")), 0, "a winner that is not a candidate");
    assert_eq!(lookups(&format!("\u{0}\u{1}garbage\n{good}")), 1, "bad lines are skipped, good ones kept");
    std::fs::write(&path, [0xff, 0xfe, 0x00]).expect("write cache");
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    first_sighting(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
    let (pick, cached) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
    assert!(pick.measure.is_some() && cached.is_none(), "a corrupt cache means exploring");
}

#[test]
fn the_launch_key_holds_the_size_params_and_the_device() {
    let (module, kernel) = scale_with_variants(&[]);
    let plain = &module.grid_kernels[module.grid_of(kernel).expect("mapped")];
    let key = LaunchKey::of(plain, &specialisable_params(plain), &bound(4096, 1, 2), "cuda:0 (NVIDIA H100)");
    assert_eq!(key.sizes, vec![("i_first".to_string(), 0), ("i_count".to_string(), 4096)]);
    assert_eq!(key.device, "cuda:0 (NVIDIA H100)");
    assert_ne!(key, LaunchKey::of(plain, &specialisable_params(plain), &bound(4097, 1, 2), "cuda:0 (NVIDIA H100)"));
}

fn sim_runtime(module: Module, staging: StagingMode) -> Runtime {
    let config = RuntimeConfig { staging, stats: StatsMode::Print, ..RuntimeConfig::default() };
    Runtime::new(Arc::new(module), Arc::new(SourceSet::default()), config)
}

fn region_args(n: i64, a: *mut f64, b: *mut f64) -> Vec<YosegiArg> {
    vec![
        YosegiArg { i: n, ..Default::default() },
        YosegiArg { ptr: a as *mut c_void, ..Default::default() },
        YosegiArg { ptr: b as *mut c_void, ..Default::default() },
        // The partition's first and count: the host passes zeros, the runtime sets them.
        YosegiArg::default(),
        YosegiArg::default(),
    ]
}

#[test]
fn the_runtime_launches_the_chosen_variant_and_counts_it() {
    for (mode, expected) in [(StagingMode::Force, "scale_l3_staged"), (StagingMode::Off, "scale_l3"), (StagingMode::Auto, "scale_l3_staged")] {
        let (module, _) = scale_with_variants(&[(0.6, 0)]);
        let mut rt = sim_runtime(module, mode);
        let mut a: Vec<f64> = (0..50).map(f64::from).collect();
        let mut b = vec![0.0; 50];
        for _ in 0..3 {
            rt.region(0, &region_args(50, a.as_mut_ptr(), b.as_mut_ptr())).expect("runs");
        }
        rt.host_access(&[b.as_ptr() as u64], &[abi::YOSEGI_READ]);
        assert_eq!(b[49], 98.0, "{mode:?}");
        assert_eq!(rt.stats().launches[expected].count, 3, "{mode:?}: {:?}", rt.stats().launches);
        let runs = &rt.stats().variants["scale_l3"].runs;
        assert_eq!(runs.get(expected), Some(&3), "{mode:?}");
        assert!(rt.exit_report().expect("stats on").contains(&format!("scale_l3: {expected} x3")));
    }
}

#[test]
fn the_runtime_runs_the_plain_variant_when_the_staged_array_is_written_in_place() {
    let (module, _) = scale_with_variants(&[(0.6, 0)]);
    let mut rt = sim_runtime(module, StagingMode::Force);
    let mut a: Vec<f64> = (0..40).map(f64::from).collect();
    let in_place = a.as_mut_ptr();
    rt.region(0, &region_args(40, in_place, in_place)).expect("runs");
    rt.host_access(&[a.as_ptr() as u64], &[abi::YOSEGI_READ]);
    assert_eq!(a[39], 78.0);
    assert_eq!(rt.stats().launches["scale_l3"].count, 1);
    assert!(!rt.stats().launches.contains_key("scale_l3_staged"));
}

#[test]
fn storing_a_winner_keeps_what_another_run_stored_meanwhile() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    // The chooser reads the (empty) cache on its first launch; another process then stores a winner.
    first_sighting(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
    let (pick, _) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
    chooser.record_time(&module, pick.measure.expect("exploring"), Some(ms(0.5)));
    let other = "v1\tother_l9\t0000000000000001\tgpu\tn=8\tother_l9\tother_l9=1/2\n";
    std::fs::write(dir.path().join(TUNING_CACHE_FILE), other).expect("write cache");
    let (_, decision) = explore(&mut chooser, &module, kernel, &[("scale_l3", [0.5, 0.5]), ("scale_l3_staged", [0.4, 0.4])]);
    assert_eq!(decision.winner, "scale_l3_staged");
    let text = std::fs::read_to_string(dir.path().join(TUNING_CACHE_FILE)).expect("cache written");
    assert!(text.contains("\tother_l9\t"), "{text}");
    assert!(text.contains("\tscale_l3\t"), "{text}");
}

fn winner_at(sizes: &str, ns: u64) -> CachedChoice {
    CachedChoice {
        device: "gpu".into(),
        sizes: sizes.into(),
        winner: "k_staged".into(),
        times: vec![("k".into(), vec![Duration::from_nanos(2 * ns)]), ("k_staged".into(), vec![Duration::from_nanos(ns)])],
    }
}

/// Two runs' caches, each loaded before the other stored: both winners survive, and a winner
/// stored again for the same key replaces the older one.
#[test]
fn two_caches_storing_different_keys_keep_both() {
    let dir = tempfile::tempdir().expect("temp dir");
    let id = KernelIdentity { name: "k".into(), hash: 7 };
    let mut first = TuningCache::in_dir(Some(dir.path().to_path_buf()));
    let mut second = TuningCache::in_dir(Some(dir.path().to_path_buf()));
    assert!(first.lookup_sizes(&id, "gpu", "n=1").is_none());
    assert!(second.lookup_sizes(&id, "gpu", "n=2").is_none());
    first.store(id.clone(), winner_at("n=1", 100));
    second.store(id.clone(), winner_at("n=2", 200));
    // The second run now knows the first's winner too.
    assert_eq!(second.lookup_sizes(&id, "gpu", "n=1"), Some(winner_at("n=1", 100)));
    first.store(id.clone(), winner_at("n=2", 150));
    let mut later = TuningCache::in_dir(Some(dir.path().to_path_buf()));
    assert_eq!(later.choices_of(&id), vec![winner_at("n=1", 100), winner_at("n=2", 150)]);
}

/// Runs storing winners at once (threads here, each cache taking the file's lock as a process
/// does) keep every one's; a torn last line left by a crash is dropped.
#[test]
fn concurrent_stores_keep_every_winner() {
    let dir = tempfile::tempdir().expect("temp dir");
    let id = KernelIdentity { name: "k".into(), hash: 7 };
    let torn = render_cache_file(&[(id.clone(), winner_at("n=999", 1))]);
    std::fs::write(dir.path().join(TUNING_CACHE_FILE), &torn[..torn.len() - 1]).expect("write cache");
    std::thread::scope(|scope| {
        for run in 0..8u64 {
            let (dir, id) = (dir.path().to_path_buf(), id.clone());
            scope.spawn(move || {
                let mut cache = TuningCache::in_dir(Some(dir));
                for k in 0..5 {
                    cache.store(id.clone(), winner_at(&format!("n={run}{k}"), 100 + run));
                }
            });
        }
    });
    let mut all = TuningCache::in_dir(Some(dir.path().to_path_buf())).choices_of(&id);
    all.sort_by(|a, b| a.sizes.cmp(&b.sizes));
    let mut expected: Vec<CachedChoice> = (0..8u64).flat_map(|run| (0..5).map(move |k| winner_at(&format!("n={run}{k}"), 100 + run))).collect();
    expected.sort_by(|a, b| a.sizes.cmp(&b.sizes));
    assert_eq!(all, expected);
}

/// The simulator, posing as a GPU that times launches: every launch of a grid kernel whose
/// name ends in `_staged` takes 0.6 ms, any other 0.8 ms.
struct TimedSim {
    sim: crate::runtime::sim::SimDevice,
    timed_launches: Arc<std::sync::atomic::AtomicUsize>,
}

impl crate::runtime::device::Device for TimedSim {
    fn name(&self) -> &str {
        "timed-sim"
    }
    crate::delegate_device_memory_to_sim!();
    fn copy_to_host(&mut self, alloc: DeviceAlloc, offset: u64, dst: &mut [u8]) {
        self.sim.copy_to_host(alloc, offset, dst)
    }
    fn launch(&mut self, launch: &Launch) -> Result<LaunchOutcome, KernelFault> {
        self.sim.launch(launch)
    }
    fn launch_timed(&mut self, launch: &Launch) -> Result<(LaunchOutcome, Option<Duration>), KernelFault> {
        self.timed_launches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let time = if launch.kernel.name.ends_with("_staged") { ms(0.6) } else { ms(0.8) };
        self.sim.launch(launch).map(|outcome| (outcome, Some(time)))
    }
}

#[test]
fn on_a_timing_device_the_runtime_explores_then_runs_the_winner_without_timing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, _) = scale_with_variants(&[(0.6, 0)]);
    let mut rt = sim_runtime(module, StagingMode::Auto);
    let timed_launches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    rt.devices = vec![Box::new(TimedSim { sim: crate::runtime::sim::SimDevice::new(), timed_launches: timed_launches.clone() })];
    rt.variants = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    let mut a: Vec<f64> = (0..64).map(f64::from).collect();
    let mut b = vec![0.0; 64];
    for _ in 0..10 {
        rt.region(0, &region_args(64, a.as_mut_ptr(), b.as_mut_ptr())).expect("runs");
    }
    rt.host_access(&[b.as_ptr() as u64], &[abi::YOSEGI_READ]);
    assert_eq!(b[63], 126.0);
    assert_eq!(timed_launches.load(std::sync::atomic::Ordering::Relaxed), 4, "two timed launches per candidate, then none");
    let use_ = &rt.stats().variants["scale_l3"];
    // The staged variant's first launch (the key's first) and the plain one's (before its
    // samples) are untimed warm-ups: staged, staged timed, plain, plain timed, staged timed,
    // plain timed, then the winner.
    assert_eq!(use_.runs.get("scale_l3"), Some(&3));
    assert_eq!(use_.runs.get("scale_l3_staged"), Some(&7));
    assert_eq!(use_.timed["scale_l3_staged"], vec![ms(0.6), ms(0.6)]);
    let report = rt.exit_report().expect("stats on");
    assert!(report.contains("winner on timed-sim (i_first=0,i_count=64): scale_l3_staged (scale_l3 best 0.800, typical 0.800 of 2, scale_l3_staged best 0.600, typical 0.600 of 2, measured)"), "{report}");

    // The next run takes the winner from the cache and times nothing.
    let (module, _) = scale_with_variants(&[(0.6, 0)]);
    let mut again = sim_runtime(module, StagingMode::Auto);
    let timed_again = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    again.devices = vec![Box::new(TimedSim { sim: crate::runtime::sim::SimDevice::new(), timed_launches: timed_again.clone() })];
    again.variants = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    again.region(0, &region_args(64, a.as_mut_ptr(), b.as_mut_ptr())).expect("runs");
    assert_eq!(timed_again.load(std::sync::atomic::Ordering::Relaxed), 0);
    assert_eq!(again.stats().variants["scale_l3"].runs.get("scale_l3_staged"), Some(&1));
    assert!(again.exit_report().expect("stats on").contains("cached winner on timed-sim (i_first=0,i_count=64): scale_l3_staged"));
}

#[test]
fn the_model_leaves_out_candidates_it_predicts_far_slower_but_never_the_plain_one() {
    let trial = |n: usize, name: &str| Trial::new(Handle::new(n), name.into(), 1.0);
    let trials = || vec![trial(0, "k"), trial(1, "k_staged"), trial(2, "k_staged_x4")];
    let predicted = |times: [f64; 3]| move |v: Handle<GridKernel>| Some(times[v.index()]);

    // The x4 variant is predicted 4x the fastest: left out; the plain one, 2x, stays.
    let mut ts = trials();
    let left = leave_out_predicted_slow(&mut ts, &mut predicted([2.0, 1.0, 4.0]));
    assert_eq!(ts.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["k", "k_staged"]);
    assert_eq!(left, vec![("k_staged_x4".to_string(), 4.0, 1.0)]);

    // Within MODEL_FILTER of the fastest, every candidate is timed.
    let mut ts = trials();
    assert!(leave_out_predicted_slow(&mut ts, &mut predicted([1.0, 1.0, MODEL_FILTER])).is_empty());
    assert_eq!(ts.len(), 3);

    // A candidate the model cannot predict: nothing is left out.
    let mut ts = trials();
    assert!(leave_out_predicted_slow(&mut ts, &mut |v: Handle<GridKernel>| (v.index() != 1).then_some(9.0 * v.index() as f64 + 1.0)).is_empty());
    assert_eq!(ts.len(), 3);
}

#[test]
fn an_exploration_times_only_the_candidates_the_model_keeps() {
    let (module, kernel) = scale_with_variants(&[(0.6, 0), (0.5, 0)]);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let variants = module.variants_of(kernel);
    let slow = variants[2];
    let params = bound(4096, 1, 2);
    let plain = &module.grid_kernels[variants[0]];
    let mut predict = |v: Handle<GridKernel>| Some(if v == slow { 10e-6 } else { 1e-6 });
    let mut timed = std::collections::BTreeSet::new();
    for _ in 0..12 {
        let (pick, _) = chooser.choose(&module, kernel, "gpu", &params, &specialisable_params(plain), &mut predict);
        if let Some(m) = pick.measure {
            timed.insert(module.grid_kernels[pick.variant].name.clone());
            chooser.record_time(&module, m, Some(ms(0.5)));
        }
    }
    assert!(!timed.is_empty(), "the exploration timed something");
    assert!(!timed.contains(&module.grid_kernels[slow].name), "{timed:?}");
    let left = chooser.take_left_out();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].1, module.grid_kernels[slow].name);
}

#[test]
fn the_models_choice_prefers_the_plain_variant_unless_another_is_clearly_faster() {
    // Predicted 5% faster than the plain variant: within the preference, the plain one.
    assert_eq!(model_choice(&[10.0, 9.5]), Some((0, false)));
    // 10% faster: the staged one, not clear enough to go untimed.
    assert_eq!(model_choice(&[10.0, 9.0]), Some((1, false)));
    // Clear only when faster than every other candidate by MODEL_DECIDES: 6 against 8 is not.
    assert_eq!(model_choice(&[10.0, 6.0, 8.0]), Some((1, false)));
    assert_eq!(model_choice(&[10.0, 5.0, 8.0]), Some((1, true)));
    // The plain variant predicted far faster: chosen, clearly.
    assert_eq!(model_choice(&[5.0, 9.0]), Some((0, true)));
    assert_eq!(model_choice(&[]), None);
}

#[test]
fn a_clear_prediction_settles_the_exploration_untimed_and_uncached() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let variants = module.variants_of(kernel);
    let plain = &module.grid_kernels[variants[0]];
    let specialisable = specialisable_params(plain);
    let staged = variants[1];
    let mut predict = |v: Handle<GridKernel>| Some(if v == staged { 5e-6 } else { 10e-6 });
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    let (pick, decision) = chooser.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict);
    assert_eq!((pick.variant, pick.measure), (staged, None), "the model's choice runs untimed from the first launch");
    let decision = decision.expect("the model decided");
    assert_eq!(decision.how, Decided::Predicted);
    assert_eq!(decision.winner, module.grid_kernels[staged].name);
    assert!(decision.times.is_empty());
    for _ in 0..4 {
        let (pick, again) = chooser.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict);
        assert_eq!((pick.variant, pick.measure, again), (staged, None, None));
    }
    assert!(cached_choices(&module, kernel, Some(dir.path().to_path_buf())).is_empty(), "a prediction is not cached");

    // Told to time every candidate, the same predictions leave the choice to measurement.
    let mut timing = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    timing.time_every_candidate();
    let (first, decision) = timing.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict);
    assert_eq!((first.measure, decision), (None, None));
    let (second, _) = timing.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict);
    assert!(second.measure.is_some(), "exploration times the candidates");
}

#[test]
fn candidates_all_predicted_shorter_than_a_short_launch_are_not_timed() {
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let variants = module.variants_of(kernel);
    let specialisable = specialisable_params(&module.grid_kernels[variants[0]]);
    let staged = variants[1];
    // 8 us against 10: not clear, but short. The model's choice (here the staged variant, 20%
    // faster) runs untimed from the first launch.
    let short = SHORT_LAUNCH.as_secs_f64();
    let mut predict = |v: Handle<GridKernel>| Some(if v == staged { 0.08 * short } else { 0.1 * short });
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    // Until a launch was timed on the device, the first key explores as before.
    let (_, decision) = chooser.choose(&module, kernel, "gpu", &bound(1024, 1, 2), &specialisable, &mut predict);
    assert_eq!(decision, None);
    let (timed, _) = chooser.choose(&module, kernel, "gpu", &bound(1024, 1, 2), &specialisable, &mut predict);
    chooser.record_time(&module, timed.measure.expect("timed"), Some(Duration::from_micros(9)));
    let (pick, decision) = chooser.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict);
    assert_eq!((pick.variant, pick.measure), (staged, None));
    assert_eq!(decision.expect("decided untimed").how, Decided::Short);
    for _ in 0..4 {
        let (pick, _) = chooser.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict);
        assert_eq!((pick.variant, pick.measure), (staged, None));
    }
    // The same ratio at launches ten times the bound is timed.
    let mut predict_long = |v: Handle<GridKernel>| Some(if v == staged { 8.0 * short } else { 10.0 * short });
    let mut timing = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    timing.choose(&module, kernel, "gpu", &bound(1024, 1, 2), &specialisable, &mut predict_long);
    let (timed, _) = timing.choose(&module, kernel, "gpu", &bound(1024, 1, 2), &specialisable, &mut predict_long);
    timing.record_time(&module, timed.measure.expect("timed"), Some(Duration::from_micros(900)));
    let (_, decision) = timing.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict_long);
    assert_eq!(decision, None);
    let (second, _) = timing.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable, &mut predict_long);
    assert!(second.measure.is_some(), "exploration times the candidates");
}

#[test]
fn the_exploration_budget_is_a_share_of_the_run_plus_an_allowance() {
    let mut budget = ExplorationBudget::new(Some(ms(20.0)));
    assert!(budget.has_room());
    budget.charge(ms(20.0));
    assert!(!budget.has_room(), "the allowance is spent");
    // 2% of a second in the runtime is 20 ms more.
    budget.note_busy(Duration::from_secs(1));
    assert!(budget.has_room());
    budget.charge(ms(20.0));
    assert!(!budget.has_room());
    assert!(ExplorationBudget::new(None).has_room(), "unbounded");
    assert_eq!(budget.cost().spent, ms(40.0));
}

/// Once the budget is spent, an exploration under way ends at its next launch with the plain
/// variant when the model predicted nothing, untimed and not cached; a key seen afterwards is
/// decided at its first launch. Each counts among the choices the budget decided.
#[test]
fn once_the_exploration_budget_is_spent_undecided_keys_run_plain_untimed_and_uncached() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let variants = module.variants_of(kernel);
    let mut chooser = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    chooser.set_budget(ExplorationBudget::new(Some(ms(1.0))));
    first_sighting(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
    let mut timed = 0;
    let decision = loop {
        let (pick, decision) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
        if let Some(decision) = decision {
            assert_eq!((pick.variant, pick.measure), (variants[0], None));
            break decision;
        }
        if let Some(m) = pick.measure {
            timed += 1;
            assert_eq!(chooser.record_time(&module, m, Some(ms(0.8))), None, "the exploration does not finish");
        }
        assert!(timed <= 2, "the budget stops the timing");
    };
    // Staged timed (0.8 ms of 1), plain warmed up and timed (1.6 ms): spent.
    assert_eq!(timed, 2);
    assert_eq!(decision.how, Decided::Budget { by_model: false });
    assert_eq!(decision.winner, "scale_l3");
    assert_eq!(decision.times, vec![("scale_l3".to_string(), vec![ms(0.8)]), ("scale_l3_staged".to_string(), vec![ms(0.8)])]);
    for _ in 0..3 {
        let (pick, again) = choose(&mut chooser, &module, kernel, "gpu", &bound(4096, 1, 2));
        assert_eq!((pick.variant, pick.measure, again), (variants[0], None, None));
    }
    let (pick, decision) = choose(&mut chooser, &module, kernel, "gpu", &bound(100, 1, 2));
    assert_eq!((pick.variant, pick.measure), (variants[0], None), "a new key, decided at once");
    assert_eq!(decision.map(|d| d.how), Some(Decided::Budget { by_model: false }));
    assert_eq!(chooser.budget().cost().decided_by_budget, 2);
    assert_eq!(chooser.budget().cost().spent, ms(1.6));
    assert!(cached_choices(&module, kernel, Some(dir.path().to_path_buf())).is_empty(), "nothing cached");
}

/// With the budget spent, a key the model predicted takes the model's choice, clear or not.
#[test]
fn once_the_exploration_budget_is_spent_a_predicted_key_takes_the_models_choice() {
    let (module, kernel) = scale_with_variants(&[(0.6, 0)]);
    let variants = module.variants_of(kernel);
    let staged = variants[1];
    let plain = &module.grid_kernels[variants[0]];
    // 20% faster: the model's choice, but not clear enough to go untimed with budget left.
    let mut predict = |v: Handle<GridKernel>| Some(if v == staged { 8e-6 } else { 10e-6 });
    let mut roomy = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let (first, decision) = roomy.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable_params(plain), &mut predict);
    assert_eq!((first.measure, decision), (None, None), "budget left: explored as usual");
    let mut spent = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let mut budget = ExplorationBudget::new(Some(Duration::ZERO));
    budget.charge(ms(1.0));
    spent.set_budget(budget.clone());
    let (pick, decision) = spent.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable_params(plain), &mut predict);
    assert_eq!((pick.variant, pick.measure), (staged, None));
    let decision = decision.expect("the budget decided");
    assert_eq!((decision.how, decision.winner.as_str(), decision.times.len()), (Decided::Budget { by_model: true }, "scale_l3_staged", 0));
    // The share grows with the run: after 100 s in the runtime there is room again.
    let mut long_run = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(None));
    let mut budget = ExplorationBudget::new(Some(Duration::ZERO));
    budget.note_busy(Duration::from_secs(100));
    budget.charge(ms(1.0));
    long_run.set_budget(budget);
    let (_, decision) = long_run.choose(&module, kernel, "gpu", &bound(4096, 1, 2), &specialisable_params(plain), &mut predict);
    assert_eq!(decision, None);
}

/// On a device that times, the runtime charges the timed launches to the budget, stops
/// timing once it is spent, and says so in `--stats`.
#[test]
fn the_runtime_stops_exploring_when_the_budget_is_spent_and_reports_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (module, _) = scale_with_variants(&[(0.6, 0)]);
    let mut rt = sim_runtime(module, StagingMode::Auto);
    let timed_launches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    rt.devices = vec![Box::new(TimedSim { sim: crate::runtime::sim::SimDevice::new(), timed_launches: timed_launches.clone() })];
    rt.variants = VariantChooser::new(StagingMode::Auto, TuningCache::in_dir(Some(dir.path().to_path_buf())));
    rt.variants.set_budget(ExplorationBudget::new(Some(ms(1.0))));
    let mut a: Vec<f64> = (0..64).map(f64::from).collect();
    let mut b = vec![0.0; 64];
    for _ in 0..10 {
        rt.region(0, &region_args(64, a.as_mut_ptr(), b.as_mut_ptr())).expect("runs");
    }
    rt.host_access(&[b.as_ptr() as u64], &[abi::YOSEGI_READ]);
    assert_eq!(b[63], 126.0);
    // Staged timed at 0.6 ms, plain at 0.8: 1.4 ms, past the 1 ms allowance.
    assert_eq!(timed_launches.load(std::sync::atomic::Ordering::Relaxed), 2);
    let report = rt.exit_report().expect("stats on");
    assert!(report.contains("the exploration budget was spent"), "{report}");
    assert!(report.contains("exploration: 1.400 ms timed ("), "{report}");
    assert!(report.contains("1 choices decided untimed when the budget ran out"), "{report}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written to the tuning cache");
}

/// A device that times and is not the simulator by name, so that fusions and step loops are
/// explored on it.
fn timed_runtime(module: Module) -> Runtime {
    let mut rt = sim_runtime(module, StagingMode::Auto);
    let timed_launches = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    rt.devices = vec![Box::new(TimedSim { sim: crate::runtime::sim::SimDevice::new(), timed_launches })];
    rt
}

/// A budget with no allowance and something spent: no room at all.
fn spent_budget() -> ExplorationBudget {
    let mut budget = ExplorationBudget::new(Some(Duration::ZERO));
    budget.charge(ms(1.0));
    budget
}

/// A fused chain's timed samples are charged to the budget; once it is spent, a comparison
/// not yet made runs the chain unfused from then on, untimed.
#[test]
fn a_fusion_not_yet_compared_runs_unfused_once_the_budget_is_spent() {
    let (mut module, kernel) = scale_with_variants(&[]);
    let grid = module.variants_of(kernel)[0];
    let RegionKind::Compute { kernels, .. } = &mut module.regions[0].kind else { panic!("a compute region") };
    *kernels = vec![kernel, kernel];
    // The chain `b = 2a; b = 2a` and its "fused" kernel, one launch of the same grid kernel.
    module.fusions.push(crate::ir::Fusion { region: 0, members: vec![kernel, kernel], grid, forced: false, estimated_ratio: 0.5, without_stores: None, notes: Vec::new() });
    let name = module.grid_kernels[grid].name.clone();
    let mut rt = timed_runtime(module);
    let mut a: Vec<f64> = (0..64).map(f64::from).collect();
    let mut b = vec![0.0; 64];
    for _ in 0..2 {
        rt.region(0, &region_args(64, a.as_mut_ptr(), b.as_mut_ptr())).expect("runs");
    }
    // An unfused sample (two launches) and a fused one (one launch), both timed and charged.
    assert_eq!(rt.stats().launches[&name].count, 3);
    assert!(rt.variants.budget().cost().spent > Duration::ZERO);
    assert!(rt.stats().variants.get(&name).is_none_or(|u| u.decisions.is_empty()), "not compared yet");
    rt.variants.set_budget(spent_budget());
    for _ in 0..3 {
        rt.region(0, &region_args(64, a.as_mut_ptr(), b.as_mut_ptr())).expect("runs");
    }
    assert_eq!(rt.stats().launches[&name].count, 3 + 3 * 2, "unfused: two launches a call");
    let decisions = &rt.stats().variants[&name].decisions;
    assert_eq!(decisions.len(), 1);
    assert_eq!((decisions[0].winner.as_str(), decisions[0].how), ("unfused", Decided::Budget { by_model: false }));
    assert_eq!(rt.variants.budget().cost().decided_by_budget, 1);
    rt.host_access(&[b.as_ptr() as u64], &[abi::YOSEGI_READ]);
    assert_eq!(b[63], 126.0);
}

/// A step loop whose choice is not yet made runs every step left unfused, untimed, once the
/// budget is spent.
#[test]
fn a_step_loop_not_yet_compared_runs_unfused_once_the_budget_is_spent() {
    let (mut module, kernel) = scale_with_variants(&[]);
    let grid = module.variants_of(kernel)[0];
    module.step_fusions.push(crate::ir::StepFusion { region: 0, steps: 2, grid, renamed: Vec::new(), forced: false, estimated_ratio: 0.5, notes: Vec::new() });
    let name = module.grid_kernels[grid].name.clone();
    let mut rt = timed_runtime(module);
    rt.variants.set_budget(spent_budget());
    let mut a: Vec<f64> = (0..64).map(f64::from).collect();
    let mut b = vec![0.0; 64];
    let ran = rt.region_steps(0, &region_args(64, a.as_mut_ptr(), b.as_mut_ptr()), 6).expect("runs");
    assert_eq!(ran, 6, "every step left, in one call");
    assert_eq!(rt.stats().launches[&name].count, 6, "one unfused launch a step");
    let decisions = &rt.stats().variants[&format!("{} (steps)", module_kernel_name(&rt, kernel))].decisions;
    assert_eq!(decisions.len(), 1);
    assert_eq!((decisions[0].winner.as_str(), decisions[0].how), ("unfused", Decided::Budget { by_model: false }));
    assert_eq!(rt.variants.budget().cost().spent, ms(1.0), "nothing timed");
}

fn module_kernel_name(rt: &Runtime, kernel: Handle<Kernel>) -> String {
    rt.module.kernels[kernel].name.clone()
}
