//! Brace initializer lists, and the flat form their runs of plain numbers take.
//!
//! A table of constants (`static const double w[] = {0.1, -2.5e-3, ...}`) is most of what a
//! large C source can be made of; as one tree per element it took about 90 bytes of syntax tree
//! and 96 of tokens per number, sixty times the text. The lexer instead hands such a run to the
//! parser as one token holding a [`NumberRun`] (value, position and form: 14 bytes a number),
//! and the list keeps it so. [`InitList::iter`] yields every element alike, building the
//! expression of a run's element when it is asked for; walks that look for names, calls or
//! effects use [`InitList::trees`], which leaves the runs out because a number has none.

use std::borrow::Cow;

use super::{Designator, Expr, ExprKind, Initializer, IntSuffix, UnaryOp};
use crate::diag::Span;

/// `{ .x = 1, [2] = 3, 4 }`: the elements in order, runs of numbers flat.
#[derive(Clone, Debug)]
pub struct InitList {
    items: Vec<InitItem>,
    /// From `{` to `}`.
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum InitItem {
    /// One element, with its designators (`.x =`, `[2] =`; none for the next position).
    One(Vec<Designator>, Initializer),
    /// Elements without designators, each a number literal, negated or not.
    Numbers(NumberRun),
}

impl InitList {
    pub fn new(items: Vec<InitItem>, span: Span) -> InitList {
        InitList { items, span }
    }

    /// A list of the given elements, each a tree.
    pub fn of_trees(elements: Vec<(Vec<Designator>, Initializer)>, span: Span) -> InitList {
        InitList { items: elements.into_iter().map(|(d, i)| InitItem::One(d, i)).collect(), span }
    }

    /// How many elements the list writes (a run counts each of its numbers).
    pub fn len(&self) -> usize {
        self.items.iter().map(|i| match i {
            InitItem::One(..) => 1,
            InitItem::Numbers(run) => run.len(),
        }).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element in order with its designators; a run's numbers as the expressions the
    /// parser would have built for them (`-2` is `Unary(Neg, 2)`), with their own spans.
    pub fn iter(&self) -> impl Iterator<Item = (&[Designator], Cow<'_, Initializer>)> + '_ {
        self.items.iter().flat_map(|item| -> Box<dyn Iterator<Item = (&[Designator], Cow<'_, Initializer>)> + '_> {
            match item {
                InitItem::One(d, i) => Box::new(std::iter::once((d.as_slice(), Cow::Borrowed(i)))),
                InitItem::Numbers(run) => Box::new((0..run.len()).map(|k| (&[][..], Cow::Owned(Initializer::Expr(run.expr(k)))))),
            }
        })
    }

    /// The elements written as trees, with their designators: all but the runs of numbers,
    /// which hold no names, calls, effects or nested lists. For walks that look for those.
    pub fn trees(&self) -> impl Iterator<Item = (&[Designator], &Initializer)> + '_ {
        self.items.iter().filter_map(|item| match item {
            InitItem::One(d, i) => Some((d.as_slice(), i)),
            InitItem::Numbers(_) => None,
        })
    }

    /// [`InitList::trees`], to change them in place.
    pub fn trees_mut(&mut self) -> impl Iterator<Item = &mut Initializer> + '_ {
        self.items.iter_mut().filter_map(|item| match item {
            InitItem::One(_, i) => Some(i),
            InitItem::Numbers(_) => None,
        })
    }
}

/// A run of number literals that a list's elements are, without designators: `1, -2, 0x1F,
/// 2.5e-3f`. Each element is one literal with at most a `-` right before it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NumberRun {
    tu: u32,
    len: usize,
    /// The elements, [`CHUNK`] to a vector but the last: a run grows without the doubling
    /// of one vector, whose spare half would be most of the memory at its peak.
    chunks: Vec<Vec<NumberElement>>,
}

/// Elements to a chunk of [`NumberRun::chunks`] (1 MiB).
const CHUNK: usize = 1 << 16;

/// One element of a run, 14 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed)]
struct NumberElement {
    /// The integer's value, or the bits of the floating value.
    value: u64,
    /// Where the element's text starts (its `-`, if any).
    start: u32,
    form: NumberForm,
}

/// The length of an element's text (low byte) and what kind of literal it is (high byte:
/// [`NumberForm::NEGATED`], [`NumberForm::FLOAT`], then the suffix and radix of an integer
/// or the width of a floating literal).
#[derive(Clone, Copy, Debug, PartialEq)]
struct NumberForm(u16);

impl NumberForm {
    const NEGATED: u16 = 1 << 8;
    const FLOAT: u16 = 1 << 9;
    /// Integers: `u`; floating literals: `f`.
    const UNSIGNED_OR_SINGLE: u16 = 1 << 10;
    /// Integers: the number of `l`s (0-2); floating literals: 1 for `l`.
    const LONGS_SHIFT: u16 = 11;
    /// Integers: 0 for decimal, 1 octal, 2 hexadecimal or binary.
    const RADIX_SHIFT: u16 = 13;

