//! Tests of `yosegi-rt`'s stages (program image, padding, staging, CUDA C) on C programs
//! compiled through the front end. They lived beside the code they test; that code is now in
//! the `yosegi-rt` crate, which cannot use the front end, so they run here, unchanged: the
//! imports below give the crate root the module names the tests' `crate::` paths expect.

use yosegi::{diag, driver, front, ir, opt};

mod image {
    use yosegi::image::ProgramImage;
    use yosegi::opt::StagingMode;

    #[test]
    fn an_image_reads_back_what_was_written() {
        let path = std::env::temp_dir().join(format!("yosegi-image-{}.c", std::process::id()));
        std::fs::write(&path, "int main(void) {\n  double a[8];\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < 8; i++) a[i] = i;\n  return (int)a[7];\n}\n").unwrap();
        let program = crate::driver::compile(&[path.clone()], &Default::default(), &Default::default())
            .unwrap_or_else(|(s, d)| panic!("{}", crate::diag::render(&s, &d.0, false)));
        std::fs::remove_file(&path).unwrap();
        let bytes = ProgramImage::encode(&program.module, &program.sources, StagingMode::Force, &[]);
        let back = ProgramImage::from_bytes(&bytes).expect("reads back");
        assert_eq!(crate::ir::text::module_text(&back.module), crate::ir::text::module_text(&program.module));
        assert_eq!(back.sources.units[0].text, program.sources.units[0].text);
        assert_eq!(back.staging, StagingMode::Force);
    }

    /// The kernels `yosegi cc` compiles at the link are found at run time by the CUDA C the
    /// device writes: the sources written from the image read back (its IR and its sources,
    /// with their `#line` directives) are those the link wrote, so every image is found.
    #[test]
    fn kernel_images_read_back_and_match_the_sources_the_runtime_writes() {
        use yosegi::runtime::cuda::embedded::{KernelImage, Target, ahead_sources};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.c");
        // The sum's directive is continued: its clause's line comes from the file, which the
        // executable's run may not see (NPB CG's reductions missed their images so).
        std::fs::write(&path, "int main(void) {\n  double a[8], s = 0;\n#pragma acc parallel loop copyout(a)\n  for (int i = 0; i < 8; i++) a[i] = i;\n#pragma acc parallel loop copyin(a) \\\n    reduction(+:s)\n  for (int i = 0; i < 8; i++) s += a[i];\n  return (int)s;\n}\n").unwrap();
        let program = crate::driver::compile(&[path.clone()], &Default::default(), &Default::default())
            .unwrap_or_else(|(s, d)| panic!("{}", crate::diag::render(&s, &d.0, false)));
        let units = ahead_sources(&program.module, &program.sources);
        // Two forms of each grid kernel (one where both coincide) and the sum's fold kernel.
        let grids = program.module.grid_kernels.iter().count();
        assert!(units.len() > grids, "{} sources for {grids} kernels", units.len());
        assert!(units.iter().any(|(symbol, _)| symbol.contains("fold")), "{:?}", units.iter().map(|u| &u.0).collect::<Vec<_>>());
        assert!(units.iter().all(|(_, source)| source.contains("#line")) || units.iter().any(|(s, _)| s.contains("fold")));
        let images: Vec<KernelImage> = units
            .iter()
            .enumerate()
            .map(|(k, (_, source))| KernelImage { source_hash: yosegi::runtime::cuda::fnv1a64(source.as_bytes()), target: Target::Cubin(90), bytes: vec![k as u8; 3] })
            .collect();
        let bytes = ProgramImage::encode(&program.module, &program.sources, StagingMode::Auto, &images);
        assert!(units.iter().any(|(_, source)| source.contains("#line 6 ")), "the clause on the continued line is located there");
        std::fs::remove_file(&path).unwrap();
        let back = ProgramImage::from_bytes(&bytes).expect("reads back");
        assert_eq!(back.kernel_images, images);
        assert_eq!(ahead_sources(&back.module, &back.sources), units, "the run would write other sources than the link compiled");
    }
}

mod padding {
    use yosegi::opt::PassConfig;

