//! Tables of row pointers through `Runtime`: deep-copy clauses (reference counts of the table
//! and of each row, what moves, the device table's addresses) and launches of a kernel that
//! indexes a table.

use std::ffi::c_void;

use super::tests::{host_arg, runtime};
use super::*;
use crate::analysis::testing::{B, kernel as make_kernel, scalar_param};
use crate::ir::{ArrayRef, BinaryOp, RowSection, Stmt};
use crate::runtime::testing::GridBuilder;

const ROWS: usize = 3;
const COLS: usize = 4;

/// A host table of `ROWS` rows of `COLS` doubles (row `i` holds `10 i + j`), each row and the
/// table tracked as heap blocks, as the malloc wrappers would.
struct Table {
    rows: Vec<Vec<f64>>,
    pointers: Vec<*mut f64>,
}

impl Table {
    fn new(rt: &mut Runtime) -> Table {
        let mut rows: Vec<Vec<f64>> = (0..ROWS).map(|i| (0..COLS).map(|j| (10 * i + j) as f64).collect()).collect();
        let pointers: Vec<*mut f64> = rows.iter_mut().map(|r| r.as_mut_ptr()).collect();
        for r in &rows {
            rt.track_malloc(r.as_ptr() as u64, (COLS * 8) as u64);
        }
        rt.track_malloc(pointers.as_ptr() as u64, (ROWS * 8) as u64);
        Table { rows, pointers }
    }

    /// The region args: the table, the number of rows, the row length, a row index and 1.
    fn args(&self, x: i64) -> Vec<YosegiArg> {
        vec![
            YosegiArg { ptr: self.pointers.as_ptr() as *mut c_void, ..Default::default() },
            YosegiArg { i: ROWS as i64, ..Default::default() },
            YosegiArg { i: COLS as i64, ..Default::default() },
            YosegiArg { i: x, ..Default::default() },
            YosegiArg { i: 1, ..Default::default() },
        ]
    }

    fn row(&self, i: usize) -> u64 {
        self.rows[i].as_ptr() as u64
    }
}

/// `t[0:n][0:m]` (every row) or `t[x:1][0:m]` (row `x`), with `kind`.
fn rows_clause(kind: DataClauseKind, one_row: bool) -> DataSection {
    DataSection {
        kind,
        base: 0,
        lo: one_row.then_some(3),
        len: Some(if one_row { 4 } else { 1 }),
        elem_size: 8,
        name: if one_row { "t[x:1][0:m]" } else { "t[0:n][0:m]" }.into(),
        span: Span::new(0, 3, 4),
        zero: false,
        rows: Some(RowSection { lo: None, len: Some(2), elem_size: 8 }),
        dead_on_host: false,
    }
}