    fn len(self) -> u32 {
        (self.0 & 0xff) as u32
    }
    fn has(self, bit: u16) -> bool {
        self.0 & bit != 0
    }
    fn field(self, shift: u16) -> u16 {
        (self.0 >> shift) & 3
    }
}

/// A number literal as a run holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NumberLiteral {
    Int { value: u64, suffix: IntSuffix, radix: u32 },
    Float { value: f64, single: bool, long_double: bool },
}

impl NumberRun {
    pub fn new(tu: u32) -> NumberRun {
        NumberRun { tu, ..NumberRun::default() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds the element whose text is `text_len` bytes from `start` (the `-` included).
    /// `false`, and nothing added, when the run cannot hold it: text of 256 bytes or more.
    pub fn push(&mut self, literal: NumberLiteral, negated: bool, start: u32, text_len: usize) -> bool {
        let Ok(len) = u8::try_from(text_len) else { return false };
        let mut form = len as u16;
        if negated {
            form |= NumberForm::NEGATED;
        }
        let value = match literal {
            NumberLiteral::Int { value, suffix, radix } => {
                let radix_code = match radix {
                    10 => 0,
                    8 => 1,
                    16 => 2,
                    _ => return false,
                };
                if suffix.unsigned {
                    form |= NumberForm::UNSIGNED_OR_SINGLE;
                }
                form |= ((suffix.longs.min(2)) as u16) << NumberForm::LONGS_SHIFT;
                form |= radix_code << NumberForm::RADIX_SHIFT;
                value
            }
            NumberLiteral::Float { value, single, long_double } => {
                form |= NumberForm::FLOAT;
                if single {
                    form |= NumberForm::UNSIGNED_OR_SINGLE;
                }
                if long_double {
                    form |= 1 << NumberForm::LONGS_SHIFT;
                }
                value.to_bits()
            }
        };
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(NumberElement { value, start, form: NumberForm(form) });
        }
        self.len += 1;
        true
    }

    /// Gives back what the last chunk reserved beyond the elements: the run is complete.
    pub fn shrink_to_fit(&mut self) {
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.shrink_to_fit();
        }
    }

    fn element(&self, k: usize) -> NumberElement {
        self.chunks[k / CHUNK][k % CHUNK]
    }

    /// The literal of element `k`, and whether a `-` negates it.
    pub fn literal(&self, k: usize) -> (NumberLiteral, bool) {
        let NumberElement { value, form, .. } = self.element(k);
        let literal = if form.has(NumberForm::FLOAT) {
            NumberLiteral::Float { value: f64::from_bits(value), single: form.has(NumberForm::UNSIGNED_OR_SINGLE), long_double: form.field(NumberForm::LONGS_SHIFT) == 1 }
        } else {
            let radix = [10, 8, 16][form.field(NumberForm::RADIX_SHIFT) as usize % 3];
            let suffix = IntSuffix { unsigned: form.has(NumberForm::UNSIGNED_OR_SINGLE), longs: form.field(NumberForm::LONGS_SHIFT) as u8 };
            NumberLiteral::Int { value, suffix, radix }
        };
        (literal, form.has(NumberForm::NEGATED))
    }

    /// The span of element `k`'s text, its `-` included.
    pub fn element_span(&self, k: usize) -> Span {
        let NumberElement { start, form, .. } = self.element(k);
        Span::new(self.tu, start, start + form.len())
    }

    /// From the first element's text to the last's.
    pub fn span(&self) -> Span {
        match self.len() {
            0 => Span::new(self.tu, 0, 0),
            n => self.element_span(0).to(self.element_span(n - 1)),
        }
    }