    #[test]
    fn the_pipeline_pads_a_staged_transposition_tile() {
        // The staging pass copies `in` into a [32][8] tile of doubles that the warp then reads
        // down a column: degree 8 per half-warp before padding, 2 after one extra double per row
        // (a second one would grow the tile by more than an eighth).
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("transpose.c");
        let program = "#include <stdio.h>\n#define N 100\ndouble in[N][N], out[N][N];\nint main(void) {\n    #pragma acc parallel loop collapse(2) copyin(in) copyout(out)\n    for (int j = 0; j < N; j++)\n        for (int i = 0; i < N; i++)\n            out[j][i] = in[i][j];\n    printf(\"%f\\n\", out[1][2]);\n    return 0;\n}\n";
        std::fs::write(&path, program).expect("write");
        let config = PassConfig { staging: crate::opt::StagingMode::Force, ..Default::default() };
        let compiled = crate::driver::compile(&[path], &Default::default(), &config).unwrap_or_else(|_| panic!("compiles"));
        let staged = compiled
            .module
            .grid_kernels
            .iter()
            .map(|(_, g)| g)
            .find(|g| g.variant.kind == crate::ir::VariantKind::Staged)
            .expect("a staged variant");
        assert_eq!(staged.shared[0].dims, vec![32, 9]);
        assert!(
            staged.variant.notes.iter().any(|n| n == "bank conflicts on tile in_tile_s0: degree 8 -> 2 after padding rows 8 -> 9 doubles"),
            "{:?}",
            staged.variant.notes
        );
    }
}

mod staging {
    use yosegi::opt::{PassConfig, StagingMode};

    fn config(staging: StagingMode) -> PassConfig {
        PassConfig { staging, ..PassConfig::default() }
    }

    #[test]
    fn example_notes_say_what_was_staged_and_why() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let notes_of = |file: &str, kernel: &str| {
            let program = crate::driver::compile(&[root.join(file)], &Default::default(), &config(StagingMode::Auto))
                .unwrap_or_else(|_| panic!("{file} compiles"));
            let g = program.module.grid_kernels.iter().map(|(_, g)| g).find(|g| g.name == kernel).unwrap_or_else(|| panic!("no {kernel}"));
            g.variant.notes.clone()
        };
        let jacobi = notes_of("examples/jacobi2d.c", "main_l48");
        assert_eq!(jacobi[0], "A: 5 refs A[j+{-1..1}][i+{-1..1}] form one group, halo 1x1; block footprint 10x34 doubles (2720 B), 1280 accesses -> reuse 3.8");
        assert_eq!(jacobi[1], "Anew: 2 refs Anew[j][i] form one group, halo 0x0; block footprint 8x32 doubles (2048 B), 512 accesses -> reuse 2.0");
        assert_eq!(jacobi[2], "staged A (A[j+{-1..1}][i+{-1..1}]) as tile [10][34] (2720 B per block)");
        assert_eq!(jacobi[3], "Anew[j][i]: not staged: one element per thread, which a register holds between its accesses");
        let copy_back = notes_of("examples/jacobi2d.c", "main_l56");
        assert!(copy_back.contains(&"Anew[j][i]: each element read once per block and coalesced: not staged".to_string()), "{copy_back:?}");
        let staged = notes_of("examples/jacobi2d.c", "main_l48_staged");
        assert!(staged.iter().any(|n| n.starts_with("estimated at 0.")), "{staged:?}");
    }
}

mod cuda {
    use yosegi::back::cuda::testing::assert_compiles;
    use yosegi::back::cuda::{ParamAliasing, module_cuda, param_aliasing};
    use yosegi::diag::Span;
    use yosegi::ir::{ArrayRef, ScalarType};
    use yosegi::runtime::testing::GridBuilder;

    /// The CUDA C of every grid kernel of a C program, through the whole front end and the passes.
    fn cuda_of_source(c_source: &str) -> String {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("snippet.c");
        std::fs::write(&path, c_source).expect("write snippet");
        let program = crate::driver::compile(&[path], &crate::front::PreprocessOptions::default(), &crate::opt::PassConfig::default())
            .unwrap_or_else(|(sources, d)| panic!("{}", crate::diag::render(&sources, &d.0, false)));
        module_cuda(&program.module)
    }

