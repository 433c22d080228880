//! Lowering of the executable directives that act on the runtime itself: `init`, `shutdown`
//! and `set` become regions whose args carry their `device_num`, `default_async` and `if`
//! values (see `runtime::directives` for what the runtime does with them).

use super::{push_arg, Lowerer};
use crate::diag::Diagnostic;
use crate::front::ast::{ClauseKind, Directive, DirectiveKind, Stmt};
use crate::front::sema::Sema;
use crate::ir::{HostArg, HostArgKind, RegionKind, RuntimeDirective, RuntimeOp};

impl Lowerer<'_> {
    pub(super) fn runtime_directive(&mut self, stmt: &Stmt, d: &Directive, sema: &Sema, function: &str) {
        let op = match d.kind {
            DirectiveKind::Init => RuntimeOp::Init,
            DirectiveKind::Shutdown => RuntimeOp::Shutdown,
            _ => RuntimeOp::Set,
        };
        let mut args = Vec::new();
        let mut directive = RuntimeDirective { op, device_types: Vec::new(), device_num: None, default_async: None };
        let mut if_arg = None;
        for c in &d.clauses {
            let int_arg = |this: &Self, args: &mut Vec<HostArg>, e: &crate::front::ast::Expr| {
                push_arg(args, HostArg { c_expr: format!("({})", this.text(e.span)), kind: HostArgKind::Int, size_expr: None })
            };
            match &c.kind {
                ClauseKind::DeviceType(names) => directive.device_types.extend(names.iter().cloned()),
                ClauseKind::DeviceNum(e) => {
                    if sema.const_eval(e).is_some_and(|v| v < 0) {
                        self.diags.push(
                            Diagnostic::error(e.span, "a device number cannot be negative").with_help("devices are numbered from 0"),
                        );
                    }
                    directive.device_num = Some(int_arg(self, &mut args, e));
                }
                ClauseKind::DefaultAsync(e) => directive.default_async = Some(int_arg(self, &mut args, e)),
                ClauseKind::If(e) => if_arg = Some(int_arg(self, &mut args, e)),
                _ => {}
            }
        }
        self.push_region(stmt.span, None, RegionKind::Runtime(directive), args, if_arg, function);
    }
}
