//! Diff review: which parts of a program are annotations, and which hunks of a diff change them.
//!
//! An optimization rewrites code *and* its proof. A reviewer mostly needs to check the proof side:
//! the contracts, invariants, barrier contracts, assertions, ghost code and `gpuopt` lines. This
//! module finds those from the parsed syntax trees of both files (a set of annotation byte ranges
//! per file, taken from node spans), and classifies the hunks of a line diff by whether a changed
//! line on either side holds annotation text. It never looks at the text with patterns: a line
//! `loop_invariant` inside a string or a comment is not an annotation, and a clause that spans
//! several lines is one on all of them.
//!
//! ```
//! use alpine_rs::review::{annotation_ranges, review};
//! use alpine_rs::front::{parse, ParseOptions};
//!
//! let a = "class C {\n  requires n >= 0;\n  void m(int n) {\n    int x = n;\n  }\n}\n";
//! let b = "class C {\n  requires n >= 1;\n  void m(int n) {\n    int x = n;\n  }\n}\n";
//! let (pa, pb) = (parse(a, &ParseOptions::default()), parse(b, &ParseOptions::default()));
//! let hunks = review(a, &annotation_ranges(&pa.program), b, &annotation_ranges(&pb.program), 3);
//! assert_eq!(hunks.len(), 1);
//! assert!(hunks[0].is_annotation());
//! ```

use crate::front::ast::*;
use crate::front::span::Span;
use crate::front::visit::{all_exprs, walk_stmts};
use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;

/// What kind of annotation a byte range holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotKind {
    /// `gpuopt …;` optimization requests.
    Gpuopt,
    /// Method contracts: requires, ensures, context, context_everywhere, given, yields, …
    Contract,
    /// `loop_invariant` (and other clauses in front of a loop).
    LoopInvariant,
    /// The region contract of a `par` block and the per-thread contracts of its arms.
    ParContract,
    /// The contract of a `barrier`.
    BarrierContract,
    /// assert, assume, inhale, exhale, fold, unfold, … statements.
    Assertion,
    /// `ghost` statements and ghost arguments of calls (`with`/`then`, `given`/`yields`).
    Ghost,
    /// Predicate definitions (methods returning `resource`).
    Predicate,
}

impl AnnotKind {
    pub fn name(self) -> &'static str {
        match self {
            AnnotKind::Gpuopt => "gpuopt",
            AnnotKind::Contract => "contract",
            AnnotKind::LoopInvariant => "loop invariant",
            AnnotKind::ParContract => "par contract",
            AnnotKind::BarrierContract => "barrier contract",
            AnnotKind::Assertion => "assertion",
            AnnotKind::Ghost => "ghost code",
            AnnotKind::Predicate => "predicate",
        }
    }
}

impl fmt::Display for AnnotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One annotation's bytes in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnnotRange {
    pub range: Range<usize>,
    pub kind: AnnotKind,
}

/// Every annotation of a program, sorted by start offset. Ranges may nest (an assertion inside a
/// ghost block); synthesised nodes without a source span are skipped.
pub fn annotation_ranges(program: &Program) -> Vec<AnnotRange> {
    let mut out = Vec::new();
    for (_, m) in program.methods() {
        method(m, &mut out);
    }
    if let Some(main) = &program.main {
        for s in &main.stmts {
            stmt_tree(s, &mut out);
        }
    }
    out.retain(|r| !r.range.is_empty());
    out.sort_by_key(|r| (r.range.start, r.range.end, r.kind));
    out.dedup();
    out
}

fn push(out: &mut Vec<AnnotRange>, span: Span, kind: AnnotKind) {
    out.push(AnnotRange { range: span.range(), kind });
}

fn prefix(p: &Prefix, clause_kind: impl Fn(ClauseKind) -> AnnotKind, out: &mut Vec<AnnotRange>) {
    for a in &p.annotations {
        push(out, a.span, AnnotKind::Gpuopt);
    }
    for c in &p.clauses {
        push(out, c.span, clause_kind(c.kind));
    }
}