    #[test]
    fn bool_is_cuda_bool() {
        let text = cuda_of_source(
            r#"
#include <stdbool.h>
#pragma acc routine seq
bool positive(double x) { return x > 0; }
int main(void) {
    static bool flags[64];
    static double v[64];
    bool neg = true, all = true;
    #pragma acc parallel loop copyout(flags) reduction(&&:all)
    for (int i = 0; i < 64; i++) {
        _Bool b = (_Bool)0.5;
        flags[i] = neg && !positive(v[i]) && b;
        all = all && flags[i];
    }
    return all;
}
"#,
        );
        assert!(!text.contains("_Bool"), "{text}");
        assert!(text.contains("__device__ static bool positive_f0(double x_0)"), "{text}");
        assert!(text.contains("bool neg_p") && text.contains("bool *flags_p"), "{text}");
        // A conversion to bool is a test against zero, folded here to the constant true.
        assert!(text.contains(" = true;"), "{text}");
        assert!(text.contains("__shared__ bool red0_s0[256];"), "{text}");
        assert_compiles(&text);
    }

    #[test]
    fn assignments_inside_expressions_are_statements_before_their_use() {
        let text = cuda_of_source(
            r#"
int main(void) {
    static int a[64], b[64], c[64];
    #pragma acc parallel loop copyout(a, b, c)
    for (int i = 0; i < 64; i++) {
        int x, z = 0, m = i % 5 + 1, s = 0;
        a[i] = b[i] = i * 3;
        x = (i % 3 == 0) && (z = i) > 5;
        do {
            if (m == 2) continue;
            s += m;
        } while (--m > 0);
        c[i] = x + z + s;
    }
    return 0;
}
"#,
        );
        // The chained store keeps the value in a local, stored to `b` then to `a`.
        assert!(text.contains("b_p1[i_0] = assigned_") && text.contains("a_p0[i_0] = assigned_"), "{text}");
        // `z = i` runs only when the left operand of `&&` holds.
        assert!(text.contains("if (and_"), "{text}");
        // The do-while condition with its decrement is tested after the continue label, and leaves
        // the loop with `break`.
        let tail = &text[text.find("continue_1:;").expect("a continue label")..];
        let close = tail.find("\n        }\n").expect("the loop's closing brace");
        assert!(tail[..close].contains("break;"), "{text}");
        assert_compiles(&text);
    }

    #[test]
    fn a_switch_whose_cases_fall_through_is_a_one_trip_loop() {
        let text = cuda_of_source(
            r#"
int main(void) {
    static int a[64], b[64];
    #pragma acc parallel loop copyin(a) copyout(b)
    for (int i = 0; i < 64; i++) {
        int r = 0;
        for (int k = 0; k < 4; k++) {
            switch (a[i] + k) {
            case 0:
                continue;
            case 1:
                r += 2;
            case 2:
                r *= 3;
                if (r > 40) break;
                r += 1;
            default:
                r -= 1;
            }
        }
        b[i] = r;
    }
    return 0;
}
"#,
        );
        // The selector is read once; each case runs when it matched or an earlier one fell into it.
        assert!(text.contains("switch_3 = a_p0[i_0] + k_2;"), "{text}");
        assert!(text.contains("case_running_4 = case_running_4 || (switch_3 == 1);"), "{text}");
        assert!(text.contains("case_running_4 = case_running_4 || no_case_5;"), "{text}");
        // `continue` out of the switch: a flag, then the loop's own continue after the switch.
        assert!(text.contains("switch_continue_6 = true;"), "{text}");
        assert!(text.contains("if (switch_continue_6) {"), "{text}");
        assert_compiles(&text);
    }

