//! Round-trip tests (pvl.md §8) over the shared corpus and `fixtures/syntax`.
//!
//! For every file (one test each):
//! * **R-exact**: applying an empty edit set reproduces the input byte for byte, and every span
//!   the parser records lies inside the text, on character boundaries, nested in its parent's;
//! * **R-canon**: parse → `print_program` → parse gives a structurally equal AST (spans are
//!   ignored by `==`), in the file's dialect; for a v1 file, also when the print is read as v2
//!   (the printer is dialect-neutral), and the print never draws the dialect warning A0010;
//! * **fixpoint**: printing the re-parsed AST gives the same text again.
//!
//! The file lists are explicit so that each file is its own test; `every_file_is_listed` fails
//! when a file is added to a folder without being added here.

mod common;

use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::edit::EditSet;
use alpine_rs::front::ast::*;
use alpine_rs::front::printer::print_program;
use alpine_rs::front::{parse, Dialect, DialectChoice, ParseOptions, Parsed, Span};
use common::{corpus_dir, parse_options};
use std::path::{Path, PathBuf};

fn fixture_dir() -> PathBuf {
    common::root().join("fixtures/syntax")
}

fn explicit(d: Dialect) -> ParseOptions {
    ParseOptions {
        dialect: match d {
            Dialect::V1 => DialectChoice::V1,
            Dialect::V2 => DialectChoice::V2,
        },
    }
}

fn rendered(name: &str, src: &str, p: &Parsed) -> String {
    let file = SourceFile::new(name, src);
    let errors: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error()).cloned().collect();
    render_plain(&[&file], &errors)
}

/// Pretty `Debug` without the position lines (`span: 3..7,`), which always differ.
fn debug_without_spans<T: std::fmt::Debug>(x: &T) -> String {
    format!("{x:#?}")
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            let is_pos = |rest: &str| {
                rest.strip_suffix(',')
                    .and_then(|r| r.split_once(".."))
                    .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
            };
            !(t.strip_prefix("span: ").is_some_and(is_pos)
                || t.strip_prefix("keyword: ").is_some_and(is_pos))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A readable diff of the first top-level item where two programs differ.
fn first_difference(a: &Program, b: &Program) -> String {
    let items = a.items.iter().zip(&b.items).find(|(x, y)| x != y);
    let (left, right) = match items {
        Some((x, y)) => (debug_without_spans(x), debug_without_spans(y)),
        None if a.items.len() != b.items.len() => {
            (format!("{} items", a.items.len()), format!("{} items", b.items.len()))
        }
        None => (debug_without_spans(&a.main), debug_without_spans(&b.main)),
    };
    similar::TextDiff::from_lines(&left, &right)
        .unified_diff()
        .context_radius(4)
        .header("parsed", "re-parsed")
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// Span sanity (what the edit engine relies on)
// ---------------------------------------------------------------------------------------------

struct SpanCheck<'a> {
    src: &'a str,
    errors: Vec<String>,
}

impl SpanCheck<'_> {
    fn check(&mut self, what: &str, s: Span, parent: Span) {
        let ok = s.lo <= s.hi
            && s.end() <= self.src.len()
            && self.src.is_char_boundary(s.start())
            && self.src.is_char_boundary(s.end())
            && parent.contains(s);
        if !ok {
            self.errors.push(format!(
                "{what} span {s:?} is not inside its parent {parent:?} (text {:?})",
                s.text(self.src)
            ));
        }
    }

    fn method(&mut self, m: &Method, parent: Span) {
        self.check("method", m.span, parent);
        self.check("method prefix", m.prefix.span, m.span);
        for c in &m.prefix.clauses {
            self.check("clause", c.span, m.prefix.span);
        }
        for a in &m.prefix.annotations {
            self.check("annotation", a.span, m.prefix.span);
        }
        if let MethodBody::Block(b) = &m.body {
            self.block(b, m.span);
        }
    }

    fn block(&mut self, b: &Block, parent: Span) {
        self.check("block", b.span, parent);
        for s in &b.stmts {
            self.stmt(s, b.span);
        }
    }

    fn stmt(&mut self, s: &Stmt, parent: Span) {
        self.check("statement", s.span, parent);
        let sp = s.span;
        match &s.kind {
            StmtKind::Block(b) => self.block(b, sp),
            StmtKind::If { then, els, .. } => {
                self.stmt(then, sp);
                if let Some(e) = els {
                    self.stmt(e, sp);
                }
            }
            StmtKind::While(l) | StmtKind::For(l) => {
                self.check("loop keyword", l.keyword, sp);
                for c in &l.prefix.clauses {
                    self.check("loop clause", c.span, sp);
                }
                self.stmt(&l.body, sp);
            }
            StmtKind::RangedFor { body, .. } | StmtKind::Ghost(body) => self.stmt(body, sp),
            StmtKind::Par(p) => {
                self.check("par keyword", p.keyword, sp);
                for arm in &p.arms {
                    self.check("par arm", arm.span, sp);
                    for c in &arm.contract {
                        self.check("par clause", c.span, arm.span);
                    }
                    self.stmt(&arm.body, arm.span);
                }
            }
            StmtKind::Parallel { body, .. } => {
                for s in body {
                    self.stmt(s, sp);
                }
            }
            StmtKind::Barrier(b) => {
                for c in &b.contract {
                    self.check("barrier clause", c.span, sp);
                }
                if let Some(body) = &b.body {
                    self.block(body, sp);
                }
            }
            StmtKind::Invariant { body, .. } | StmtKind::Atomic { body, .. } => {
                self.block(body, sp)
            }
            StmtKind::Opaque(o) if o.text != o.span.text(self.src) => {
                self.errors.push(format!("opaque text differs from its span at {sp:?}"));
            }
            _ => {}
        }
    }
}

