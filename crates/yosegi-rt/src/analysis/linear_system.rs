//! Small systems of linear equations and inequalities over the integers, and the search for an
//! integer point that satisfies one (a *witness*).
//!
//! The carried-dependence test ([`super::carried::proven_carried`]) asks whether two
//! different iterations of a loop the user called independent touch the same element. It wants
//! a proof, not a guess: a witness is checked against every original constraint before it is
//! returned, so `Some` is always a real solution, whatever shortcuts the search took. `None`
//! means "none found" (the system may be infeasible, or too large to search), which the caller
//! treats as "trust the user".
//!
//! The search: equations with a variable of coefficient ±1 are solved for that variable and
//! substituted away (loop variables equal to subscripts mostly go this way); the remaining
//! equations become pairs of inequalities; Fourier–Motzkin elimination then projects the system
//! one variable at a time, keeping each stage, and values are picked back from the last stage
//! to the first, each an integer within the bounds the earlier choices leave (the one nearest
//! to zero first, then either end of its range). Rational elimination can leave integer gaps,
//! so a pick may fail; the search backtracks a bounded number of times.

/// `sum(coeffs[v] * x[v]) + constant`, compared with zero by its system (`== 0` or `>= 0`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub coeffs: Vec<i128>,
    pub constant: i128,
}

impl Row {
    pub fn zero(vars: usize) -> Row {
        Row { coeffs: vec![0; vars], constant: 0 }
    }

    fn value(&self, x: &[i128]) -> Option<i128> {
        self.coeffs.iter().zip(x).try_fold(self.constant, |acc, (c, v)| acc.checked_add(c.checked_mul(*v)?))
    }

    fn is_constant(&self) -> bool {
        self.coeffs.iter().all(|c| *c == 0)
    }

    /// Divides by the gcd of the coefficients; an inequality's constant is rounded down, which
    /// keeps exactly its integer solutions.
    fn normalised_inequality(mut self) -> Row {
        let g = self.coeffs.iter().fold(0, |g, c| gcd(g, c.unsigned_abs()));
        // `g` divides every coefficient, so it fits `i128` unless it is 2^127 (every
        // coefficient 0 or `i128::MIN`), which `simplified` never lets through.
        if let Ok(g) = i128::try_from(g)
            && g > 1
        {
            for c in &mut self.coeffs {
                *c /= g;
            }
            self.constant = self.constant.div_euclid(g);
        }
        self
    }
}

/// Equations (`row == 0`) and inequalities (`row >= 0`) over `vars` integer variables.
#[derive(Clone, Debug, Default)]
pub struct System {
    pub vars: usize,
    pub equations: Vec<Row>,
    pub inequalities: Vec<Row>,
}

/// Past these the search gives up (returns `None`): elimination can square the number of rows
/// at every step.
const MAX_ROWS: usize = 4000;
const MAX_PICKS: usize = 20_000;
/// Coefficients are kept far below `i128`'s range so products of two stay exact.
const MAX_MAGNITUDE: i128 = 1 << 60;

impl System {
    pub fn new(vars: usize) -> System {
        System { vars, equations: Vec::new(), inequalities: Vec::new() }
    }

    /// `lhs <= rhs`; false (and nothing added) when `rhs - lhs` overflows.
    #[must_use]
    pub fn at_most(&mut self, lhs: Row, rhs: Row) -> bool {
        sub(&rhs, &lhs).map(|r| self.inequalities.push(r)).is_some()
    }

    /// `lhs == rhs`; false (and nothing added) when `lhs - rhs` overflows.
    #[must_use]
    pub fn equal(&mut self, lhs: Row, rhs: Row) -> bool {
        sub(&lhs, &rhs).map(|r| self.equations.push(r)).is_some()
    }

    /// An integer point satisfying every constraint, checked; `None` when none was found.
    pub fn witness(&self) -> Option<Vec<i128>> {
        let x = self.search()?;
        let holds = self.equations.iter().all(|r| r.value(&x) == Some(0))
            && self.inequalities.iter().all(|r| r.value(&x).is_some_and(|v| v >= 0));
        holds.then_some(x)
    }

