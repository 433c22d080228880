//! What each device's part of a split kernel (`opt::partition`) reaches along the split dim,
//! told in words for explain: per array, whether a part writes only its own block, how far its
//! reads reach past the block (the halo the neighbouring devices send), or the whole array.
//! The runtime itself evaluates the sections per part (`access::launch_sections`); this is the
//! same analysis read symbolically.

use crate::analysis::access::{AccessKind, IndexForm, summarize};
use crate::ir::{Kernel, KernelPartition};

/// How the references of one kind (reads or writes) of one array reach along the split dim.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Reach {
    /// No reference of that kind.
    #[default]
    None,
    /// Every reference has the split variable alone in subscript `.0`, offset by `.1..=.2`.
    Offsets(usize, i64, i64),
    /// Every reference has the variable in one subscript, some scaled (a linearised
    /// `a[i*n + j]`): bounded by the block, but the reach is computed per launch.
    Scaled,
    /// A reference the block does not bound: irregular, or not indexed by the split variable.
    Unbounded,
}

impl Reach {
    /// The reach with one more reference at `place`.
    fn add(self, place: Place) -> Reach {
        match (self, place) {
            (Reach::Unbounded, _) | (_, Place::Unbounded) => Reach::Unbounded,
            (Reach::None, Place::Offset(k, c)) => Reach::Offsets(k, c, c),
            (Reach::Offsets(k0, lo, hi), Place::Offset(k, c)) if k == k0 => Reach::Offsets(k, lo.min(c), hi.max(c)),
            _ => Reach::Scaled,
        }
    }
}

/// Where a reference has the split variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Alone with coefficient 1 in subscript `.0`, plus the constant `.1`.
    Offset(usize, i64),
    /// In one subscript, scaled or with params (a linearised index).
    Scaled,
    /// Nowhere, in several subscripts, or in an irregular one.
    Unbounded,
}

/// One line per array param of `kernel`: what a device's part reads and writes of it.
pub fn split_sections_text(kernel: &Kernel, partition: &KernelPartition) -> Vec<String> {
    let var = kernel.space[partition.dim as usize].var;
    let var_name = &kernel.body.locals[var].name;
    let summary = summarize(kernel);
    let mut lines = Vec::new();
    for (index, param) in kernel.params.iter().enumerate() {
        if !param.kind.is_indexed() {
            continue;
        }
        let (mut reads, mut writes) = (Reach::default(), Reach::default());
        for access in summary.of_param(index as u32) {
            let place = split_subscript(&access.indices, var);
            if access.kind != AccessKind::Write {
                reads = reads.add(place);
            }
            if access.kind != AccessKind::Read {
                writes = writes.add(place);
            }
        }
        let mut parts = Vec::new();
        match writes {
            Reach::None => {}
            Reach::Offsets(k, 0, 0) => parts.push(format!("writes only its block of {var_name} (subscript {k})")),
            Reach::Offsets(k, lo, hi) => parts.push(format!("writes its block of {var_name} shifted by {lo}..{hi} (subscript {k})")),
            Reach::Scaled => parts.push(format!("writes the range its block of {var_name} selects (computed per launch)")),
            Reach::Unbounded => parts.push("writes elements its block does not bound: the launch runs whole on one device".to_string()),
        }
        if reads != Reach::None {
            parts.push(match reads {
                Reach::Offsets(_, 0, 0) => format!("reads only its block of {var_name}"),
                Reach::Offsets(k, lo, hi) => format!(
                    "reads its block of {var_name} and a halo of {} before and {} after (subscript {k}), which the neighbouring devices send when they wrote it",
                    // (In i128: an offset may be `i64::MIN`.)
                    (-(lo as i128)).max(0),
                    hi.max(0)
                ),
                Reach::Scaled => format!("reads the range its block of {var_name} selects (computed per launch; what other devices wrote there moves device to device)"),
                Reach::None | Reach::Unbounded => "reads the whole array: each device's copy is made current first (every part another device wrote since)".to_string(),
            });
        }
        if !parts.is_empty() {
            lines.push(format!("{}: each device {}", param.name, parts.join("; ")));
        }
    }
    lines
}

/// Where the references' subscripts have `var`: `a[i + 1][j]` with `var = i` is
/// `Place::Offset(0, 1)`, `a[i * n + j]` is `Place::Scaled`.
fn split_subscript(indices: &[IndexForm], var: crate::ir::Handle<crate::ir::Local>) -> Place {
    let mut found = Place::Unbounded;
    for (k, index) in indices.iter().enumerate() {
        let Some(affine) = index.as_affine() else { return Place::Unbounded };
        let mentions: Vec<_> = affine.terms.iter().filter(|(_, m)| m.var == Some(var)).collect();
        if mentions.is_empty() {
            continue;
        }
        if found != Place::Unbounded {
            return Place::Unbounded;
        }
        found = match mentions.as_slice() {
            [(1, m)] if m.params.is_empty() && affine.terms.len() == 1 => Place::Offset(k, affine.constant),
            _ => Place::Scaled,
        };
    }
    found
}