fn check_spans(src: &str, p: &Program) -> Vec<String> {
    let mut c = SpanCheck { src, errors: Vec::new() };
    let whole = Span::new(0, src.len());
    let mut prev_end = 0;
    for item in &p.items {
        let sp = item.span();
        if sp.start() < prev_end {
            c.errors.push(format!("item at {sp:?} overlaps the previous one"));
        }
        prev_end = sp.end();
        match item {
            Item::Class(cl) => {
                c.check("class", cl.span, whole);
                for m in &cl.members {
                    match m {
                        Member::Method(m) => c.method(m, cl.span),
                        Member::Field(f) => c.check("field", f.span, cl.span),
                    }
                }
            }
            Item::Method(m) => c.method(m, whole),
            Item::Field(f) => c.check("field", f.span, whole),
            Item::Adt(a) => c.check("adt", a.span, whole),
            Item::Opaque(o) => c.check("opaque item", o.span, whole),
        }
    }
    if let Some(b) = &p.main {
        c.block(b, whole);
    }
    c.errors
}

// ---------------------------------------------------------------------------------------------
// The round trip
// ---------------------------------------------------------------------------------------------

fn check_round_trip(path: &Path) {
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));

    // R-exact.
    assert_eq!(EditSet::new().apply(&src).unwrap(), src, "{name}: empty edit set");
    let p1 = parse(&src, &parse_options(&src));
    assert!(!p1.has_errors(), "{name} does not parse:\n{}", rendered(&name, &src, &p1));
    let span_errors = check_spans(&src, &p1.program);
    assert!(span_errors.is_empty(), "{name}:\n{}", span_errors.join("\n"));

    // R-canon.
    let printed = print_program(&p1.program, p1.dialect);
    let p2 = parse(&printed, &explicit(p1.dialect));
    assert!(
        !p2.has_errors(),
        "{name}: the canonical print does not parse:\n{}\n--- print ---\n{printed}",
        rendered("<print>", &printed, &p2)
    );
    assert!(
        p2.program == p1.program,
        "{name}: the canonical print parses to another AST:\n{}\n--- print ---\n{printed}",
        first_difference(&p1.program, &p2.program)
    );
    let sensitive: Vec<_> = p2.diagnostics.iter().filter(|d| d.code == "A0010").collect();
    assert!(
        sensitive.is_empty(),
        "{name}: the canonical print is dialect-sensitive: {sensitive:?}\n{printed}"
    );
    assert!(
        !printed.lines().any(|l| l.ends_with([' ', '\t'])),
        "{name}: trailing whitespace in the print:\n{printed}"
    );

    // Fixpoint.
    let again = print_program(&p2.program, p1.dialect);
    assert_eq!(again, printed, "{name}: print∘parse∘print differs from print");

    // Dialect-neutral: a v1 program's print reads the same in v2.
    if p1.dialect == Dialect::V1 {
        let p3 = parse(&printed, &explicit(Dialect::V2));
        assert!(
            !p3.has_errors() && p3.program == p1.program,
            "{name}: the print reads differently in v2:\n{}{}",
            rendered("<print>", &printed, &p3),
            first_difference(&p1.program, &p3.program)
        );
    }
}

/// The `.pvl` files below `dir` but not below `skip`, relative to `dir`.
fn pvl_files_under(dir: &Path, skip: &Path) -> Vec<String> {
    common::files(dir, "pvl")
        .into_iter()
        .filter(|p| !p.starts_with(skip))
        .map(|p| {
            let rel = p.strip_prefix(dir).unwrap();
            rel.to_string_lossy().replace('\\', "/")
        })
        .collect()
}