    fn search(&self) -> Option<Vec<i128>> {
        // Substitute away variables with a unit coefficient in some equation.
        let mut equations = self.equations.clone();
        let mut inequalities = self.inequalities.clone();
        let mut substitutions: Vec<(usize, Row)> = Vec::new();
        while let Some((e, var)) = equations
            .iter()
            .enumerate()
            .find_map(|(e, row)| row.coeffs.iter().position(|c| c.unsigned_abs() == 1).map(|v| (e, v)))
        {
            let row = equations.swap_remove(e);
            // c*x + rest == 0  =>  x = -rest / c  (c is +-1, so x = -c * rest)
            let c = row.coeffs[var];
            let mut value = row.clone();
            value.coeffs[var] = 0;
            let value = scale(&value, -c)?;
            for r in equations.iter_mut().chain(inequalities.iter_mut()) {
                *r = substitute(r, var, &value)?;
            }
            for (_, s) in substitutions.iter_mut() {
                *s = substitute(s, var, &value)?;
            }
            substitutions.push((var, value));
        }
        for row in equations {
            if row.is_constant() {
                if row.constant != 0 {
                    return None;
                }
                continue;
            }
            // No integer solution when the gcd of the coefficients does not divide the constant.
            let g = row.coeffs.iter().fold(0, |g, c| gcd(g, c.unsigned_abs()));
            if row.constant.unsigned_abs() % g != 0 {
                return None;
            }
            inequalities.push(scale(&row, -1)?);
            inequalities.push(row);
        }
        let free: Vec<usize> = (0..self.vars).filter(|v| substitutions.iter().all(|(s, _)| s != v)).collect();
        // Fourier–Motzkin: stage k holds the constraints on free[k..] (free[..k] eliminated).
        let mut stages: Vec<Vec<Row>> = Vec::with_capacity(free.len() + 1);
        let mut current = simplified(inequalities)?;
        for &var in &free {
            let next = eliminate(&current, var)?;
            stages.push(current);
            current = next;
        }
        if current.iter().any(|r| r.constant < 0) {
            return None;
        }
        let mut x = vec![0i128; self.vars];
        let mut picks = 0;
        if !pick_from(&stages, &free, free.len(), &mut x, &mut picks) {
            return None;
        }
        for (var, value) in substitutions.iter().rev() {
            x[*var] = value.value(&x)?;
        }
        Some(x)
    }
}

/// Assigns `free[k-1]`, then the ones before it, from the stages, backtracking on a dead end.
fn pick_from(stages: &[Vec<Row>], free: &[usize], k: usize, x: &mut Vec<i128>, picks: &mut usize) -> bool {
    if k == 0 {
        return true;
    }
    let var = free[k - 1];
    let (mut lo, mut hi) = (i128::MIN, i128::MAX);
    for row in &stages[k - 1] {
        let c = row.coeffs[var];
        if c == 0 {
            continue;
        }
        // c*var + rest >= 0 with every other remaining variable already picked.
        let mut rest = row.clone();
        rest.coeffs[var] = 0;
        let Some(rest) = rest.value(x) else { return false };
        // Coefficients are at most `MAX_MAGNITUDE`, so `-c` fits; `-rest` may not.
        if c > 0 {
            let Some(bound) = rest.checked_neg().and_then(|r| ceil_div(r, c)) else { return false };
            lo = lo.max(bound);
        } else {
            hi = hi.min(floor_div(rest, -c));
        }
    }
    if lo > hi {
        return false;
    }
    let mut candidates = vec![0i128.clamp(lo, hi)];
    for end in [lo, hi] {
        if end != i128::MIN && end != i128::MAX && !candidates.contains(&end) {
            candidates.push(end);
        }
    }
    for value in candidates {
        *picks += 1;
        if *picks > MAX_PICKS {
            return false;
        }
        x[var] = value;
        if pick_from(stages, free, k - 1, x, picks) {
            return true;
        }
    }
    x[var] = 0;
    false
}

/// The constraints on the other variables implied by `rows` (one Fourier–Motzkin step).
fn eliminate(rows: &[Row], var: usize) -> Option<Vec<Row>> {
    let (mut lower, mut upper, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for r in rows {
        match r.coeffs[var].signum() {
            1 => lower.push(r),
            -1 => upper.push(r),
            _ => rest.push(r.clone()),
        }
    }
    if lower.len() * upper.len() + rest.len() > MAX_ROWS {
        return None;
    }
    for l in &lower {
        for u in &upper {
            // a*x + L >= 0 and -b*x + U >= 0 (a, b > 0)  =>  b*L + a*U >= 0
            let (a, b) = (l.coeffs[var], -u.coeffs[var]);
            let combined = add(&scale(l, b)?, &scale(u, a)?)?;
            rest.push(combined);
        }
    }
    simplified(rest)
}

/// Normalised, without duplicates and trivially true rows; `None` past the size limits.
fn simplified(rows: Vec<Row>) -> Option<Vec<Row>> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut seen = std::collections::HashSet::new();
    for r in rows {
        if r.coeffs.iter().chain([&r.constant]).any(|c| c.unsigned_abs() > MAX_MAGNITUDE as u128) {
            return None;
        }
        let r = r.normalised_inequality();
        if r.is_constant() && r.constant >= 0 {
            continue;
        }
        if seen.insert(r.clone()) {
            out.push(r);
        }
    }
    Some(out)
}

fn substitute(row: &Row, var: usize, value: &Row) -> Option<Row> {
    let c = row.coeffs[var];
    if c == 0 {
        return Some(row.clone());
    }
    let mut r = row.clone();
    r.coeffs[var] = 0;
    add(&r, &scale(value, c)?)
}

