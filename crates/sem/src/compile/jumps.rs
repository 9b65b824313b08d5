//! `goto L;` and `label L;`: a `goto` becomes a jump to the label's instruction, leaving the
//! branches and loops between them ([`Instr::Goto`]). The compiler keeps the path of
//! constructs around the statement it compiles; a `goto` may jump to a label in its own
//! construct or in one around it, never into a construct, and never out of a `par` arm, an
//! `atomic` or `invariant` block, a lock region or a `vec` block (those become `Unsupported`).

use super::*;

/// One construct on the path: a fresh id, and how a `goto` leaves it (`None`: it cannot).
type Level = (u32, Option<Exit>);

#[derive(Default)]
pub(super) struct Jumps {
    path: Vec<Level>,
    next: u32,
    /// Name, instruction, path.
    labels: Vec<(String, usize, Vec<Level>)>,
    /// Instruction index, label name, path.
    gotos: Vec<(usize, String, Vec<Level>)>,
}

impl Jumps {
    /// The statements compiled next are inside a new construct.
    pub(super) fn enter(&mut self, exit: Option<Exit>) {
        self.next += 1;
        self.path.push((self.next, exit));
    }

    pub(super) fn leave(&mut self) {
        self.path.pop();
    }

    /// The instructions from `pc` on are dropped: so are their labels and `goto`s.
    pub(super) fn forget_from(&mut self, pc: usize) {
        self.labels.retain(|l| l.1 < pc);
        self.gotos.retain(|g| g.0 < pc);
    }
}

/// The name in `goto L;` / `label L;`.
fn target_name(o: &Opaque) -> String {
    let body = o.text.strip_prefix(o.keyword.as_str()).unwrap_or("");
    body.trim().trim_end_matches(';').trim().to_string()
}

impl<'a> Compiler<'a> {
    pub(super) fn label_stmt(&mut self, o: &Opaque) {
        let name = target_name(o);
        let pc = self.code.len();
        self.jumps.labels.push((name, pc, self.jumps.path.clone()));
    }

    pub(super) fn goto_stmt(&mut self, o: &Opaque) {
        let name = target_name(o);
        let at = self.code.len();
        self.code.push(Instr::Goto { pc: 0, exits: Vec::new(), span: o.span });
        self.jumps.gotos.push((at, name, self.jumps.path.clone()));
    }

    /// Point each `goto` of the method just compiled at its label, or make it `Unsupported`.
    pub(super) fn resolve_gotos(&mut self) {
        let jumps = std::mem::take(&mut self.jumps);
        for (at, name, from) in &jumps.gotos {
            let Instr::Goto { span, .. } = self.code[*at] else { continue };
            let found: Vec<&(String, usize, Vec<Level>)> =
                jumps.labels.iter().filter(|l| l.0 == *name).collect();
            let target = match found[..] {
                [] => Err(format!("`goto {name}` without a `label {name}` in the method")),
                [(_, pc, to)] => {
                    if to.len() > from.len() || from[..to.len()] != to[..] {
                        Err(format!("`goto {name}` into a block that does not contain it"))
                    } else {
                        let exits: Option<Vec<Exit>> =
                            from[to.len()..].iter().rev().map(|l| l.1).collect();
                        match exits {
                            Some(exits) => Ok((*pc, exits)),
                            None => Err(format!(
                                "`goto {name}` out of a `par`, `atomic`, `invariant`, lock or \
                                 `vec` block"
                            )),
                        }
                    }
                }
                _ => Err(format!("`goto {name}` with several `label {name}`")),
            };
            self.code[*at] = match target {
                Ok((pc, exits)) => Instr::Goto { pc, exits, span },
                Err(why) => Instr::Unsupported(why, span),
            };
        }
    }
}