fn method(m: &Method, out: &mut Vec<AnnotRange>) {
    if m.is_predicate() {
        // The whole definition is specification, its prefix included.
        push(out, m.span.to(m.prefix.span), AnnotKind::Predicate);
    }
    prefix(&m.prefix, |_| AnnotKind::Contract, out);
    match &m.body {
        MethodBody::Block(b) => b.stmts.iter().for_each(|s| stmt_tree(s, out)),
        MethodBody::Abstract | MethodBody::Expr(_) => {}
    }
}

/// Annotations of `s` and of every statement and expression nested in it.
fn stmt_tree(s: &Stmt, out: &mut Vec<AnnotRange>) {
    walk_stmts(s, &mut |st| stmt(st, out));
    all_exprs(s, &mut |e| {
        if let ExprKind::Call { ghost, .. } = &e.kind {
            for b in [&ghost.with, &ghost.then].into_iter().flatten() {
                push(out, b.span, AnnotKind::Ghost);
            }
            for (name, value) in &ghost.given {
                push(out, name.span.to(value.span), AnnotKind::Ghost);
            }
            for (a, b) in &ghost.yields {
                push(out, a.span.to(b.span), AnnotKind::Ghost);
            }
        }
    });
}

fn loop_clause(k: ClauseKind) -> AnnotKind {
    match k {
        ClauseKind::LoopInvariant => AnnotKind::LoopInvariant,
        _ => AnnotKind::Contract,
    }
}

fn stmt(s: &Stmt, out: &mut Vec<AnnotRange>) {
    match &s.kind {
        StmtKind::While(l) | StmtKind::For(l) => prefix(&l.prefix, loop_clause, out),
        StmtKind::RangedFor { prefix: p, .. } => prefix(p, loop_clause, out),
        StmtKind::Par(p) => {
            prefix(&p.prefix, |_| AnnotKind::ParContract, out);
            for arm in &p.arms {
                for c in &arm.contract {
                    push(out, c.span, AnnotKind::ParContract);
                }
            }
        }
        StmtKind::Barrier(b) => {
            for c in &b.contract {
                push(out, c.span, AnnotKind::BarrierContract);
            }
        }
        StmtKind::Spec { .. } => push(out, s.span, AnnotKind::Assertion),
        StmtKind::Ghost(_) => push(out, s.span, AnnotKind::Ghost),
        StmtKind::Annotation(a) => push(out, a.span, AnnotKind::Gpuopt),
        StmtKind::Invariant { resource, .. } => push(out, resource.span, AnnotKind::Contract),
        _ => {}
    }
}

/// The annotation kinds present on each line of `text` (index 0 = line 1). A line counts when an
/// annotation range overlaps its text between the first and the last non-blank character, so
/// indentation and line breaks belong to no annotation.
pub fn line_kinds(text: &str, ranges: &[AnnotRange]) -> Vec<BTreeSet<AnnotKind>> {
    // Trimmed extent of every line.
    let mut lines: Vec<Range<usize>> = Vec::new();
    let mut start = 0;
    for seg in text.split_inclusive('\n') {
        let body = seg.trim_end_matches(['\n', '\r']);
        let lead = body.len() - body.trim_start().len();
        let trimmed = body.trim();
        lines.push(start + lead..start + lead + trimmed.len());
        start += seg.len();
    }
    let mut kinds = vec![BTreeSet::new(); lines.len()];
    for r in ranges {
        // First line whose trimmed extent may end after the range start.
        let first = lines.partition_point(|l| l.end <= r.range.start && l.start < r.range.start);
        for (i, l) in lines.iter().enumerate().skip(first) {
            if l.start >= r.range.end {
                break;
            }
            if !l.is_empty() && l.start < r.range.end && r.range.start < l.end {
                kinds[i].insert(r.kind);
            }
        }
    }
    kinds
}

/// How a line of a hunk came about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LineTag {
    Context,
    Delete,
    Insert,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HunkLine {
    pub tag: LineTag,
    /// The line, with its line break when it has one.
    pub text: String,
    /// Annotation kinds on this line (of the side it comes from).
    pub kinds: BTreeSet<AnnotKind>,
}