    /// Element `k` as the parser builds it: the literal, under a `Neg` when negated.
    pub fn expr(&self, k: usize) -> Expr {
        let (literal, negated) = self.literal(k);
        let span = self.element_span(k);
        let kind = match literal {
            NumberLiteral::Int { value, suffix, radix } => ExprKind::IntLit { value, suffix, radix },
            NumberLiteral::Float { value, single, long_double } => ExprKind::FloatLit { value, single, long_double },
        };
        if !negated {
            return Expr { kind, span };
        }
        // The `-` is one byte right before the literal: the lexer takes no space between.
        let operand = Expr { kind, span: Span::new(span.tu, span.lo + 1, span.hi) };
        Expr { kind: ExprKind::Unary { op: UnaryOp::Neg, operand: Box::new(operand) }, span }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_a_run_holds_comes_back_as_it_went_in() {
        let forms = [
            NumberLiteral::Int { value: 0, suffix: IntSuffix::default(), radix: 10 },
            NumberLiteral::Int { value: u64::MAX, suffix: IntSuffix { unsigned: true, longs: 2 }, radix: 16 },
            NumberLiteral::Int { value: 0o17, suffix: IntSuffix { unsigned: false, longs: 1 }, radix: 8 },
            NumberLiteral::Float { value: -0.0, single: true, long_double: false },
            NumberLiteral::Float { value: 2.5e-300, single: false, long_double: true },
            NumberLiteral::Float { value: f64::MAX, single: false, long_double: false },
        ];
        let mut run = NumberRun::new(3);
        for (k, literal) in forms.iter().enumerate() {
            assert!(run.push(*literal, k % 2 == 1, 10 * k as u32, 5 + k));
        }
        assert_eq!(run.len(), forms.len());
        for (k, literal) in forms.iter().enumerate() {
            assert_eq!(run.literal(k), (*literal, k % 2 == 1));
            assert_eq!(run.element_span(k), Span::new(3, 10 * k as u32, 10 * k as u32 + 5 + k as u32));
        }
        assert_eq!(run.span(), Span::new(3, 0, 60));
    }

    #[test]
    fn a_negated_element_is_a_neg_over_the_literal_after_its_minus() {
        let mut run = NumberRun::new(0);
        assert!(run.push(NumberLiteral::Int { value: 7, suffix: IntSuffix::default(), radix: 10 }, true, 4, 2));
        let e = run.expr(0);
        assert_eq!(e.span, Span::new(0, 4, 6));
        let ExprKind::Unary { op: UnaryOp::Neg, operand } = e.kind else { panic!("not a negation: {:?}", e.kind) };
        assert!(matches!(operand.kind, ExprKind::IntLit { value: 7, .. }));
        assert_eq!(operand.span, Span::new(0, 5, 6));
    }

    #[test]
    fn a_run_refuses_what_it_cannot_hold() {
        let mut run = NumberRun::new(0);
        assert!(!run.push(NumberLiteral::Float { value: 1.0, single: false, long_double: false }, false, 0, 256));
        assert!(!run.push(NumberLiteral::Int { value: 1, suffix: IntSuffix::default(), radix: 2 }, false, 0, 3));
        assert!(run.is_empty());
    }

    #[test]
    fn a_list_counts_and_indexes_a_run_element_by_element() {
        let int = |v| NumberLiteral::Int { value: v, suffix: IntSuffix::default(), radix: 10 };
        let mut run = NumberRun::new(0);
        for k in 0..3 {
            assert!(run.push(int(k + 1), false, 10 + 3 * k as u32, 1));
        }
        let first = Initializer::Expr(Expr { kind: ExprKind::Ident("x".into()), span: Span::new(0, 1, 2) });
        let list = InitList::new(vec![InitItem::One(vec![], first), InitItem::Numbers(run)], Span::new(0, 0, 20));
        assert_eq!(list.len(), 4);
        assert_eq!(list.trees().count(), 1);
        let values: Vec<String> = list.iter().map(|(_, i)| match &*i {
            Initializer::Expr(Expr { kind: ExprKind::Ident(s), .. }) => s.clone(),
            Initializer::Expr(Expr { kind: ExprKind::IntLit { value, .. }, .. }) => value.to_string(),
            other => panic!("unexpected element {other:?}"),
        }).collect();
        assert_eq!(values, ["x", "1", "2", "3"]);
        assert!(matches!(list.iter().nth(2).map(|(_, i)| i.into_owned()), Some(Initializer::Expr(Expr { kind: ExprKind::IntLit { value: 2, .. }, .. }))));
        assert!(list.iter().nth(4).is_none());
    }
}