/// Region 0 runs `t[i][0] = 2 t[i][0] + 1` for `i < n`; regions 1.. are `extra`.
fn rows_module(extra: Vec<RegionKind>) -> Module {
    let mut module = Module::default();
    let table = Param { name: "t".into(), kind: ParamKind::RowTable { elem: ScalarType::F64, read_only: false }, arg: 0 };
    let mut b = B::new();
    let i = b.loop_var("i");
    let zero = b.int(0);
    let n = b.param(1);
    let dim = b.dim(i, zero, n);
    let iv = b.local(i);
    let col = b.int(0);
    let load = b.load(0, vec![iv, col]);
    let two = b.float(2.0, ScalarType::F64);
    let one = b.float(1.0, ScalarType::F64);
    let doubled = b.mul(load, two);
    let value = b.add(doubled, one);
    let (iv2, col2) = (b.local(i), b.int(0));
    let store = b.store(0, vec![iv2, col2], value);
    b.body.block = vec![store];
    let kernel = module.kernels.append(make_kernel("rows", vec![table.clone(), scalar_param("n", 1)], vec![dim], b.body));

    let mut g = GridBuilder::new("rows_g", [32, 1, 1]);
    let t = g.row_table_param("t", ScalarType::F64);
    let np = g.scalar_param("n", ScalarType::I32);
    let one_block = g.int(1);
    g.grid_x(one_block);
    let gid = g.global_id();
    let nv = g.param(np);
    let guard = g.bin(BinaryOp::Lt, gid, nv);
    let zero = g.int(0);
    let load = g.load(ArrayRef::Param(t), &[gid, zero], ScalarType::F64, Span::default());
    let two = g.float(2.0, ScalarType::F64);
    let one = g.float(1.0, ScalarType::F64);
    let doubled = g.bin(BinaryOp::Mul, load, two);
    let value = g.bin(BinaryOp::Add, doubled, one);
    let store = g.store(ArrayRef::Param(t), &[gid, zero], value);
    module.grid_kernels.append(g.finish(vec![Stmt::If { cond: guard, then: vec![store], otherwise: vec![] }]));

    let args = vec![host_arg(HostArgKind::Pointer), host_arg(HostArgKind::Int), host_arg(HostArgKind::Int), host_arg(HostArgKind::Int), host_arg(HostArgKind::Int)];
    let mut kinds = vec![RegionKind::Compute { kernels: vec![kernel], data: vec![] }];
    kinds.extend(extra);
    for (id, kind) in kinds.into_iter().enumerate() {
        module.regions.push(Region { id: id as u32, span: Span::default(), body_span: None, kind, args: args.clone(), if_arg: None, function: "main".into(), unread_on_host: Vec::new(), host_after: Vec::new(), settle_after: Vec::new() });
    }
    module
}

fn present(rt: &Runtime, addr: u64) -> bool {
    rt.registry().find(addr).and_then(|s| rt.registry().get(s)).is_some_and(|o| o.copies.is_present(0))
}

/// The device address held in the device table for row `i`.
fn device_entry(rt: &mut Runtime, table: &Table, i: usize) -> u64 {
    let start = rt.registry.find(table.pointers.as_ptr() as u64).expect("tracked table");
    let (alloc, base) = rt.registry.get(start).and_then(|o| o.copies.placement(0)).expect("table on the device");
    let mut bytes = [0u8; 8];
    rt.devices[0].copy_to_host(alloc, base + (table.pointers.as_ptr() as u64 - start) + 8 * i as u64, &mut bytes);
    u64::from_le_bytes(bytes)
}

/// The device address of row `i`'s copy.
fn row_address(rt: &Runtime, table: &Table, i: usize) -> u64 {
    let start = rt.registry().find(table.row(i)).expect("tracked row");
    let (alloc, base) = rt.registry().get(start).and_then(|o| o.copies.placement(0)).expect("row on the device");
    rt.devices[0].address(alloc) + base + (table.row(i) - start)
}

#[test]
fn a_deep_copy_attaches_the_rows_and_copies_only_row_data_back() {
    let mut rt = runtime(rows_module(vec![RegionKind::Data { data: vec![rows_clause(DataClauseKind::Copy, false)] }]));
    let table = Table::new(&mut rt);
    let args = table.args(0);
    rt.data_enter(1, &args).expect("enter");
    assert_eq!(rt.stats().bytes_to_device, (ROWS * COLS * 8 + ROWS * 8) as u64, "the rows' data, then their device addresses");
    for i in 0..ROWS {
        assert!(present(&rt, table.row(i)), "row {i} is present");
        assert_eq!(device_entry(&mut rt, &table, i), row_address(&rt, &table, i), "the device table points to row {i}'s copy");
    }
    assert!(present(&rt, table.pointers.as_ptr() as u64), "the table is present");
    rt.region(0, &args).expect("launch");
    assert_eq!(table.rows[1][0], 10.0, "nothing comes back before the region's exit");
    let pointers_before = table.pointers.clone();
    rt.data_exit(1, &args).expect("exit");
    assert_eq!(table.pointers, pointers_before, "the host's row pointers are never overwritten");
    for i in 0..ROWS {
        assert_eq!(table.rows[i][0], (20 * i + 1) as f64);
        assert_eq!(table.rows[i][3], (10 * i + 3) as f64);
        assert!(!present(&rt, table.row(i)));
    }
    assert!(!present(&rt, table.pointers.as_ptr() as u64));
}

