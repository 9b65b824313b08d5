//! Random well-formed PVL programs for the interpreter: one kernel-style method over an integer
//! array with integer parameters, whose body mixes assignments with edge-case numbers (division
//! and remainder included), conditionals, bounded loops with invariants, array accesses (in
//! bounds or not), `par` blocks with per-thread permissions and assertions. They parse and type
//! check; whether they run without errors is up to the values (a division by zero, an index out
//! of bounds, a failed assertion are the program's errors, reported as such).

use super::gen::{Rng, NUMBERS};

struct Gen<'r> {
    rng: &'r mut Rng,
    /// Integer variables in scope (parameters and locals).
    ints: Vec<String>,
    fresh: usize,
    out: String,
    /// Inside a `par` block: the thread variable, the only index of `a` a thread may read.
    cell: Option<String>,
}

impl Gen<'_> {
    fn expr(&mut self, depth: usize) -> String {
        let leaf = depth == 0 || self.rng.below(3) == 0;
        if leaf {
            return match self.rng.below(4) {
                0 => self.rng.pick(NUMBERS).trim_start_matches('-').to_string(),
                1 => format!("a[{}]", self.cell.as_deref().unwrap_or("0")),
                _ => self.rng.pick(&self.ints).clone(),
            };
        }
        match self.rng.below(6) {
            0 => format!("-({})", self.expr(depth - 1)),
            1 => match self.cell.clone() {
                Some(t) => format!("a[{t}]"),
                None => format!("a[{}]", self.index(depth - 1)),
            },
            2 => format!(
                "({} ? {} : {})",
                self.cond(depth - 1),
                self.expr(depth - 1),
                self.expr(depth - 1)
            ),
            _ => {
                let op = *self.rng.pick(&["+", "-", "*", "/", "%"]);
                format!("({} {op} {})", self.expr(depth - 1), self.expr(depth - 1))
            }
        }
    }

    /// An index: mostly folded into `0 .. n`, sometimes anything.
    fn index(&mut self, depth: usize) -> String {
        let e = self.expr(depth);
        if self.rng.below(5) == 0 {
            e
        } else {
            format!("(({e}) % n + n) % n")
        }
    }

    fn cond(&mut self, depth: usize) -> String {
        let op = *self.rng.pick(&["<", "<=", "==", "!=", ">", ">="]);
        let c = format!("{} {op} {}", self.expr(depth), self.expr(depth));
        match self.rng.below(5) {
            0 => format!("!({c})"),
            1 => format!("({c}) && ({})", self.cond(depth.saturating_sub(1))),
            _ => c,
        }
    }

    fn line(&mut self, indent: usize, s: &str) {
        self.out.push_str(&"  ".repeat(indent));
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn stmts(&mut self, indent: usize, depth: usize, n: usize) {
        let scope = self.ints.len();
        for _ in 0..n {
            self.stmt(indent, depth);
        }
        self.ints.truncate(scope);
    }

    fn stmt(&mut self, indent: usize, depth: usize) {
        let perm = "(\\forall* int k; 0 <= k && k < n; Perm(a[k], write))";
        match self.rng.below(if depth == 0 { 4 } else { 8 }) {
            0 => {
                self.fresh += 1;
                let v = format!("v{}", self.fresh);
                let e = self.expr(2);
                self.line(indent, &format!("int {v} = {e};"));
                self.ints.push(v);
            }
            1 => {
                let v = self.rng.pick(&self.ints[3..]).clone();
                let e = self.expr(2);
                self.line(indent, &format!("{v} = {e};"));
            }
            2 => {
                let (i, e) = (self.index(1), self.expr(2));
                self.line(indent, &format!("a[{i}] = {e};"));
            }
            3 => {
                let c = self.cond(1);
                self.line(indent, &format!("assert {c};"));
            }
            4 | 5 => {
                let c = self.cond(1);
                self.line(indent, &format!("if ({c}) {{"));
                let k = 1 + self.rng.below(3);
                self.stmts(indent + 1, depth - 1, k);
                self.line(indent, "} else {");
                let k = self.rng.below(2);
                self.stmts(indent + 1, depth - 1, k);
                self.line(indent, "}");
            }
            6 => {
                self.fresh += 1;
                let i = format!("i{}", self.fresh);
                let m = 1 + self.rng.below(4);
                self.line(indent, &format!("int {i} = 0;"));
                self.line(indent, &format!("loop_invariant 0 <= {i} && {i} <= {m};"));
                self.line(indent, &format!("loop_invariant {perm};"));
                self.line(indent, &format!("while ({i} < {m}) {{"));
                self.ints.push(i.clone());
                let k = 1 + self.rng.below(3);
                self.stmts(indent + 1, depth - 1, k);
                self.ints.pop();
                self.line(indent + 1, &format!("{i} = {i} + 1;"));
                self.line(indent, "}");
            }
            _ => {
                // Only the thread's own cell, and the method's read-only parameters.
                self.fresh += 1;
                let t = format!("t{}", self.fresh);
                let saved = std::mem::replace(&mut self.ints, vec![t.clone(), "x".into()]);
                self.cell = Some(t.clone());
                let e = self.expr(2);
                self.cell = None;
                self.ints = saved;
                self.line(indent, &format!("par (int {t} = 0 .. n)"));
                self.line(indent + 1, &format!("context Perm(a[{t}], write);"));
                self.line(indent, &format!("{{ a[{t}] = {e}; }}"));
            }
        }
    }
}

/// A random program (see the module documentation).
pub fn program(rng: &mut Rng) -> String {
    let mut g = Gen {
        rng,
        ints: vec!["n".into(), "x".into(), "y".into(), "r".into()],
        fresh: 0,
        out: String::new(),
        cell: None,
    };
    g.line(0, "class Gen {");
    g.line(1, "requires 0 < n && n <= 8;");
    g.line(1, "requires a != null && a.length == n;");
    g.line(1, "requires -100 <= x && x <= 100;");
    g.line(1, "context (\\forall* int k; 0 <= k && k < n; Perm(a[k], write));");
    g.line(1, "ensures a.length == n;");
    g.line(1, "int run(int n, int[] a, int x, int y) {");
    g.line(2, "int r = 0;");
    let n = 2 + g.rng.below(6);
    g.stmts(2, 2, n);
    g.line(2, "return r;");
    g.line(1, "}");
    g.line(0, "}");
    g.out
}