fn scale(row: &Row, k: i128) -> Option<Row> {
    Some(Row {
        coeffs: row.coeffs.iter().map(|c| c.checked_mul(k)).collect::<Option<_>>()?,
        constant: row.constant.checked_mul(k)?,
    })
}

fn add(a: &Row, b: &Row) -> Option<Row> {
    Some(Row {
        coeffs: a.coeffs.iter().zip(&b.coeffs).map(|(x, y)| x.checked_add(*y)).collect::<Option<_>>()?,
        constant: a.constant.checked_add(b.constant)?,
    })
}

fn sub(a: &Row, b: &Row) -> Option<Row> {
    Some(Row {
        coeffs: a.coeffs.iter().zip(&b.coeffs).map(|(x, y)| x.checked_sub(*y)).collect::<Option<_>>()?,
        constant: a.constant.checked_sub(b.constant)?,
    })
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn floor_div(a: i128, b: i128) -> i128 {
    a.div_euclid(b)
}

/// `a / b` rounded up (`b > 0`); `None` when `-a` overflows.
fn ceil_div(a: i128, b: i128) -> Option<i128> {
    Some(-a.checked_neg()?.div_euclid(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(coeffs: &[i128], constant: i128) -> Row {
        Row { coeffs: coeffs.to_vec(), constant }
    }

    #[test]
    fn finds_a_point_inside_a_triangle() {
        // 0 <= k < i < n, with n <= 5
        let mut s = System::new(3);
        assert!(s.at_most(row(&[0, 0, 0], 0), row(&[1, 0, 0], 0)));
        assert!(s.at_most(row(&[1, 0, 0], 1), row(&[0, 1, 0], 0)));
        assert!(s.at_most(row(&[0, 1, 0], 1), row(&[0, 0, 1], 0)));
        assert!(s.at_most(row(&[0, 0, 1], 0), row(&[0, 0, 0], 5)));
        let x = s.witness().expect("feasible");
        assert!(0 <= x[0] && x[0] < x[1] && x[1] < x[2] && x[2] <= 5, "{x:?}");
    }

    #[test]
    fn equations_are_substituted_and_respected() {
        // x == y + 3, 2*y == z, z >= 7, x <= 20
        let mut s = System::new(3);
        assert!(s.equal(row(&[1, 0, 0], 0), row(&[0, 1, 0], 3)));
        assert!(s.equal(row(&[0, 2, 0], 0), row(&[0, 0, 1], 0)));
        assert!(s.at_most(row(&[0, 0, 0], 7), row(&[0, 0, 1], 0)));
        assert!(s.at_most(row(&[1, 0, 0], 0), row(&[0, 0, 0], 20)));
        let x = s.witness().expect("feasible");
        assert_eq!(x[0], x[1] + 3);
        assert_eq!(2 * x[1], x[2]);
        assert!(x[2] >= 7 && x[0] <= 20, "{x:?}");
    }

    #[test]
    fn contradictions_have_no_witness() {
        // i < j and j < i
        let mut s = System::new(2);
        assert!(s.at_most(row(&[1, 0], 1), row(&[0, 1], 0)));
        assert!(s.at_most(row(&[0, 1], 1), row(&[1, 0], 0)));
        assert_eq!(s.witness(), None);
        // 2*i == 2*j + 1 has rational solutions only
        let mut s = System::new(2);
        assert!(s.equal(row(&[2, 0], 0), row(&[0, 2], 1)));
        assert_eq!(s.witness(), None);
    }

    #[test]
    fn an_integer_gap_the_elimination_misses_gives_no_false_witness() {
        // 1 <= 3*x - 3*y <= 2 is rationally feasible but has no integer solution.
        let mut s = System::new(2);
        assert!(s.at_most(row(&[0, 0], 1), row(&[3, -3], 0)));
        assert!(s.at_most(row(&[3, -3], 0), row(&[0, 0], 2)));
        assert_eq!(s.witness(), None);
    }

    #[test]
    fn rows_that_overflow_are_refused_and_extreme_rows_search_without_overflow() {
        let mut s = System::new(1);
        assert!(!s.at_most(row(&[i128::MIN], 0), row(&[1], 0)), "1 - MIN overflows");
        assert!(!s.equal(row(&[0], i128::MAX), row(&[0], -1)));
        assert!(s.inequalities.is_empty() && s.equations.is_empty());
        // x >= i128::MIN + 1 style bounds: past the magnitude limit, no witness (and no panic).
        let mut s = System::new(2);
        s.inequalities.push(row(&[1, 0], i128::MAX));
        s.inequalities.push(row(&[-1, 1], i128::MIN + 1));
        s.equations.push(row(&[i128::MIN + 1, 3], 5));
        assert_eq!(s.witness(), None);
        assert_eq!(ceil_div(i128::MIN, 3), None);
        assert_eq!(ceil_div(-7, 2), Some(-3));
    }
}
