//! Viper names: one global namespace for fields, methods, functions and predicates, and
//! method-local names (parameters, locals, labels) that must avoid it too.
//!
//! Viper has a single namespace: a field and a method called alike, two overloads of one PVL
//! method, or a local named like a member are "duplicate identifiers" (or "ambiguous calls") to
//! Silicon. Every global name is registered once, in declaration order (prelude words, then
//! fields, then members), and a clash gets a numbered suffix, so the mangling is deterministic.
//! Diagnostics are mapped back through spans, so the user's identifiers are what they name.

use super::Encoder;
use crate::ast::{Exp, Origin, Role, Stmt, StmtKind};
use front::ast::{self, Expr};
use front::visit;

const VIPER_RESERVED: &[&str] = &[
    "result",
    "old",
    "new",
    "acc",
    "perm",
    "write",
    "none",
    "wildcard",
    "forall",
    "exists",
    "function",
    "method",
    "var",
    "field",
    "predicate",
    "domain",
    "axiom",
    "returns",
    "requires",
    "ensures",
    "invariant",
    "while",
    "if",
    "else",
    "elseif",
    "label",
    "goto",
    "fold",
    "unfold",
    "unfolding",
    "inhale",
    "exhale",
    "assert",
    "assume",
    "in",
    "let",
    "Seq",
    "Set",
    "Multiset",
    "Int",
    "Bool",
    "Ref",
    "Perm",
    "true",
    "false",
    "null",
    "import",
    "apply",
    "package",
    "fresh",
    "constraining",
    "union",
    "intersection",
    "setminus",
    "subset",
    "decreases",
    "forperm",
    "epsilon",
    "define",
    "Rational",
    "this",
    "aloc",
    "vct_stride",
    "loc",
    "alen",
    "anull",
    "loc_arr",
    "loc_idx",
    "Arr",
    "int_val",
    "bool_val",
    "arr_val",
    "new_int_array",
    "new_bool_array",
    "new_int_matrix",
    "refute",
    "assuming",
    "Map",
    "range",
    "domain",
    "trigger",
    "VctTuple",
    "vct_tuple",
    "vct_fst",
    "vct_snd",
];

/// Parameter names of the prelude's and the generated helpers' methods and functions (`n`, `m`,
/// `r` of `new_int_matrix`, `c`, `v`, `k` of `vct_stride`, `t` of the lock helpers, …). Viper
/// reports a member named like one of them as a duplicate identifier, so members yield them.
const HELPER_LOCALS: &[&str] = &["a", "c", "i", "k", "m", "n", "r", "t", "v"];

