//! What the runtime does for the directives that act on it rather than on data (`init`,
//! `shutdown`, `set`) and for the data clauses that move nothing (`attach`, `detach`,
//! `no_create`, ...) or that start a device copy zeroed (`create(zero: ...)`).
//!
//! There is one device type (the GPU, or the simulator standing for it), opened when the
//! program starts and kept until it ends: `init` and `shutdown` only check their device number
//! (`shutdown` also waits for the launches in flight), `set device_num` selects the current
//! device as `acc_set_device_num` does, and `set default_async` records the queue that `async`
//! without an argument means (launches run in order, so queues only name them).

use super::{DataClauseKind, DataSection, Diagnostic, Region, Runtime, RuntimeError, YosegiArg};
use crate::ir::{RuntimeDirective, RuntimeOp};

/// Device type names (as `device_type(...)` writes them) that mean the device Yosegi runs on.
fn names_our_device(name: &str) -> bool {
    matches!(
        name,
        "*" | "nvidia" | "acc_device_nvidia" | "default" | "acc_device_default" | "not_host" | "acc_device_not_host"
    )
}

impl Runtime {
    /// `init`, `shutdown` or `set` (their `if` clause was true).
    pub(super) fn runtime_directive(
        &mut self,
        region: &Region,
        directive: &RuntimeDirective,
        args: &[YosegiArg],
    ) -> Result<(), RuntimeError> {
        let ours = directive.device_types.is_empty() || directive.device_types.iter().any(|t| names_our_device(t));
        if let Some(a) = directive.device_num
            && ours
        {
            let num = args[a as usize].i;
            let count = self.device_count() as i64;
            if num < 0 || num >= count {
                let name = format!("{:?}", directive.op).to_lowercase();
                return Err(RuntimeError::fault(
                    Diagnostic::error(
                        region.span,
                        format!(
                            "`{name}` names device {num}: there {} {count} device{} of this type, numbered from 0",
                            if count == 1 { "is" } else { "are" },
                            if count == 1 { "" } else { "s" }
                        ),
                    )
                    .with_help("give a device number below acc_get_num_devices(acc_device_nvidia)"),
                ));
            }
            if directive.op == RuntimeOp::Set {
                self.set_current_device(num as usize);
            }
        }
        if let Some(a) = directive.default_async {
            let queue = i32::try_from(args[a as usize].i).unwrap_or(i32::MAX);
            self.acc_set_default_async("set default_async", queue)?;
        }
        if directive.op == RuntimeOp::Shutdown && ours {
            self.synchronize_devices()?;
        }
        Ok(())
    }

    /// The queue `async` without an argument means, as `set default_async` (or
    /// `acc_set_default_async`) last left it.
    pub fn default_async(&self) -> i64 {
        i64::from(self.api.default_async())
    }

    /// The entry action of a clause that moves no data, or `None` for one that does (copies,
    /// `create`, `present`, ...), which the caller handles. `attach(p)`: the tracked object
    /// `p` points into gets a device copy (its data moves when a launch reads it; kernels
    /// translate pointers per launch, so there is nothing else to attach). `detach`,
    /// `no_create`, `device_resident`, `link`: nothing (launches move what they touch).
    pub(super) fn enter_without_copy(&mut self, section: &DataSection, args: &[YosegiArg]) -> Option<()> {
        match section.kind {
            DataClauseKind::Attach => {
                let ptr = args[section.base as usize].ptr as u64;
                let device = self.current_device;
                if ptr != 0
                    && let Some(start) = self.registry.find(ptr)
                    && let Some((copies, mut t)) = self.transfer_for(start)
                {
                    copies.ensure_allocated(device, &mut t);
                }
                Some(())
            }
            DataClauseKind::Detach | DataClauseKind::NoCreate | DataClauseKind::DeviceResident | DataClauseKind::Link => Some(()),
            _ => None,
        }
    }
}

/// Whether a clause moves nothing at a region's exit (see [`Runtime::enter_without_copy`]).
pub(super) fn exits_without_copy(kind: DataClauseKind) -> bool {
    matches!(
        kind,
        DataClauseKind::Attach | DataClauseKind::Detach | DataClauseKind::NoCreate | DataClauseKind::DeviceResident | DataClauseKind::Link
    )
}
