//! Viper printer. Writes one statement or contract conjunct per line and records, for every node
//! that has a PVL origin, its Viper range in Silicon's convention (1-based line and column, end
//! column exclusive). That is the position map of `verification.md` §4.1.

use super::ast::*;
use front::span::Span;
use serde::Serialize;

/// A Viper position `(line, column)`, 1-based.
pub type Pos = (u32, u32);

#[derive(Clone, Debug, Serialize)]
pub struct PosEntry {
    pub start: Pos,
    pub end: Pos,
    /// The PVL span of the node (expression or statement).
    #[serde(serialize_with = "ser_span")]
    pub span: Option<Span>,
    /// Set for statements and contract conjuncts.
    pub role: Option<Role>,
    #[serde(serialize_with = "ser_span")]
    pub clause: Option<Span>,
    pub label: Option<String>,
    /// Index into [`PosMap::members`].
    pub member: usize,
    /// A statement or contract conjunct (as opposed to a sub-expression).
    pub is_stmt: bool,
}

fn ser_span<S: serde::Serializer>(s: &Option<Span>, ser: S) -> Result<S::Ok, S::Error> {
    match s {
        Some(s) => ser.serialize_some(&(s.lo, s.hi)),
        None => ser.serialize_none(),
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct MemberInfo {
    pub name: String,
    /// Which encoded program (source file) the member belongs to, in batch files.
    pub unit: usize,
    pub kind: MethodKind,
    pub first_line: u32,
    pub last_line: u32,
    #[serde(serialize_with = "ser_span")]
    pub span: Option<Span>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct PosMap {
    pub entries: Vec<PosEntry>,
    pub members: Vec<MemberInfo>,
    /// Viper identifier → PVL name (see `Program::names`).
    pub names: Vec<(String, String)>,
}

impl PosMap {
    /// The member whose text contains `line`.
    pub fn member_at(&self, line: u32) -> Option<&MemberInfo> {
        self.members.iter().find(|m| m.first_line <= line && line <= m.last_line)
    }

    /// Nodes with exactly this range; statements first.
    pub fn exact(&self, start: Pos, end: Pos) -> Vec<&PosEntry> {
        let mut v: Vec<&PosEntry> =
            self.entries.iter().filter(|e| e.start == start && e.end == end).collect();
        v.sort_by_key(|e| !e.is_stmt);
        v
    }

    /// The innermost statement or conjunct containing `pos`.
    pub fn stmt_at(&self, pos: Pos) -> Option<&PosEntry> {
        self.entries
            .iter()
            .filter(|e| e.is_stmt && e.start <= pos && pos < e.end)
            .max_by_key(|e| e.start)
    }

    /// The innermost expression with a PVL span containing the range.
    pub fn expr_containing(&self, start: Pos, end: Pos) -> Option<&PosEntry> {
        self.entries
            .iter()
            .filter(|e| e.span.is_some() && e.start <= start && end <= e.end)
            .min_by_key(|e| (e.end.0 - e.start.0, e.end.1 as i64 - e.start.1 as i64, !e.is_stmt))
    }
}

pub struct Printer {
    out: String,
    line: u32,
    col: u32,
    pub map: PosMap,
    member: usize,
    /// Unit index recorded for members printed from now on.
    pub unit: usize,
    /// Global names declared so far. A batch prints several programs into one file; their
    /// own members carry a per-program prefix, but the declarations the encoder synthesizes
    /// on demand (`ref_val`, `vct_stride`, allocation methods, …) are the same text under the
    /// same name in every program that uses them, and are printed once.
    declared: std::collections::HashSet<String>,
}

impl Default for Printer {
    fn default() -> Self {
        Printer::new()
    }
}

impl Printer {
    pub fn new() -> Printer {
        Printer {
            out: String::new(),
            line: 1,
            col: 1,
            map: PosMap::default(),
            member: 0,
            unit: 0,
            declared: Default::default(),
        }
    }

    pub fn finish(self) -> (String, PosMap) {
        (self.out, self.map)
    }

    fn w(&mut self, s: &str) {
        for ch in s.chars() {
            if ch == '\n' {
                self.line += 1;
                self.col = 1;
            } else {
                self.col += 1;
            }
        }
        self.out.push_str(s);
    }

    fn pos(&self) -> Pos {
        (self.line, self.col)
    }

    fn nl(&mut self, indent: usize) {
        self.w("\n");
        for _ in 0..indent {
            self.w("  ");
        }
    }

    fn begin_member(&mut self, name: &str, kind: MethodKind, span: Option<Span>) {
        self.member = self.map.members.len();
        self.map.members.push(MemberInfo {
            name: name.to_string(),
            unit: self.unit,
            kind,
            first_line: self.line,
            last_line: self.line,
            span,
        });
    }

    fn end_member(&mut self) {
        let line = self.line;
        if let Some(m) = self.map.members.get_mut(self.member) {
            m.last_line = line;
        }
    }

    pub fn program(&mut self, p: &Program) {
        self.map.names.extend(p.names.iter().cloned());
        if !p.prelude.is_empty() {
            self.w(&p.prelude);
            if !p.prelude.ends_with('\n') {
                self.w("\n");
            }
        }
        for d in &p.domains {
            // A batch joins programs that may declare the same synthesized domain.
            if !self.declared.insert(format!("domain {d}")) {
                continue;
            }
            self.w("\n");
            self.w(d);
            if !d.ends_with('\n') {
                self.w("\n");
            }
        }
        for (f, t) in &p.fields {
            if self.declared.insert(f.clone()) {
                self.w(&format!("field {f}: {t}\n"));
            }
        }
        for f in &p.functions {
            if self.declared.insert(f.name.clone()) {
                self.w("\n");
                self.function(f);
            }
        }
        for pr in &p.predicates {
            if self.declared.insert(pr.name.clone()) {
                self.w("\n");
                self.predicate(pr);
            }
        }
        for m in &p.methods {
            if self.declared.insert(m.name.clone()) {
                self.w("\n");
                self.method(m);
            }
        }
    }

    /// `n: T, …`: parameters and quantified variables.
    fn typed_vars(&mut self, ps: &[(String, Ty)]) {
        let s = ps.iter().map(|(n, t)| format!("{n}: {t}")).collect::<Vec<_>>().join(", ");
        self.w(&s);
    }

    fn contracts(&mut self, kw: &str, cs: &[Contract], indent: usize) {
        for c in cs.iter().filter(|c| c.origin.role != Role::Decreases) {
            self.nl(indent);
            self.w(kw);
            self.w(" ");
            let start = self.pos();
            self.exp(&c.exp, false);
            let end = self.pos();
            self.record_stmt(start, end, &c.origin, c.exp.span);
        }
    }

    /// The termination measure among `cs` (its components, in order) as one `decreases` clause.
    fn decreases(&mut self, cs: &[Contract], indent: usize) {
        let measure: Vec<&Contract> =
            cs.iter().filter(|c| c.origin.role == Role::Decreases).collect();
        if measure.is_empty() {
            return;
        }
        self.nl(indent);
        self.w("decreases ");
        for (i, c) in measure.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            let start = self.pos();
            if c.exp.kind == ExpKind::Wildcard {
                // Termination assumed (`decreases _`).
                self.w("_");
            } else {
                self.exp(&c.exp, false);
            }
            let end = self.pos();
            self.record_stmt(start, end, &c.origin, c.exp.span);
        }
    }

    fn record_stmt(&mut self, start: Pos, end: Pos, o: &Origin, exp_span: Option<Span>) {
        self.map.entries.push(PosEntry {
            start,
            end,
            span: o.span.or(exp_span),
            role: Some(o.role),
            clause: o.clause,
            label: o.label.clone(),
            member: self.member,
            is_stmt: true,
        });
    }

    pub fn function(&mut self, f: &Function) {
        self.begin_member(&f.name, MethodKind::Prelude, f.span);
        self.w(&format!("function {}(", f.name));
        self.typed_vars(&f.params);
        self.w(&format!("): {}", f.ret));
        self.contracts("requires", &f.pres, 1);
        self.contracts("ensures", &f.posts, 1);
        self.decreases(&f.pres, 1);
        if let Some(b) = &f.body {
            self.nl(0);
            self.exp_block(b);
        }
        self.end_member();
        self.w("\n");
    }

    /// `{`, the body one level in, `}` on a line of its own: a function's or predicate's body.
    fn exp_block(&mut self, b: &Exp) {
        self.w("{");
        self.nl(1);
        self.exp(b, false);
        self.nl(0);
        self.w("}");
    }

    pub fn predicate(&mut self, p: &Predicate) {
        self.begin_member(&p.name, MethodKind::Prelude, p.span);
        self.w(&format!("predicate {}(", p.name));
        self.typed_vars(&p.params);
        self.w(")");
        if let Some(b) = &p.body {
            self.w(" ");
            self.exp_block(b);
        }
        self.end_member();
        self.w("\n");
    }

    pub fn method(&mut self, m: &Method) {
        self.begin_member(&m.name, m.kind.clone(), m.span);
        self.w(&format!("method {}(", m.name));
        self.typed_vars(&m.params);
        self.w(")");
        if !m.returns.is_empty() {
            self.w(" returns (");
            self.typed_vars(&m.returns);
            self.w(")");
        }
        self.contracts("requires", &m.pres, 1);
        self.contracts("ensures", &m.posts, 1);
        self.decreases(&m.pres, 1);
        if let Some(b) = &m.body {
            self.nl(0);
            self.w("{");
            self.stmts(b, 1);
            self.nl(0);
            self.w("}");
        }
        self.end_member();
        self.w("\n");
    }

    fn stmts(&mut self, ss: &[Stmt], indent: usize) {
        for s in ss {
            self.nl(indent);
            self.stmt(s, indent);
        }
    }

    fn stmt(&mut self, s: &Stmt, indent: usize) {
        let start = self.pos();
        let mut exp_span = None;
        match &s.kind {
            StmtKind::VarDecl(n, t) => self.w(&format!("var {n}: {t}")),
            StmtKind::Assign(l, r) => {
                self.exp(l, false);
                self.w(" := ");
                self.exp(r, false);
            }
            StmtKind::Call(ts, m, args) => {
                if !ts.is_empty() {
                    self.w(&ts.join(", "));
                    self.w(" := ");
                }
                self.call(m, args);
            }
            StmtKind::New(x, fs) => self.w(&format!("{x} := new({})", fs.join(", "))),
            StmtKind::Inhale(e)
            | StmtKind::Exhale(e)
            | StmtKind::Assert(e)
            | StmtKind::Assume(e) => {
                let kw = match &s.kind {
                    StmtKind::Inhale(_) => "inhale ",
                    StmtKind::Exhale(_) => "exhale ",
                    StmtKind::Assert(_) => "assert ",
                    _ => "assume ",
                };
                self.w(kw);
                // Silicon reports exhale/assert failures at the expression, so the expression's
                // range is recorded as the statement's.
                let es = self.pos();
                self.exp(e, false);
                let ee = self.pos();
                self.record_stmt(es, ee, &s.origin, e.span);
                exp_span = e.span;
            }
            StmtKind::Fold(e) | StmtKind::Unfold(e) | StmtKind::Apply(e) => {
                self.w(match s.kind {
                    StmtKind::Fold(_) => "fold ",
                    StmtKind::Unfold(_) => "unfold ",
                    _ => "apply ",
                });
                self.exp(e, false);
            }
            StmtKind::Package(e, proof) => {
                self.w("package ");
                self.exp(e, false);
                let end = self.pos();
                self.record_stmt(start, end, &s.origin, e.span);
                self.w(" {");
                self.stmts(proof, indent + 1);
                self.nl(indent);
                self.w("}");
                return;
            }
            StmtKind::If(c, t, e) => {
                self.w("if (");
                self.exp(c, false);
                self.w(") {");
                self.stmts(t, indent + 1);
                self.nl(indent);
                self.w("}");
                if !e.is_empty() {
                    self.w(" else {");
                    self.stmts(e, indent + 1);
                    self.nl(indent);
                    self.w("}");
                }
                return;
            }
            StmtKind::While(c, invs, body) => {
                self.w("while (");
                self.exp(c, false);
                self.w(")");
                self.contracts("invariant", invs, indent + 1);
                self.decreases(invs, indent + 1);
                self.nl(indent);
                self.w("{");
                self.stmts(body, indent + 1);
                self.nl(indent);
                self.w("}");
                return;
            }
            StmtKind::Label(l) => self.w(&format!("label {l}")),
            StmtKind::Goto(l) => self.w(&format!("goto {l}")),
            StmtKind::Comment(c) => {
                self.w(&format!("// {c}"));
                return;
            }
        }
        let end = self.pos();
        self.record_stmt(start, end, &s.origin, exp_span);
    }

    fn args<'e>(&mut self, args: impl IntoIterator<Item = &'e Exp>) {
        for (i, a) in args.into_iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.exp(a, false);
        }
    }

    /// `f(a, …)`.
    fn call<'e>(&mut self, f: &str, args: impl IntoIterator<Item = &'e Exp>) {
        self.w(f);
        self.w("(");
        self.args(args);
        self.w(")");
    }

    /// `head x in body`: `let` and `unfolding`.
    fn in_body(&mut self, head: &str, x: &Exp, body: &Exp) {
        self.w(head);
        self.exp(x, true);
        self.w(" in ");
        self.exp(body, true);
    }

    /// Print an expression; `nested` asks for parentheses around compound forms.
    pub fn exp(&mut self, e: &Exp, nested: bool) {
        let compound = matches!(
            e.kind,
            ExpKind::Binary(..)
                | ExpKind::Cond(..)
                | ExpKind::Forall(..)
                | ExpKind::Exists(..)
                | ExpKind::Let(..)
                | ExpKind::Unfolding(..)
                | ExpKind::Unary(..)
        );
        let paren = nested && compound;
        if paren {
            self.w("(");
        }
        let start = self.pos();
        match &e.kind {
            ExpKind::Int(v) => {
                if v.sign() == num_bigint::Sign::Minus {
                    self.w(&format!("({v})"));
                } else {
                    self.w(&v.to_string());
                }
            }
            ExpKind::Bool(b) => self.w(if *b { "true" } else { "false" }),
            ExpKind::Null => self.w("null"),
            ExpKind::Var(n) => self.w(n),
            ExpKind::Result => self.w("result"),
            ExpKind::Write => self.w("write"),
            ExpKind::NoPerm => self.w("none"),
            ExpKind::Wildcard => self.w("wildcard"),
            ExpKind::Unary(op, a) => {
                self.w(op);
                self.exp(a, true);
            }
            ExpKind::Binary(op, a, b) => {
                self.exp(a, true);
                self.w(&format!(" {op} "));
                self.exp(b, true);
            }
            ExpKind::Cond(c, a, b) => {
                self.exp(c, true);
                self.w(" ? ");
                self.exp(a, true);
                self.w(" : ");
                self.exp(b, true);
            }
            ExpKind::Field(a, f) => {
                self.exp(a, true);
                self.w(&format!(".{f}"));
            }
            ExpKind::App(f, args) => self.call(f, args),
            ExpKind::Acc(l, p) => self.call("acc", [&**l, &**p]),
            ExpKind::PermOf(l) => self.call("perm", [&**l]),
            ExpKind::Forall(vs, trs, b) | ExpKind::Exists(vs, trs, b) => {
                self.w(if matches!(e.kind, ExpKind::Forall(..)) { "forall " } else { "exists " });
                self.typed_vars(vs);
                self.w(" ::");
                for t in trs {
                    self.w(" { ");
                    self.args(t);
                    self.w(" }");
                }
                self.w(" ");
                self.exp(b, true);
            }
            ExpKind::Old(l, a) => {
                match l {
                    Some(l) => self.w(&format!("old[{l}](")),
                    None => self.w("old("),
                }
                self.exp(a, false);
                self.w(")");
            }
            ExpKind::Let(n, v, b) => {
                // Viper's grammar wants the bound value in parentheses: `let x == (e) in b`.
                self.w(&format!("let {n} == ("));
                self.exp(v, false);
                self.w(") in ");
                self.exp(b, true);
            }
            ExpKind::Unfolding(p, b) => self.in_body("unfolding ", p, b),
            ExpKind::SeqLit(t, es) | ExpKind::SetLit(t, es) | ExpKind::MultisetLit(t, es) => {
                let kw = match &e.kind {
                    ExpKind::SeqLit(..) => "Seq",
                    ExpKind::SetLit(..) => "Set",
                    _ => "Multiset",
                };
                if es.is_empty() {
                    self.w(&format!("{kw}[{t}]()"));
                } else {
                    self.call(kw, es);
                }
            }
            ExpKind::EmptyMap(k, v) => self.w(&format!("Map[{k}, {v}]()")),
            ExpKind::Len(a) => {
                self.w("|");
                self.exp(a, false);
                self.w("|");
            }
            ExpKind::SeqIndex(s, i) => {
                self.exp(s, true);
                self.w("[");
                self.exp(i, false);
                self.w("]");
            }
            ExpKind::SeqSlice(s, lo, hi) => {
                self.exp(s, true);
                self.w("[");
                if let Some(lo) = lo {
                    self.exp(lo, false);
                }
                self.w("..");
                if let Some(hi) = hi {
                    self.exp(hi, false);
                }
                self.w("]");
            }
            ExpKind::SeqUpdate(s, i, v) => {
                self.exp(s, true);
                self.w("[");
                self.exp(i, false);
                self.w(" := ");
                self.exp(v, false);
                self.w("]");
            }
            ExpKind::Range(lo, hi) => {
                self.w("[");
                self.exp(lo, false);
                self.w("..");
                self.exp(hi, false);
                self.w(")");
            }
        }
        let end = self.pos();
        if paren {
            self.w(")");
        }
        if e.span.is_some() {
            self.map.entries.push(PosEntry {
                start,
                end,
                span: e.span,
                role: None,
                clause: None,
                label: None,
                member: self.member,
                is_stmt: false,
            });
        }
    }
}

/// Print a program and return its text and position map.
/// One expression as Viper text (for verbatim declarations such as domain axioms).
pub fn exp_text(e: &Exp) -> String {
    let mut pr = Printer::new();
    pr.exp(e, false);
    pr.finish().0
}

pub fn print_program(p: &Program) -> (String, PosMap) {
    let mut pr = Printer::new();
    pr.program(p);
    pr.finish()
}

/// Print several programs (without preludes of their own) after one shared prelude.
pub fn print_batch(prelude: &str, units: &[&Program]) -> (String, PosMap) {
    let mut pr = Printer::new();
    pr.w(prelude);
    for (i, u) in units.iter().enumerate() {
        pr.unit = i;
        pr.program(u);
    }
    pr.finish()
}
