//! Declarations and contracts: types, contract clauses, `gpuopt` annotations, and the program,
//! its classes, fields and methods.

use super::{comma_separated, Printer};
use crate::ast::*;

impl Printer {
    pub fn ty(&self, t: &Type) -> String {
        let mut out = String::new();
        // `int[M][N]` is Array(Array(int, N), M): print the outer dimension first.
        let mut dims = Vec::new();
        let mut base = t;
        while let TypeKind::Array(inner, size) = &base.kind {
            dims.push(size.as_deref());
            base = inner;
        }
        let word = match &base.kind {
            TypeKind::Int => "int",
            TypeKind::Boolean => "boolean",
            TypeKind::Bool => "bool",
            TypeKind::Void => "void",
            TypeKind::String => "string",
            TypeKind::Resource => "resource",
            TypeKind::Process => "process",
            TypeKind::Frac => "frac",
            TypeKind::ZFrac => "zfrac",
            TypeKind::Rational => "rational",
            TypeKind::Float32 => "float32",
            TypeKind::Float64 => "float64",
            TypeKind::Char => "char",
            TypeKind::Generic1(g, inner) => {
                out.push_str(g.as_str());
                out.push('<');
                out.push_str(&self.ty(inner));
                out.push('>');
                ""
            }
            TypeKind::Vector(a, n) => {
                out.push_str("vector<");
                out.push_str(&self.ty(a));
                if let Some(n) = n {
                    out.push_str(&format!(", {n}"));
                }
                out.push('>');
                ""
            }
            TypeKind::Map(a, b) | TypeKind::Tuple(a, b) => {
                out.push_str(if matches!(base.kind, TypeKind::Map(..)) {
                    "map<"
                } else {
                    "tuple<"
                });
                out.push_str(&self.ty(a));
                out.push_str(", ");
                out.push_str(&self.ty(b));
                out.push('>');
                ""
            }
            TypeKind::Class(name, args) => {
                out.push_str(&self.ident(name));
                if !args.is_empty() {
                    out.push('<');
                    comma_separated(&mut out, args, |out, a| out.push_str(&self.ty(a)));
                    out.push('>');
                }
                ""
            }
            TypeKind::Array(..) => "",
        };
        out.push_str(word);
        for d in dims {
            out.push('[');
            if let Some(e) = d {
                self.expr_into(&mut out, e);
            }
            out.push(']');
        }
        out
    }

    pub fn clause(&self, c: &Clause) -> String {
        let mut out = String::from(c.kind.keyword());
        match &c.body {
            ClauseBody::Expr(e) => {
                out.push(' ');
                self.expr_into(&mut out, e);
            }
            ClauseBody::Decl(t, n) => {
                out.push(' ');
                self.typed(&mut out, t, n);
            }
            ClauseBody::List(es) => {
                if !es.is_empty() {
                    out.push(' ');
                }
                comma_separated(&mut out, es, |out, e| self.expr_into(out, e));
            }
            ClauseBody::DecreasesAssume => out.push_str(" assume"),
            ClauseBody::Signals(t, n, e) => {
                out.push_str(" (");
                self.typed(&mut out, t, n);
                out.push_str(") ");
                self.expr_into(&mut out, e);
            }
        }
        out.push(';');
        out
    }

    /// A `gpuopt` annotation: its word and operand tokens as written (the front end does not
    /// interpret them; see [`Annotation`]), with a single space where the source had space or a
    /// comment, so that they read back as the same tokens (`a(t)` is a call, `a (t)` two
    /// operands).
    pub fn annotation(&self, a: &Annotation) -> String {
        let mut out = String::from("gpuopt ");
        // The optimization word as written (`loop_unroll` or its synonym `unroll`).
        out.push_str(&a.keyword.name);
        // Tokens that touched in the source touch again, and lex the same way again.
        for t in &a.operands {
            if t.spaced {
                out.push(' ');
            }
            out.push_str(&t.text);
        }
        out.push(';');
        out
    }

