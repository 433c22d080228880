//! Which loops keep which params in registers, on kernels built by hand.

use super::*;
use crate::diag::Span;
use crate::ir::{BinaryOp, ScalarType};
use crate::runtime::testing::GridBuilder;

/// `for (k = 0; k < n; k++) <body(k)>` where `body` builds the loop's statements from `k`.
fn counted_loop(g: &mut GridBuilder, n: u32, body: impl FnOnce(&mut GridBuilder, Handle<Expr>) -> Vec<Stmt>) -> Vec<Stmt> {
    let k = g.local("k", ScalarType::I32);
    let zero = g.int(0);
    let k_now = g.get(k);
    let n_now = g.param(n);
    let cond = g.bin(BinaryOp::Lt, k_now, n_now);
    let k_read = g.get(k);
    let statements = body(g, k_read);
    let k_again = g.get(k);
    let one = g.int(1);
    let step = g.bin(BinaryOp::Add, k_again, one);
    vec![
        Stmt::Assign { local: k, value: zero },
        Stmt::Loop { cond: Some(cond), test_first: true, body: statements, continuing: vec![Stmt::Assign { local: k, value: step }], range: None },
    ]
}

/// `c[id] += a[k] * b[k]` over `k`, each statement of the loop body given by `shape`.
fn sum_of_products(shape: impl FnOnce(&mut GridBuilder, u32, u32, u32, Handle<Expr>, Handle<Expr>) -> Vec<Stmt>) -> (GridKernel, [u32; 3]) {
    let mut g = GridBuilder::new("sum", [64, 1, 1]);
    let n = g.scalar_param("n", ScalarType::I32);
    let a = g.array_param("a", ScalarType::F64, &[]);
    let b = g.array_param("b", ScalarType::F64, &[]);
    let c = g.array_param("c", ScalarType::F64, &[]);
    let id = g.global_id();
    let block = counted_loop(&mut g, n, |g, k| shape(g, a, b, c, id, k));
    (g.finish(block), [a, b, c])
}

fn accumulate(g: &mut GridBuilder, a: u32, b: u32, c: u32, at: Handle<Expr>, k: Handle<Expr>) -> Stmt {
    let old = g.load(ArrayRef::Param(c), &[at], ScalarType::F64, Span::default());
    let x = g.load(ArrayRef::Param(a), &[k], ScalarType::F64, Span::default());
    let y = g.load(ArrayRef::Param(b), &[k], ScalarType::F64, Span::default());
    let xy = g.bin(BinaryOp::Mul, x, y);
    let sum = g.bin(BinaryOp::Add, old, xy);
    g.store(ArrayRef::Param(c), &[at], sum)
}

fn the_loop(kernel: &GridKernel) -> &Stmt {
    kernel.body.block.iter().find(|s| matches!(s, Stmt::Loop { .. })).expect("a loop")
}

const RESTRICT: [bool; 4] = [false, true, true, true];

#[test]
fn an_accumulator_at_the_threads_own_element_is_kept_in_a_register() {
    let (kernel, [_, _, c]) = sum_of_products(|g, a, b, c, id, k| vec![accumulate(g, a, b, c, id, k)]);
    let promoted = promoted_params(&kernel, &RESTRICT);
    assert_eq!(promoted.of(the_loop(&kernel)), &[c]);
}

#[test]
fn without_restrict_a_written_element_stays_in_memory_beside_other_loads() {
    let (kernel, _) = sum_of_products(|g, a, b, c, id, k| vec![accumulate(g, a, b, c, id, k)]);
    let promoted = promoted_params(&kernel, &[false; 4]);
    assert!(promoted.is_empty(), "{promoted:?}");
}

#[test]
fn an_element_whose_subscript_follows_the_loop_is_not_promoted() {
    // c[k] += a[k] * b[k]: a new element each iteration.
    let (kernel, _) = sum_of_products(|g, a, b, c, _, k| vec![accumulate(g, a, b, c, k, k)]);
    assert!(promoted_params(&kernel, &RESTRICT).is_empty());
}

#[test]
fn a_store_under_a_condition_is_not_promoted() {
    let (kernel, _) = sum_of_products(|g, a, b, c, id, k| {
        let update = accumulate(g, a, b, c, id, k);
        let zero = g.int(0);
        let positive = g.bin(BinaryOp::Gt, k, zero);
        vec![Stmt::If { cond: positive, then: vec![update], otherwise: vec![] }]
    });
    assert!(promoted_params(&kernel, &RESTRICT).is_empty());
}

#[test]
fn two_subscripts_of_one_array_keep_it_in_memory() {
    // c[id] += a[k] * b[k]; c[id + 1] = 0: two places in one array, which the rule does not
    // try to prove apart.
    let (kernel, _) = sum_of_products(|g, a, b, c, id, k| {
        let update = accumulate(g, a, b, c, id, k);
        let one = g.int(1);
        let next = g.bin(BinaryOp::Add, id, one);
        let zero = g.float(0.0, ScalarType::F64);
        vec![update, g.store(ArrayRef::Param(c), &[next], zero)]
    });
    assert!(promoted_params(&kernel, &RESTRICT).is_empty());
}

#[test]
fn a_barrier_in_the_loop_keeps_everything_in_memory() {
    let (kernel, _) = sum_of_products(|g, a, b, c, id, k| vec![accumulate(g, a, b, c, id, k), Stmt::Barrier]);
    assert!(promoted_params(&kernel, &RESTRICT).is_empty());
}

#[test]
fn an_invariant_read_only_element_is_loaded_once_even_without_restrict() {
    // c[k] = a[id] * b[k]: a[id] does not change, but the store to c may reach it unless one
    // of the two is restrict.
    let (kernel, [a, _, _]) = sum_of_products(|g, a, b, c, id, k| {
        let x = g.load(ArrayRef::Param(a), &[id], ScalarType::F64, Span::default());
        let y = g.load(ArrayRef::Param(b), &[k], ScalarType::F64, Span::default());
        let xy = g.bin(BinaryOp::Mul, x, y);
        vec![g.store(ArrayRef::Param(c), &[k], xy)]
    });
    assert_eq!(promoted_params(&kernel, &RESTRICT).of(the_loop(&kernel)), &[a]);
    assert!(promoted_params(&kernel, &[false; 4]).is_empty());
    // With only loads beside it, a read-only element needs no promise.
    let (kernel, [_, b, _]) = sum_of_products(|g, a, b, _, id, k| {
        let x = g.load(ArrayRef::Param(a), &[k], ScalarType::F64, Span::default());
        let y = g.load(ArrayRef::Param(b), &[id], ScalarType::F64, Span::default());
        let sum = g.local("s", ScalarType::F64);
        let s = g.get(sum);
        let xy = g.bin(BinaryOp::Mul, x, y);
        let next = g.bin(BinaryOp::Add, s, xy);
        vec![Stmt::Assign { local: sum, value: next }]
    });
    assert_eq!(promoted_params(&kernel, &[false; 4]).of(the_loop(&kernel)), &[b]);
}
