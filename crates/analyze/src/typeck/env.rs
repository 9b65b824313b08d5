//! The declarations of a program: classes, their fields and methods, top-level methods.

use super::Ty;
use diag::Diagnostic;
use front::ast::{self, ClauseBody, ClauseKind, MethodKind};
use front::span::Span;
use std::collections::HashMap;

/// What a call needs to know of a method, function, predicate or constructor.
#[derive(Clone, Debug)]
pub struct Sig {
    pub params: Vec<Ty>,
    pub ret: Ty,
    pub given: Vec<(String, Ty)>,
    pub yields: Vec<(String, Ty)>,
}

#[derive(Clone, Debug, Default)]
pub struct ClassEnv {
    pub fields: HashMap<String, (Ty, Span)>,
    /// Several entries: overloads, which the checker does not resolve (no arity check).
    pub methods: HashMap<String, Vec<Sig>>,
    pub ctors: Vec<Sig>,
}

#[derive(Clone, Debug, Default)]
pub struct Env {
    pub classes: HashMap<String, ClassEnv>,
    pub globals: HashMap<String, Vec<Sig>>,
    /// The program declares things the checker does not model (opaque declarations such as
    /// `enum` or VeyMont's, global fields): unresolved names are then not errors.
    pub open: bool,
    /// The names of the program's `enum`s: `E.C` has type `E`.
    pub enums: std::collections::HashSet<String>,
    pub diags: Vec<Diagnostic>,
}

pub fn sig(m: &ast::Method, class: Option<&str>) -> Sig {
    let mut given = Vec::new();
    let mut yields = Vec::new();
    for c in &m.prefix.clauses {
        if let ClauseBody::Decl(t, n) = &c.body {
            match c.kind {
                ClauseKind::Given => given.push((n.name.clone(), Ty::of(t))),
                ClauseKind::Yields => yields.push((n.name.clone(), Ty::of(t))),
                _ => {}
            }
        }
    }
    let is_ctor = m.kind.is_ctor();
    Sig {
        params: m.params.iter().map(|p| Ty::of(&p.ty)).collect(),
        ret: if is_ctor {
            class.map_or(Ty::Unknown, |c| Ty::Class(c.to_string()))
        } else {
            Ty::of(&m.ret)
        },
        given,
        yields,
    }
}

impl Env {
    pub fn collect(prog: &ast::Program) -> Env {
        let mut env = Env::default();
        for item in &prog.items {
            match item {
                ast::Item::Class(c) => {
                    // A class declared twice is not an error here: VerCors verifies a program
                    // whose two files both declare `Counter` (its LoopPVL example), and a
                    // program of several files reaches us as one. The first one is used.
                    if env.classes.contains_key(&c.name.name) {
                        continue;
                    }
                    if !c.type_params.is_empty() {
                        // Generic classes: members' types mention parameters we do not model.
                        env.open = true;
                    }
                    let ce = env.class(c);
                    env.classes.insert(c.name.name.clone(), ce);
                }
                ast::Item::Method(m) => {
                    env.globals.entry(m.name.name.clone()).or_default().push(sig(m, None));
                }
                ast::Item::Adt(a) => {
                    if a.is_enum {
                        env.enums.insert(a.name.name.clone());
                    }
                    env.open = true;
                }
                ast::Item::Field(_) | ast::Item::Opaque(_) => env.open = true,
            }
        }
        env
    }

    fn class(&mut self, c: &ast::Class) -> ClassEnv {
        let mut ce = ClassEnv::default();
        for m in &c.members {
            match m {
                ast::Member::Field(f) => {
                    for n in &f.names {
                        if let Some((_, first)) = ce.fields.get(&n.name) {
                            let first = *first;
                            self.duplicate(n, first, "field");
                            continue;
                        }
                        ce.fields.insert(n.name.clone(), (Ty::of(&f.ty), n.span));
                    }
                }
                ast::Member::Method(m) => {
                    // Compared ignoring case: VerCors accepts `cartTree` in `class CartTree`
                    // (its example suite expects it to verify) but rejects `Name2` in `Name1`.
                    if m.kind == MethodKind::CtorV1
                        && !m.name.name.eq_ignore_ascii_case(&c.name.name)
                    {
                        self.diags.push(
                            Diagnostic::error(
                                "V-CONSTRUCTOR-NAME",
                                format!(
                                    "the constructor `{}` is not named after its class `{}`",
                                    m.name.name, c.name.name
                                ),
                            )
                            .with_primary(m.name.span, "a constructor must have the class's name")
                            .with_secondary(c.name.span, "in this class")
                            .with_help(format!(
                                "rename it `{}`, or give it a return type if it is a method",
                                c.name.name
                            )),
                        );
                    }
                    let s = sig(m, Some(&c.name.name));
                    if !m.kind.is_ctor() {
                        ce.methods.entry(m.name.name.clone()).or_default().push(s);
                    } else {
                        ce.ctors.push(s);
                    }
                }
            }
        }
        self.lock_constructor(c);
        ce
    }

    /// VerCors rejects a class with a lock invariant and no constructor (its example
    /// `basic/RequireConstructor.pvl` expects an error): the invariant is established where the
    /// object is made, and a class whose invariant speaks of its fields says in a constructor
    /// what they start as. Only a `resource lock_invariant()` counts, as the encoder reads it.
    fn lock_constructor(&mut self, c: &ast::Class) {
        let methods = || {
            c.members.iter().filter_map(|m| match m {
                ast::Member::Method(m) => Some(m),
                ast::Member::Field(_) => None,
            })
        };
        if methods().any(|m| m.kind.is_ctor()) {
            return;
        }
        let Some(inv) = methods()
            .find(|m| m.name.name == "lock_invariant" && m.is_predicate() && m.params.is_empty())
        else {
            return;
        };
        self.diags.push(
            Diagnostic::error(
                "V-LOCK-CONSTRUCTOR",
                format!(
                    "the class `{}` has a lock invariant but no constructor to establish it",
                    c.name.name
                ),
            )
            .with_primary(c.name.span, "this class declares no constructor")
            .with_secondary(inv.name.span, "the lock invariant that a constructor must establish")
            .with_help(format!(
                "declare a constructor `{}() {{ ... }}` that sets the fields so that the invariant holds",
                c.name.name
            )),
        );
    }

    fn duplicate(&mut self, name: &ast::Ident, first: Span, what: &str) {
        self.diags.push(
            Diagnostic::error(
                "V-DUPLICATE",
                format!("the {what} `{}` is declared twice", name.name),
            )
            .with_primary(name.span, "declared again here")
            .with_secondary(first, "first declared here")
            .with_help("rename or remove one of the two declarations"),
        );
    }

    /// The methods called `name` visible from `class` (its own, else the top-level ones).
    pub fn methods(&self, class: Option<&str>, name: &str) -> Option<&Vec<Sig>> {
        class
            .and_then(|c| self.classes.get(c))
            .and_then(|c| c.methods.get(name))
            .or_else(|| self.globals.get(name))
    }
}