macro_rules! round_trip_tests {
    ($dir:expr, $skip:expr; $($name:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $name() {
                super::check_round_trip(&$dir.join($file));
            }
        )*

        #[test]
        fn every_file_is_listed() {
            let listed: Vec<&str> = vec![$($file),*];
            let dir = $dir;
            let found = super::pvl_files_under(&dir, &dir.join($skip));
            let missing: Vec<_> = found.iter().filter(|f| !listed.contains(&f.as_str())).collect();
            assert!(missing.is_empty(), "add these files to the list: {missing:?}");
            assert!(found.len() == listed.len(), "listed files are missing on disk");
        }
    };
}

mod corpus {
    use super::corpus_dir;
    round_trip_tests! { corpus_dir(), "syntax/bad";
        chain_ok_fuse_unroll_prefetch => "chain/ok_fuse_unroll_prefetch.pvl",
        fuse_ok_four_kernels => "fuse/ok_four_kernels.pvl",
        fuse_ok_independent_arrays => "fuse/ok_independent_arrays.pvl",
        fuse_ok_neighbour_barrier => "fuse/ok_neighbour_barrier.pvl",
        fuse_ok_readonly_shared => "fuse/ok_readonly_shared.pvl",
        fuse_ok_same_index_flow => "fuse/ok_same_index_flow.pvl",
        fuse_ok_symbolic_length => "fuse/ok_symbolic_length.pvl",
        fuse_ok_three_kernels => "fuse/ok_three_kernels.pvl",
        fuse_reject_cross_block_dependency => "fuse/reject_cross_block_dependency.pvl",
        fuse_reject_different_ranges => "fuse/reject_different_ranges.pvl",
        fuse_reject_not_enough_kernels => "fuse/reject_not_enough_kernels.pvl",
        fuse_reject_statement_between => "fuse/reject_statement_between.pvl",
        linearize_ok_colmajor_update => "linearize/ok_colmajor_update.pvl",
        linearize_ok_identity_contract => "linearize/ok_identity_contract.pvl",
        linearize_ok_mixed_layout_add => "linearize/ok_mixed_layout_add.pvl",
        linearize_ok_rotate => "linearize/ok_rotate.pvl",
        linearize_ok_rowmajor_fill => "linearize/ok_rowmajor_fill.pvl",
        linearize_reject_dims_disagree => "linearize/reject_dims_disagree.pvl",
        merge_ok_const_divisible => "merge/ok_const_divisible.pvl",
        merge_ok_const_remainder => "merge/ok_const_remainder.pvl",
        merge_ok_mul_update => "merge/ok_mul_update.pvl",
        merge_ok_step5_remainder => "merge/ok_step5_remainder.pvl",
        merge_ok_sub_update => "merge/ok_sub_update.pvl",
        merge_ok_symbolic_mod4 => "merge/ok_symbolic_mod4.pvl",
        merge_ok_symbolic_nofact => "merge/ok_symbolic_nofact.pvl",
        merge_reject_affine_update => "merge/reject_affine_update.pvl",
        merge_reject_m_exceeds_trip => "merge/reject_m_exceeds_trip.pvl",
        merge_reject_m_one => "merge/reject_m_one.pvl",
        merge_reject_square_update => "merge/reject_square_update.pvl",
        prefetch_ok_abs_multi_read => "prefetch/ok_abs_multi_read.pvl",
        prefetch_ok_barrier_segments => "prefetch/ok_barrier_segments.pvl",
        prefetch_ok_conditional_left => "prefetch/ok_conditional_left.pvl",
        prefetch_ok_forall_tid_domain => "prefetch/ok_forall_tid_domain.pvl",
        prefetch_ok_loop_in_segment => "prefetch/ok_loop_in_segment.pvl",
        prefetch_ok_paren_location => "prefetch/ok_paren_location.pvl",
        prefetch_ok_saturating_rmw => "prefetch/ok_saturating_rmw.pvl",
        prefetch_ok_two_arrays => "prefetch/ok_two_arrays.pvl",
        prefetch_reject_index_changes_in_segment => "prefetch/reject_index_changes_in_segment.pvl",
        prefetch_warn_forall_only => "prefetch/warn_forall_only.pvl",
        prefetch_warn_single_use => "prefetch/warn_single_use.pvl",
        prefetch_warn_unused_location => "prefetch/warn_unused_location.pvl",
        syntax_arrays_matrix => "syntax/arrays_matrix.pvl",
        syntax_atomic_invariant => "syntax/atomic_invariant.pvl",
        syntax_barrier_forms => "syntax/barrier_forms.pvl",
        syntax_comments_pure => "syntax/comments_pure.pvl",
        syntax_fractions_perm => "syntax/fractions_perm.pvl",
        syntax_ghost_seq => "syntax/ghost_seq.pvl",
        syntax_given_yields => "syntax/given_yields.pvl",
        syntax_host_loop_kernel => "syntax/host_loop_kernel.pvl",
        syntax_kernel_forms => "syntax/kernel_forms.pvl",
        syntax_logic_let => "syntax/logic_let.pvl",
        syntax_loops => "syntax/loops.pvl",
        syntax_old_ternary_ifelse => "syntax/old_ternary_ifelse.pvl",
        syntax_par_and_blocks => "syntax/par_and_blocks.pvl",
        syntax_par_nested_blocks => "syntax/par_nested_blocks.pvl",
        syntax_par_two_iterators => "syntax/par_two_iterators.pvl",
        syntax_predicates_fields => "syntax/predicates_fields.pvl",
        syntax_quantifiers => "syntax/quantifiers.pvl",
        tile_ok_inter_nondividing => "tile/ok_inter_nondividing.pvl",
        tile_ok_intra_nondividing => "tile/ok_intra_nondividing.pvl",
        tile_ok_scale_intra => "tile/ok_scale_intra.pvl",
        tile_ok_symbolic_count => "tile/ok_symbolic_count.pvl",
        tile_ok_symbolic_intra_strict => "tile/ok_symbolic_intra_strict.pvl",
        tile_ok_vadd_inter => "tile/ok_vadd_inter.pvl",
        tile_reject_fact_too_weak => "tile/reject_fact_too_weak.pvl",
        tile_reject_no_count_fact => "tile/reject_no_count_fact.pvl",
        tile_reject_size_equals_count => "tile/reject_size_equals_count.pvl",
        tile_reject_size_one => "tile/reject_size_one.pvl",
        unroll_ok_for_mul_const => "unroll/ok_for_mul_const.pvl",
        unroll_ok_for_symbolic_bound => "unroll/ok_for_symbolic_bound.pvl",
        unroll_ok_loop_in_par => "unroll/ok_loop_in_par.pvl",
        unroll_ok_nested_both => "unroll/ok_nested_both.pvl",
        unroll_ok_nested_inner => "unroll/ok_nested_inner.pvl",
        unroll_ok_nested_outer => "unroll/ok_nested_outer.pvl",
        unroll_ok_while_add_const => "unroll/ok_while_add_const.pvl",
        unroll_ok_while_div_const => "unroll/ok_while_div_const.pvl",
        unroll_ok_while_sub_const => "unroll/ok_while_sub_const.pvl",
        unroll_reject_k_exceeds_trip => "unroll/reject_k_exceeds_trip.pvl",
        unroll_reject_k_zero => "unroll/reject_k_zero.pvl",
        unroll_reject_missing_bound_fact => "unroll/reject_missing_bound_fact.pvl",
        unroll_reject_symbolic_k_too_large => "unroll/reject_symbolic_k_too_large.pvl",
        unroll_reject_two_updates => "unroll/reject_two_updates.pvl",
        unroll_reject_var_not_updated => "unroll/reject_var_not_updated.pvl",
    }
}