    #[test]
    fn members_of_arrays_of_structs_and_struct_locals() {
        let text = cuda_of_source(
            r#"
typedef struct { double a, b, c; } item;
struct pt { float x, y; int id; };
int main(void) {
    static item v[64];
    static struct pt q[64];
    #pragma acc parallel loop copy(v, q)
    for (int i = 0; i < 64; i++) {
        struct pt p = q[i];
        p.x += p.id;
        q[i] = p;
        v[i].c = v[i].a + v[i].b;
    }
    return 0;
}
"#,
        );
        // `v` seen as rows of 3 doubles, `q` as rows of 3 floats and of 3 ints.
        assert!(text.contains("double *v_p"), "{text}");
        assert!(text.contains("float *q_p") && text.contains("int *q_p"), "{text}");
        assert!(text.contains("* 3ll + (long long)2] = "), "{text}");
        // The struct local is a local per member.
        assert!(text.contains("float p_x_") && text.contains("int p_id_"), "{text}");
        assert_compiles(&text);
    }

    #[test]
    fn row_tables_load_the_row_pointer_then_index_the_row() {
        let text = cuda_of_source(
            r#"
#include <stdlib.h>
#pragma acc routine seq
double row_sum(double **a, int x, int m) {
    double s = 0;
    for (int y = 0; y < m; y++) s += a[x][y];
    return s;
}
int main(void) {
    int n = 8, m = 5;
    double **a = (double **)malloc(n * sizeof(double *));
    float **h = (float **)malloc(n * sizeof(float *));
    double *out = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) { a[i] = (double *)calloc(m, sizeof(double)); h[i] = (float *)calloc(4, sizeof(float)); }
    #pragma acc parallel loop copyin(a[0:n][0:m]) copy(h[0:n][0:4]) copyout(out[0:n])
    for (int i = 0; i < n; i++) {
        out[i] = row_sum(a, i, m);
        #pragma acc atomic update
        h[(i + 1) % n][i % 4] += 1.0f;
    }
    return (int)out[0];
}
"#,
        );
        // The table of a read-only table is `const` all the way down; a written one only in the
        // table itself (the kernel never stores a pointer). No `__restrict__`: rows may alias.
        assert!(text.contains("const double *const *a_p"), "{text}");
        assert!(text.contains("float *const *h_p"), "{text}");
        assert!(!text.contains("__restrict__"), "{text}");
        // `a[x][y]` is C's double subscript: the row's address from the table, then the element.
        let a_name = text.split("const double *const *").nth(1).and_then(|rest| rest.split([',', ')']).next()).expect("the table param");
        assert!(text.contains(&format!("{a_name}[(long long)")), "{text}");
        assert!(text.contains("atomicAdd(&h_p"), "{text}");
        assert_compiles(&text);
    }

    #[test]
    fn pointers_made_from_integers_are_cast_device_addresses() {
        let text = cuda_of_source(
            r#"
#include <stddef.h>
#include <stdint.h>
int main(void) {
    static size_t where[16];
    static double v[16];
    uintptr_t base = 0;
    float sum = 0;
    #pragma acc host_data use_device(v)
    {
        for (int i = 0; i < 16; i++) where[i] = (size_t)(v + i);
        base = (uintptr_t)v;
    }
    #pragma acc parallel loop reduction(+:sum)
    for (int i = 0; i < 16; i++) {
        *((double *)where[i]) += 1;
        sum += ((float *)base)[i];
        #pragma acc atomic update
        *((int *)where[i]) += 2;
    }
    return (int)sum;
}
"#,
        );
        assert!(text.contains("(*(double *)(where_p"), "{text}");
        assert!(text.contains("(*(float *)(base_p") && text.contains("* 4ull"), "{text}");
        assert!(text.contains("atomicAdd(&(*(int *)(where_p"), "{text}");
        assert_compiles(&text);
        // A computed address may be any param's memory: no launch makes the params `__restrict__`.
        let mut g = GridBuilder::new("addr_l9", [32, 1, 1]);
        let a = g.array_param("a", ScalarType::F64, &[]);
        let at = g.scalar_param("at", ScalarType::U64);
        let i = g.global_id();
        let load = g.load(ArrayRef::Param(a), &[i], ScalarType::F64, Span::default());
        let address = g.param(at);
        let store = g.store(ArrayRef::Address(ScalarType::F64), &[address], load);
        let kernel = g.finish(vec![store]);
        assert_eq!(param_aliasing(&kernel, &[Some(1), None]), ParamAliasing::Unknown);
    }
}
