//! Classes split over the files of one program.
//!
//! VerCors' examples form programs of several files in which a class used by all of them is
//! declared in each (a test case that includes a shared file may restate a class it needs, as
//! `manual/loop.pvl` restates the `Counter` of `manual/permissions.pvl`), and VerCors verifies
//! such a program. When files are verified as one program (`verify --program`), a class
//! declared in several of them is one class: the union of its members, where a member declared
//! in more than one file must be declared identically (same text up to whitespace and
//! comments). Anything else is a conflict, reported with both declarations; two declarations
//! of a class in one file stay an error (the encoder reports them).

use super::ast::{Item, Member, Program};
use super::span::Span;
use diag::Diagnostic;

/// Merge the classes of `prog` (parsed from the files joined at offsets `bases`) that are
/// declared in several files. Returns the conflicts; `prog` is only changed when there are none.
pub fn merge_split_classes(prog: &mut Program, text: &str, bases: &[usize]) -> Vec<Diagnostic> {
    let file_of = |s: Span| bases.partition_point(|&b| b <= s.start());
    let mut diags = Vec::new();
    // For each class name: the index of its first declaration, and the files seen.
    let mut first: Vec<(String, usize, Vec<usize>)> = Vec::new();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (i, item) in prog.items.iter().enumerate() {
        let Item::Class(c) = item else { continue };
        let f = file_of(c.name.span);
        match first.iter_mut().find(|(n, _, _)| *n == c.name.name) {
            Some((_, j, files)) if !files.contains(&f) => {
                files.push(f);
                merged.push((*j, i));
            }
            // Declared twice in one file: the encoder's error.
            Some(_) => {}
            None => first.push((c.name.name.clone(), i, vec![f])),
        }
    }
    if merged.is_empty() {
        return diags;
    }
    let norm = |s: Span| -> String {
        let t = text.get(s.start()..s.end()).unwrap_or_default();
        strip_comments(t).split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let mut plan: Vec<(usize, Vec<Member>)> = Vec::new();
    for &(j, i) in &merged {
        let (Item::Class(keep), Item::Class(other)) = (&prog.items[j], &prog.items[i]) else {
            continue;
        };
        let known: Vec<&Member> = plan
            .iter()
            .filter(|(k, _)| *k == j)
            .flat_map(|(_, ms)| ms.iter())
            .chain(&keep.members)
            .collect();
        let keep_names: Vec<String> = known.iter().flat_map(|m| member_names(m)).collect();
        if keep.type_params.iter().map(|t| &t.name).ne(other.type_params.iter().map(|t| &t.name)) {
            diags.push(conflict(
                &keep.name.name,
                "type parameters",
                keep.name.span,
                other.name.span,
            ));
            continue;
        }
        // A class contract is stated once: another declaration may repeat it, not change it.
        let contract = |c: &super::ast::Class| -> Vec<String> {
            c.contract.iter().map(|k| norm(k.span)).collect()
        };
        if !other.contract.is_empty() && contract(keep) != contract(other) {
            let at = |c: &super::ast::Class| c.contract.first().map_or(c.name.span, |k| k.span);
            diags.push(conflict(&keep.name.name, "class contract", at(keep), at(other)));
            continue;
        }
        let mut extra = Vec::new();
        for m in &other.members {
            let names = member_names(m);
            let same = known.iter().find(|k| member_names(k) == names);
            match same {
                Some(k) if norm(k.span()) == norm(m.span()) => {}
                Some(k) => diags.push(conflict(
                    &keep.name.name,
                    &format!("`{}`", names.join("`, `")),
                    k.span(),
                    m.span(),
                )),
                None if names.iter().any(|n| keep_names.contains(n)) => diags.push(conflict(
                    &keep.name.name,
                    &format!("`{}`", names.join("`, `")),
                    keep.name.span,
                    m.span(),
                )),
                None => extra.push(m.clone()),
            }
        }
        plan.push((j, extra));
    }
    if !diags.is_empty() {
        return diags;
    }
    for (j, extra) in plan {
        if let Some(Item::Class(c)) = prog.items.get_mut(j) {
            c.members.extend(extra);
        }
    }
    // What an analysis memoised about the unmerged program no longer holds.
    prog.memo = super::ast::Memo::default();
    let gone: Vec<usize> = merged.iter().map(|&(_, i)| i).collect();
    let mut k = 0;
    prog.items.retain(|_| {
        k += 1;
        !gone.contains(&(k - 1))
    });
    diags
}

fn member_names(m: &Member) -> Vec<String> {
    match m {
        Member::Field(f) => f.names.iter().map(|n| n.name.clone()).collect(),
        Member::Method(m) => vec![m.name.name.clone()],
    }
}

fn conflict(class: &str, what: &str, first: Span, second: Span) -> Diagnostic {
    Diagnostic::error(
        "V-BAD-INPUT",
        format!("class `{class}` is declared in two files with different {what}"),
    )
    .with_primary(second, "declared here")
    .with_secondary(first, "and differently here")
    .with_help(
        "a class declared in several files of one program must declare every shared member \
         identically; keep one declaration of it",
    )
}

/// `t` without `//` and `/* */` comments (string literals do not occur in declarations'
/// comparison-relevant text often enough to matter: a comment marker inside one only makes
/// two equal declarations compare unequal, which reports a conflict, never hides one).
fn strip_comments(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut rest = t;
    while let Some(i) = rest.find('/') {
        out.push_str(&rest[..i]);
        let after = &rest[i..];
        if after.starts_with("//") {
            rest = after.find('\n').map_or("", |n| &after[n..]);
        } else if let Some(inner) = after.strip_prefix("/*") {
            rest = inner.find("*/").map_or("", |n| &inner[n + 2..]);
            out.push(' ');
        } else {
            out.push('/');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, ParseOptions};

    fn merged(files: &[&str]) -> (Program, Vec<Diagnostic>) {
        let mut text = String::new();
        let mut bases = Vec::new();
        for f in files {
            bases.push(text.len());
            text.push_str(f);
            text.push('\n');
        }
        let mut p = parse(&text, &ParseOptions::default()).program;
        let d = merge_split_classes(&mut p, &text, &bases);
        (p, d)
    }

    fn classes(p: &Program) -> Vec<(String, Vec<String>)> {
        p.items
            .iter()
            .filter_map(|i| match i {
                Item::Class(c) => {
                    Some((c.name.name.clone(), c.members.iter().flat_map(member_names).collect()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_class_restated_in_another_file_is_one_class() {
        let a = "class C { int x; void inc() { x = x + 1; } }";
        let b = "class C {\n  int x; // the same field\n}\nclass D { C c; }";
        let (p, d) = merged(&[a, b]);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            classes(&p),
            [("C".to_string(), vec!["x".into(), "inc".into()]), ("D".into(), vec!["c".into()])]
        );
        let a = "class C { int f() { return 1; /* one */ } }";
        let b = "class C {\n  int f() {\n    return 1; // one\n  }\n}";
        let (p, d) = merged(&[a, b]);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(classes(&p), [("C".to_string(), vec!["f".into()])]);
        let (p, d) = merged(&["class C { int x; }", "class C { int y; }"]);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(classes(&p), [("C".to_string(), vec!["x".into(), "y".into()])]);
    }

    #[test]
    fn different_declarations_of_a_member_conflict() {
        let (p, d) = merged(&["class C { int x; }", "class C { boolean x; }"]);
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("`x`"), "{}", d[0].message);
        assert_eq!(classes(&p).len(), 2, "unchanged on a conflict");
        let (_, d) =
            merged(&["class C { int f() { return 1; } }", "class C { int f() { return 2; } }"]);
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn two_declarations_in_one_file_are_left_to_the_encoder() {
        let (p, d) = merged(&["class C { int x; } class C { int y; }"]);
        assert!(d.is_empty());
        assert_eq!(classes(&p).len(), 2);
    }
}