mod fixtures {
    use super::fixture_dir;
    round_trip_tests! { fixture_dir(), "no-skip";
        barriers_atomics => "barriers_atomics.pvl",
        calls => "calls.pvl",
        comments_everywhere => "comments_everywhere.pvl",
        contextual_names => "contextual_names.pvl",
        crlf_tabs => "crlf_tabs.pvl",
        declarations => "declarations.pvl",
        fractions_permissions => "fractions_permissions.pvl",
        front_types => "front_types.pvl",
        gpuopt_forms => "gpuopt_forms.pvl",
        loops_forms => "loops_forms.pvl",
        methods_functions => "methods_functions.pvl",
        operators => "operators.pvl",
        par_forms => "par_forms.pvl",
        quantifiers_forms => "quantifiers_forms.pvl",
        sequences_builtins => "sequences_builtins.pvl",
        spec_statements => "spec_statements.pvl",
        v2_extras => "v2_extras.pvl",
        v2_declarations => "v2_declarations.pvl",
        v2_statements => "v2_statements.pvl",
        v2_expressions => "v2_expressions.pvl",
    }
}

/// pvl.md §8.7: the dialect-sensitive mixes round-trip and draw A0010, once each.
#[test]
fn dialect_sensitive_mixes_warn() {
    for (file, expected) in [("operators.pvl", 3), ("v2_extras.pvl", 2)] {
        let src = std::fs::read_to_string(fixture_dir().join(file)).unwrap();
        let p = parse(&src, &parse_options(&src));
        let warned: Vec<&str> = p
            .diagnostics
            .iter()
            .filter(|d| d.code == "A0010")
            .filter_map(|d| d.primary_span())
            .map(|s| s.text(&src))
            .collect();
        assert_eq!(warned.len(), expected, "{file}: {warned:?}");
        assert_eq!(p.sensitive.len(), expected, "{file}");
    }
}