    /// A program, ending with a line break.
    pub fn program(&self, p: &Program) -> String {
        let mut out = String::new();
        let is_field = |item: &Item| matches!(item, Item::Field(_));
        self.members(&mut out, &p.items, is_field, |out, item| match item {
            Item::Class(c) => self.class(out, c),
            Item::Method(m) => self.method(out, m, ""),
            Item::Field(f) => self.field(out, f, ""),
            Item::Adt(a) => out.push_str(&a.text),
            Item::Opaque(o) => out.push_str(&o.text),
        });
        if let Some(b) = &p.main {
            if !p.items.is_empty() {
                out.push_str(&self.newline);
            }
            self.block(&mut out, b, "");
            out.push_str(&self.newline);
        }
        out
    }

    fn class(&self, out: &mut String, c: &Class) {
        self.clauses(out, &c.contract, "");
        out.push_str("class ");
        out.push_str(&self.ident(&c.name));
        self.type_params(out, &c.type_params);
        if c.members.is_empty() {
            out.push_str(" { }");
            return;
        }
        out.push_str(" {");
        out.push_str(&self.newline);
        let ind = self.unit.clone();
        let is_field = |m: &Member| matches!(m, Member::Field(_));
        self.members(out, &c.members, is_field, |out, m| match m {
            Member::Field(f) => self.field(out, f, &ind),
            Member::Method(m) => self.method(out, m, &ind),
        });
        out.push('}');
    }

    /// Declarations each followed by a line break, with a blank line between two of them except
    /// inside a run of fields.
    fn members<T>(
        &self,
        out: &mut String,
        items: &[T],
        is_field: impl Fn(&T) -> bool,
        mut each: impl FnMut(&mut String, &T),
    ) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 && !(is_field(item) && is_field(&items[i - 1])) {
                out.push_str(&self.newline);
            }
            each(out, item);
            out.push_str(&self.newline);
        }
    }

    fn type_params(&self, out: &mut String, tps: &[Ident]) {
        if tps.is_empty() {
            return;
        }
        out.push('<');
        self.idents(out, tps);
        out.push('>');
    }

    fn field(&self, out: &mut String, f: &Field, ind: &str) {
        out.push_str(ind);
        if f.is_final {
            out.push_str("final ");
        }
        out.push_str(&self.ty(&f.ty));
        out.push(' ');
        self.idents(out, &f.names);
        out.push(';');
    }

    /// Annotations, then clauses, one per line at `ind`, each followed by a line break.
    pub(super) fn prefix(&self, out: &mut String, p: &Prefix, ind: &str) {
        for a in &p.annotations {
            out.push_str(ind);
            out.push_str(&self.annotation(a));
            out.push_str(&self.newline);
        }
        self.clauses(out, &p.clauses, ind);
    }

    pub(super) fn clauses(&self, out: &mut String, cs: &[Clause], ind: &str) {
        for c in cs {
            out.push_str(ind);
            out.push_str(&self.clause(c));
            out.push_str(&self.newline);
        }
    }

    fn method(&self, out: &mut String, m: &Method, ind: &str) {
        self.prefix(out, &m.prefix, ind);
        out.push_str(ind);
        for md in &m.modifiers {
            out.push_str(md.as_str());
            out.push(' ');
        }
        match m.kind {
            // Operator methods keep their operator spelling.
            MethodKind::Method if m.is_operator() => {
                out.push_str(&self.ty(&m.ret));
                out.push(' ');
                out.push_str(&m.name.name);
            }
            MethodKind::Method => self.typed(out, &m.ret, &m.name),
            MethodKind::CtorV1 => out.push_str(&self.ident(&m.name)),
            MethodKind::CtorV2 => out.push_str("constructor"),
            MethodKind::Run => out.push_str("run"),
        }
        if m.kind != MethodKind::Run {
            self.type_params(out, &m.type_params);
            out.push('(');
            comma_separated(out, &m.params, |out, p| self.typed(out, &p.ty, &p.name));
            out.push(')');
        }
        match &m.body {
            MethodBody::Block(b) => {
                out.push(' ');
                self.block(out, b, ind);
            }
            MethodBody::Abstract => out.push(';'),
            MethodBody::Expr(e) => {
                out.push_str(" = ");
                self.expr_into(out, e);
                out.push(';');
            }
        }
    }
}
