//! Sweep candidates: a par block with the next par block of the same statement list; a CUDA
//! kernel with the kernel launched after it.

use crate::sweep::{method_of, Candidates, Choice, SweepSite};
use analyze::sites::Site;
use front::ast::*;
use front::visit::walk_stmts;

/// Two kernels from the site on, when a later one exists.
pub fn candidates(s: &SweepSite) -> Candidates {
    // A CUDA kernel is fused with the kernel launched after it (the launches, not the kernel
    // form, say which: the step refuses with A601 when none is).
    if front::looks_like_cuda(s.src) {
        let note = "a CUDA kernel: fused with the kernel launched after it";
        return Ok(vec![Choice::new(vec![("kernels", "2".into())], Some(note.to_string()))]);
    }
    match next_par(&s.parsed.program, s.site) {
        Some(between) => {
            let note = between.then(|| "statements lie between the blocks".to_string());
            Ok(vec![Choice::new(vec![("kernels", "2".into())], note)])
        }
        None => Err("no later par block in the same statement list".into()),
    }
}

/// `Some(statements_between)` when a later statement of the list holding the site's par
/// block is a par block.
fn next_par(program: &Program, site: &Site) -> Option<bool> {
    let m = method_of(program, site)?;
    let MethodBody::Block(b) = &m.body else { return None };
    let mut lists: Vec<&[Stmt]> = vec![b.stmts.as_slice()];
    for s in &b.stmts {
        walk_stmts(s, &mut |st| {
            if let StmtKind::Block(bb) = &st.kind {
                lists.push(bb.stmts.as_slice());
            }
        });
    }
    for list in lists {
        let Some(i) = list.iter().position(|s| s.span.same_place(site.span)) else { continue };
        let rest = &list[i + 1..];
        return rest.iter().position(|s| matches!(s.kind, StmtKind::Par(_))).map(|j| j > 0);
    }
    None
}