/// One hunk of a unified diff, classified.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Hunk {
    /// 0-based line range in the original.
    pub old: Range<usize>,
    /// 0-based line range in the optimized file.
    pub new: Range<usize>,
    pub lines: Vec<HunkLine>,
    /// Annotation kinds on the changed lines, either side.
    pub kinds: BTreeSet<AnnotKind>,
}

impl Hunk {
    /// Does a changed line of this hunk hold annotation text?
    pub fn is_annotation(&self) -> bool {
        !self.kinds.is_empty()
    }

    /// The `@@ -a,b +c,d @@` line (without a line break), in `diff -u` conventions, followed by
    /// the changed annotation kinds as the section heading.
    pub fn header(&self) -> String {
        let mut h = format!("@@ -{} +{} @@", HunkRange(&self.old), HunkRange(&self.new));
        if self.is_annotation() {
            let names: Vec<&str> = self.kinds.iter().map(|k| k.name()).collect();
            h.push_str(" annotations: ");
            h.push_str(&names.join(", "));
        }
        h
    }
}

struct HunkRange<'a>(&'a Range<usize>);

impl fmt::Display for HunkRange<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.0.end - self.0.start;
        match len {
            1 => write!(f, "{}", self.0.start + 1),
            // An empty range names the line before it, as `diff -u` does.
            0 => write!(f, "{},0", self.0.start),
            _ => write!(f, "{},{len}", self.0.start + 1),
        }
    }
}

/// The line diff of `orig` and `opt` as hunks with `context` lines of context, each classified
/// by the annotation ranges of its side.
pub fn review(
    orig: &str,
    orig_ranges: &[AnnotRange],
    opt: &str,
    opt_ranges: &[AnnotRange],
    context: usize,
) -> Vec<Hunk> {
    let old_kinds = line_kinds(orig, orig_ranges);
    let new_kinds = line_kinds(opt, opt_ranges);
    let diff = similar::TextDiff::from_lines(orig, opt);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        let mut kinds = BTreeSet::new();
        for op in &group {
            for ch in diff.iter_changes(op) {
                let (tag, k) = match ch.tag() {
                    similar::ChangeTag::Equal => {
                        (LineTag::Context, ch.old_index().and_then(|i| old_kinds.get(i)))
                    }
                    similar::ChangeTag::Delete => {
                        (LineTag::Delete, ch.old_index().and_then(|i| old_kinds.get(i)))
                    }
                    similar::ChangeTag::Insert => {
                        (LineTag::Insert, ch.new_index().and_then(|i| new_kinds.get(i)))
                    }
                };
                let k = k.cloned().unwrap_or_default();
                if tag != LineTag::Context {
                    kinds.extend(k.iter().copied());
                }
                lines.push(HunkLine { tag, text: ch.value().to_string(), kinds: k });
            }
        }
        hunks.push(Hunk { old, new, lines, kinds });
    }
    hunks
}

/// Parse both texts and review their diff. `Err` holds the diagnostics of the side that does not
/// parse (0 = orig, 1 = opt).
pub fn review_texts(
    orig: &str,
    opt: &str,
    opts: &crate::front::ParseOptions,
    context: usize,
) -> Result<Vec<Hunk>, (usize, Vec<crate::diag::Diagnostic>)> {
    let mut ranges = Vec::with_capacity(2);
    for (i, text) in [orig, opt].into_iter().enumerate() {
        let parsed = crate::front::parse(text, opts);
        if parsed.has_errors() {
            return Err((i, parsed.errors().cloned().collect()));
        }
        ranges.push(annotation_ranges(&parsed.program));
    }
    Ok(review(orig, &ranges[0], opt, &ranges[1], context))
}