#[test]
fn a_row_held_by_an_outer_region_stays_present_after_an_inner_one() {
    let outer = RegionKind::Data { data: vec![rows_clause(DataClauseKind::CopyIn, false)] };
    let inner = RegionKind::Data { data: vec![rows_clause(DataClauseKind::Copy, true)] };
    let mut rt = runtime(rows_module(vec![outer, inner]));
    let table = Table::new(&mut rt);
    let args = table.args(1);
    rt.data_enter(1, &args).expect("outer");
    rt.data_enter(2, &args).expect("inner");
    let row1 = rt.registry().find(table.row(1)).expect("row 1");
    assert_eq!(rt.registry().get(row1).and_then(|o| o.copies.devices[0].as_ref()).map(|c| c.structured), Some(2));
    rt.data_exit(2, &args).expect("inner exit");
    assert!(present(&rt, table.row(1)), "the outer region still holds row 1");
    assert!(present(&rt, table.pointers.as_ptr() as u64), "and the table");
    rt.data_exit(1, &args).expect("outer exit");
    assert!(!present(&rt, table.row(1)) && !present(&rt, table.row(0)));
    assert!(!present(&rt, table.pointers.as_ptr() as u64));
}

#[test]
fn enter_and_exit_data_count_dynamically_and_present_names_the_missing_row() {
    let enter = RegionKind::EnterData { data: vec![rows_clause(DataClauseKind::Create, true)] };
    let exit = RegionKind::ExitData { data: vec![rows_clause(DataClauseKind::Delete, true)], finalize: false };
    let check = RegionKind::Data { data: vec![rows_clause(DataClauseKind::Present, false)] };
    let mut rt = runtime(rows_module(vec![enter, exit, check]));
    let table = Table::new(&mut rt);
    let args = table.args(2);
    rt.region(1, &args).expect("enter data");
    rt.region(1, &args).expect("enter data again");
    assert_eq!(rt.stats().bytes_to_device, 2 * 8, "create moves no row data, only row 2's device address, once per entry");
    let err = rt.data_enter(3, &args).expect_err("rows 0 and 1 are absent");
    assert_eq!(err.exit_code(), 1);
    assert!(err.diagnostic.message.contains("row `t[0]` of `t[0:n][0:m]` is not on the device"), "{}", err.diagnostic.message);
    rt.region(2, &args).expect("exit data");
    assert!(present(&rt, table.row(2)), "one dynamic reference is left");
    rt.region(2, &args).expect("exit data again");
    assert!(!present(&rt, table.row(2)) && !present(&rt, table.pointers.as_ptr() as u64));
}

#[test]
fn a_launch_without_clauses_moves_only_the_rows_it_touches_and_rewrites_the_table() {
    let mut rt = runtime(rows_module(vec![]));
    let mut table = Table::new(&mut rt);
    let mut args = table.args(0);
    args[1].i = 2;
    rt.region(0, &args).expect("launch over rows 0 and 1");
    // Row data: element 0 of rows 0 and 1 (the rows are exact heap blocks: their whole
    // element range is clamped to them), then the two device addresses.
    assert_eq!(rt.stats().bytes_to_device, 2 * 8 + 2 * 8);
    assert!(!rt.registry().find(table.row(2)).and_then(|s| rt.registry().get(s)).is_some_and(|o| o.copies.has_device_copy(0)));
    rt.host_access_all();
    assert_eq!((table.rows[0][0], table.rows[1][0], table.rows[2][0]), (1.0, 21.0, 20.0));
    // The host swaps two rows: the next launch follows the host's pointers.
    rt.host_access(&[table.pointers.as_ptr() as u64], &[abi::YOSEGI_WRITE]);
    table.pointers.swap(0, 1);
    rt.region(0, &args).expect("launch again");
    rt.host_access_all();
    assert_eq!((table.rows[0][0], table.rows[1][0]), (3.0, 43.0));
    assert_eq!(device_entry(&mut rt, &table, 0), row_address(&rt, &table, 1), "entry 0 now holds row 1's copy");
}