impl Encoder<'_> {
    /// A fresh method-local Viper identifier based on a PVL name: distinct from the method's
    /// other names, from every global name and from Viper's keywords and prelude.
    pub fn fresh_name(&mut self, base: &str) -> String {
        // CUDA's built-in variables are one name with a dot (`threadIdx.x`); Viper's
        // identifiers have none.
        let base = base.replace('.', "_");
        let base = if VIPER_RESERVED.contains(&base.as_str()) { format!("{base}_") } else { base };
        let mut n = base.clone();
        let mut k = 1;
        while self.used.contains(&n) || self.globals.contains(&n) {
            n = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(n.clone());
        n
    }

    /// Register a global Viper name (field or member) based on `base`; a taken name gets the
    /// first free numbered suffix.
    pub(super) fn global_name(&mut self, base: String) -> String {
        let base = if VIPER_RESERVED.contains(&base.as_str()) { format!("{base}_") } else { base };
        let mut n = base.clone();
        let mut k = 1;
        while self.globals.contains(&n) || HELPER_LOCALS.contains(&n.as_str()) {
            n = format!("{base}_{k}");
            k += 1;
        }
        self.globals.insert(n.clone());
        n
    }

    /// Remember that the Viper identifier `viper` stands for the PVL name `pvl`, for messages.
    pub(super) fn record_name(&mut self, viper: &str, pvl: &str) {
        if viper == pvl {
            return;
        }
        let e = self.pvl_names.entry(viper.to_string()).or_insert_with(|| Some(pvl.to_string()));
        if e.as_deref() != Some(pvl) {
            *e = None;
        }
    }

    /// The PVL name a Viper identifier stands for, for messages (itself when unknown or
    /// ambiguous).
    pub fn pvl_name(&self, viper: &str) -> String {
        match self.pvl_names.get(viper) {
            Some(Some(p)) => p.clone(),
            _ => viper.to_string(),
        }
    }

    /// The unmangled Viper name of a member (the base that `global_name` starts from).
    pub fn member_name(&self, class: Option<&str>, name: &str) -> String {
        match class {
            Some(c) => format!("{}{c}_{name}", self.opts.prefix),
            None => format!("{}{name}", self.opts.prefix),
        }
    }

    /// The Viper field of a PVL field (registered by `name_fields`).
    pub fn field_name(&self, class: &str, f: &str) -> String {
        self.field_names
            .get(&(class.to_string(), f.to_string()))
            .cloned()
            .unwrap_or_else(|| format!("{}{class}_{f}", self.opts.prefix))
    }

    /// Register every field's Viper name; fields come first so that they keep their plain
    /// `Class_field` names and members yield on a clash.
    pub(super) fn name_fields(&mut self, prog: &ast::Program) {
        for item in &prog.items {
            let ast::Item::Class(c) = item else { continue };
            for m in &c.members {
                let ast::Member::Field(f) = m else { continue };
                for n in &f.names {
                    let key = (c.name.name.clone(), n.name.clone());
                    if self.field_names.contains_key(&key) {
                        continue;
                    }
                    let v = self.global_name(format!("{}{}_{}", self.opts.prefix, key.0, key.1));
                    self.record_name(&v, &key.1);
                    self.field_names.insert(key, v);
                }
            }
        }
    }

    /// Pick among the overloads of a PVL member: by the number of arguments, then by the
    /// arguments' types (`Type`'s `==` is structural). `None` when no overload fits or several
    /// do; declarations with the same parameter types are refused in `collect_method`.
    pub(super) fn pick_overload(
        &self,
        class: &str,
        name: &str,
        args: &[Expr],
    ) -> Option<super::Callable> {
        let all = self.callables.get(&(class.to_string(), name.to_string()))?;
        if let [one] = all.as_slice() {
            return Some(one.clone());
        }
        let by_arity: Vec<&super::Callable> =
            all.iter().filter(|c| c.params.len() == args.len()).collect();
        if let [one] = by_arity.as_slice() {
            return Some((*one).clone());
        }
        let tys: Vec<Option<ast::Type>> = args.iter().map(|a| self.type_of(a)).collect();
        let fits: Vec<&&super::Callable> = by_arity
            .iter()
            .filter(|c| c.params.iter().zip(&tys).all(|(p, t)| t.as_ref() == Some(p)))
            .collect();
        match fits.as_slice() {
            [one] => Some((**one).clone()),
            _ => None,
        }
    }

    /// Viper parameters cannot be assigned, PVL parameters can: a parameter the body assigns
    /// is copied into a local of its own, which the body uses from then on (the contract,
    /// encoded before, keeps reading the parameter, i.e. the value passed in).
    pub(super) fn copy_assigned_params(
        &mut self,
        m: &ast::Method,
        b: &ast::Block,
        out: &mut Vec<Stmt>,
    ) -> super::R<()> {
        let mut assigned: Vec<&str> = Vec::new();
        for s in &b.stmts {
            visit::walk_stmts(s, &mut |x| {
                let target = match &x.kind {
                    ast::StmtKind::Assign { target, .. }
                    | ast::StmtKind::CompoundAssign { target, .. }
                    | ast::StmtKind::IncDec { target, .. } => target,
                    _ => return,
                };
                if let ast::ExprKind::Name(id) = &target.kind {
                    assigned.push(id.name.as_str());
                }
            });
        }
        for p in &m.params {
            if !assigned.contains(&p.name.name.as_str()) {
                continue;
            }
            let Some(param) = self.lookup(&p.name.name).map(|l| l.viper.clone()) else {
                continue;
            };
            let v = self.declare(&p.name.name, &p.ty, p.name.span)?;
            out.push(Stmt::new(
                StmtKind::Assign(Exp::var(v), Exp::var(param)),
                Origin::new(Role::Synthetic, Some(p.name.span)),
            ));
        }
        Ok(())
    }
}

/// The expression a pure function's statement body returns, when the body is a chain of `if`s
/// and `return`s: `if (c) { return a; } return b;` is `c ? a : b`. Anything else (locals,
/// loops, assertions, a path without `return`) is `None`, and the function is refused.
pub(super) fn return_chain(ss: &[ast::Stmt]) -> Option<Expr> {
    use ast::StmtKind as P;
    let (first, rest) = ss.split_first()?;
    match &first.kind {
        P::Return(Some(e)) => Some(e.clone()),
        P::Block(b) if rest.is_empty() => return_chain(&b.stmts),
        P::Ghost(g) if rest.is_empty() => return_chain(std::slice::from_ref(g)),
        P::If { cond, then, els } => {
            let t = return_chain(std::slice::from_ref(then))?;
            let e = match els {
                Some(e) => return_chain(std::slice::from_ref(e))?,
                None => return_chain(rest)?,
            };
            let span = first.span;
            Some(Expr::new(
                ast::ExprKind::Cond(Box::new(cond.clone()), Box::new(t), Box::new(e)),
                span,
            ))
        }
        _ => None,
    }
}

/// The first `yields` result of `m` that `e` reads, if any (a quantifier binding the same name
/// hides it: such an `e` is refused, which only costs a rename).
pub(super) fn yields_read<'e>(m: &ast::Method, e: &'e Expr) -> Option<&'e ast::Ident> {
    let yields: Vec<&str> = m
        .prefix
        .clauses
        .iter()
        .filter_map(|c| match (&c.kind, &c.body) {
            (ast::ClauseKind::Yields, ast::ClauseBody::Decl(_, n)) => Some(n.name.as_str()),
            _ => None,
        })
        .collect();
    let mut found = None;
    visit::walk_expr(e, &mut |x| {
        if let ast::ExprKind::Name(id) = &x.kind {
            if found.is_none() && yields.contains(&id.name.as_str()) {
                found = Some(id);
            }
        }
    });
    found
}