/// Plain unified diff text of `hunks` (empty when there are none).
pub fn unified(old_name: &str, new_name: &str, hunks: &[Hunk]) -> String {
    if hunks.is_empty() {
        return String::new();
    }
    let mut s = format!("--- {old_name}\n+++ {new_name}\n");
    for h in hunks {
        s.push_str(&h.header());
        s.push('\n');
        for l in &h.lines {
            s.push(match l.tag {
                LineTag::Context => ' ',
                LineTag::Delete => '-',
                LineTag::Insert => '+',
            });
            push_line(&mut s, &l.text);
        }
    }
    s
}

/// Append a diff line; a last line without a line break gets the `diff -u` marker.
pub fn push_line(s: &mut String, text: &str) {
    s.push_str(text);
    if !text.ends_with('\n') {
        s.push_str("\n\\ No newline at end of file\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::{parse, ParseOptions};

    fn ranges(src: &str) -> Vec<AnnotRange> {
        let p = parse(src, &ParseOptions::default());
        assert!(!p.has_errors(), "{:?}", p.diagnostics);
        annotation_ranges(&p.program)
    }

    fn texts(src: &str) -> Vec<(AnnotKind, &str)> {
        ranges(src).into_iter().map(|r| (r.kind, &src[r.range])).collect()
    }

    const KERNEL: &str = "\
class K {
  gpuopt glob_to_reg a tid;
  context_everywhere a != null && a.length == n;
  requires (\\forall* int k; 0 <= k && k < n; Perm(a[k], write));
  void k(int n, int[] a) {
    par lanes (int tid = 0 .. n)
      context Perm(a[tid], write);
    {
      int s = 0; // loop_invariant in a comment is not one
      loop_invariant 0 <= i && i <= 4;
      loop_invariant Perm(a[tid], write);
      for (int i = 0; i < 4; i++) {
        s = s + a[tid];
      }
      assert s >= 0 || s < 0;
      barrier(lanes) {
        requires Perm(a[tid], write);
        ensures Perm(a[tid], write);
      }
      a[tid] = s;
    }
  }
}
";

    #[test]
    fn finds_every_kind_from_the_tree() {
        let t = texts(KERNEL);
        let has = |k: AnnotKind, s: &str| t.iter().any(|(k2, s2)| *k2 == k && s2.starts_with(s));
        assert!(has(AnnotKind::Gpuopt, "gpuopt glob_to_reg a tid;"));
        assert!(has(AnnotKind::Contract, "context_everywhere a != null"));
        assert!(has(AnnotKind::Contract, "requires (\\forall*"));
        assert!(has(AnnotKind::ParContract, "context Perm(a[tid], write);"));
        assert!(has(AnnotKind::LoopInvariant, "loop_invariant 0 <= i"));
        assert!(has(AnnotKind::Assertion, "assert s >= 0"));
        assert!(has(AnnotKind::BarrierContract, "requires Perm(a[tid]"));
        assert!(has(AnnotKind::BarrierContract, "ensures Perm(a[tid]"));
        // Code and comments are not annotations.
        assert!(!t.iter().any(|(_, s)| s.contains("s = s + a[tid]")));
        assert!(!t.iter().any(|(_, s)| s.contains("in a comment")));
        assert_eq!(t.len(), 9, "{t:#?}");
    }

    #[test]
    fn ghost_statements_and_predicates() {
        let src = "\
class G {
  resource inv(int[] a) = a != null ** Perm(a[0], 1\\2);
  int m(int x) {
    ghost int g = x;
    int y = x + 1;
    return y;
  }
}
";
        let t = texts(src);
        assert!(t.iter().any(|(k, s)| *k == AnnotKind::Predicate && s.starts_with("resource inv")));
        assert!(t.iter().any(|(k, s)| *k == AnnotKind::Ghost && *s == "ghost int g = x;"));
        assert!(!t.iter().any(|(_, s)| s.contains("y = x + 1")));
    }

    #[test]
    fn multi_line_clause_marks_every_line_but_not_blank_or_comment_lines() {
        let src = "class C {\n  requires n >= 0 &&\n           n < 10;\n  // requires nothing\n  void m(int n) { }\n}\n";
        let kinds = line_kinds(src, &ranges(src));
        let on: Vec<bool> = kinds.iter().map(|k| !k.is_empty()).collect();
        assert_eq!(on, vec![false, true, true, false, false, false]);
    }

    #[test]
    fn line_with_code_before_an_annotation_counts() {
        // The par header and its contract on one line: the line holds annotation text.
        let src = "class C {\n  void m(int n, int[] a) {\n    par p (int t = 0 .. n) context Perm(a[t], write); { a[t] = 0; }\n  }\n}\n";
        let kinds = line_kinds(src, &ranges(src));
        assert!(kinds[2].contains(&AnnotKind::ParContract), "{kinds:?}");
    }

    fn classify(a: &str, b: &str) -> Vec<Hunk> {
        review(a, &ranges(a), b, &ranges(b), 1)
    }

    const BASE: &str = "\
class C {
  requires n >= 0;
  void m(int n) {
    int i = 0;
    loop_invariant 0 <= i && i <= n;
    while (i < n) {
      i = i + 1;
    }
    int z = 0;
    int w = 1;
    int v = 2;
    int u = 3;
  }
}
";

    #[test]
    fn code_only_change_is_not_an_annotation_hunk() {
        let b = BASE.replace("int v = 2;", "int v = 3;");
        let h = classify(BASE, &b);
        assert_eq!(h.len(), 1);
        assert!(!h[0].is_annotation());
        assert!(!h[0].header().contains("annotations"));
    }

    #[test]
    fn invariant_change_is_an_annotation_hunk_with_its_kind() {
        let b = BASE.replace("i <= n;", "i <= n + 0;");
        let h = classify(BASE, &b);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].kinds.iter().copied().collect::<Vec<_>>(), vec![AnnotKind::LoopInvariant]);
        assert_eq!(h[0].header(), "@@ -4,3 +4,3 @@ annotations: loop invariant");
    }

    #[test]
    fn removed_and_inserted_annotations_classify_on_their_own_side() {
        // Deleted gpuopt line: classified from the original's tree.
        let a = BASE.replace("    int i = 0;\n", "    int i = 0;\n    gpuopt loop_unroll i 1;\n");
        let h = classify(&a, BASE);
        assert_eq!(h.len(), 1);
        assert!(h[0].kinds.contains(&AnnotKind::Gpuopt));
        // Inserted assertion: classified from the optimized file's tree.
        let b = BASE.replace("    int z = 0;\n", "    int z = 0;\n    assert z == 0;\n");
        let h = classify(BASE, &b);
        assert_eq!(h.len(), 1);
        assert!(h[0].kinds.contains(&AnnotKind::Assertion));
    }

    #[test]
    fn separate_hunks_are_classified_separately() {
        let b = BASE
            .replace("requires n >= 0;", "requires n >= 1;")
            .replace("int u = 3;", "int u = 4;");
        let h = classify(BASE, &b);
        assert_eq!(h.len(), 2);
        assert!(h[0].is_annotation());
        assert!(!h[1].is_annotation());
        let text = unified("a", "b", &h);
        assert!(text.starts_with("--- a\n+++ b\n@@ -1,3 +1,3 @@ annotations: contract\n"));
        assert!(text.contains("-  requires n >= 0;\n+  requires n >= 1;\n"));
    }

    #[test]
    fn identical_texts_have_no_hunks_and_no_diff() {
        assert!(classify(BASE, BASE).is_empty());
        assert_eq!(unified("a", "b", &[]), "");
    }

    #[test]
    fn missing_final_newline_is_marked() {
        let a = BASE.trim_end();
        let b = a.replace("int u = 3;", "int u = 5;");
        let text = unified("a", "b", &review(a, &ranges(a), &b, &ranges(&b), 3));
        assert!(text.ends_with("}\n\\ No newline at end of file\n"), "{text}");
    }

    #[test]
    fn hunk_ranges_follow_diff_u() {
        assert_eq!(HunkRange(&(3..3)).to_string(), "3,0");
        assert_eq!(HunkRange(&(3..4)).to_string(), "4");
        assert_eq!(HunkRange(&(3..6)).to_string(), "4,3");
    }
}
