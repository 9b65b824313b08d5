//! Generated text in a C/CUDA file: the optimizations write PVL fragments (loop invariants
//! before a loop, `assert`s, barrier contracts); here they become CUDA with VerCors'
//! annotation comments, so that every edit on a `.cu` file stays C. Called by the edit engine
//! for every replacement on a C/CUDA text: the one place all output goes through.

use crate::keywords::{CLAUSE_WORDS, SPEC_WORDS};
use crate::lexer::{lex, TokKind};

/// Where an edit lands in the original text.
enum Place {
    Code,
    /// Inside a `//@` comment: every new line must open one too.
    LineAnnotation,
    /// Inside a `/*@ … @*/` comment: text goes in as is.
    BlockAnnotation,
}

fn place(src: &str, at: usize) -> Place {
    for a in super::prep::prepare_comments(src) {
        if a.body.start() <= at && at <= a.body.end() {
            return if src[a.span.range()].starts_with("//") {
                Place::LineAnnotation
            } else {
                Place::BlockAnnotation
            };
        }
    }
    Place::Code
}

/// The CUDA form of replacement `text` for the bytes `lo..hi` of `src`.
pub fn adapt(src: &str, lo: usize, hi: usize, text: &str) -> String {
    if let Some(c) = c_declarator(&src[lo..hi], text) {
        return c;
    }
    match place(src, lo) {
        Place::BlockAnnotation => text.to_string(),
        Place::LineAnnotation => {
            // Continue the annotation on each new line, after its indentation.
            let mut out = String::with_capacity(text.len() + 16);
            for (k, line) in text.split('\n').enumerate() {
                if k > 0 {
                    out.push('\n');
                    let body = line.trim_start();
                    out.push_str(&line[..line.len() - body.len()]);
                    if !body.is_empty() && !body.starts_with("//@") {
                        out.push_str("//@ ");
                    }
                    out.push_str(body);
                } else {
                    out.push_str(line);
                }
            }
            out
        }
        Place::Code => wrap_annotations(&c_type_words(&c_casts(text))),
    }
}

/// A float-to-integer cast, read as the binding `(\let int vct_cast = E; vct_cast)`
/// (`casts.rs`), is the cast `((int) (E))` again in C. Innermost first: the last binding that
/// opens ends at the first `; vct_cast)` after it.
fn c_casts(text: &str) -> String {
    let open = format!("(\\let int {} = ", super::casts::CAST);
    let close = format!("; {})", super::casts::CAST);
    let mut out = text.to_string();
    while let Some(at) = out.rfind(&open) {
        let Some(len) = out[at..].find(&close) else { break };
        let inner = out[at + open.len()..at + len].to_string();
        out.replace_range(at..at + len + close.len(), &format!("((int) ({inner}))"));
    }
    out
}

/// PVL's type words in code become C's (`float32 r = x[t];` is `float r = x[t];`): the
/// optimizations declare temporaries with the element type they read from the tree.
/// A name PVL quotes because it is one of its keywords (`` `in` ``, a common C parameter name)
/// is plain in C code.
fn c_type_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let words = lex(text).tokens;
    let words = words.iter().filter(|t| matches!(t.kind, TokKind::Word | TokKind::QuotedWord));
    for t in words {
        let word = t.span.text(text);
        let c = match word {
            "float32" => "float",
            "float64" => "double",
            "boolean" => "bool",
            _ if t.kind == TokKind::QuotedWord => word.trim_matches('`'),
            _ => continue,
        };
        out.push_str(&text[last..t.span.start()]);
        out.push_str(c);
        last = t.span.end();
    }
    out.push_str(&text[last..]);
    out
}

/// A PVL array type (`int[]`, `int[n * m]`) replacing a C declaration of a name (`int **g`):
/// the same declaration in C (`int *g`, `int g[n * m]`). `None` when `text` is not such a type or
/// `old` does not end with the declared name.
fn c_declarator(old: &str, text: &str) -> Option<String> {
    let t = text.trim();
    let open = t.find('[')?;
    let base = t[..open].trim();
    let dims = &t[open..];
    // A type: the declaration's own base type, or a primitive one.
    let primitive =
        ["int", "bool", "boolean", "float", "double", "char", "long", "short", "unsigned"];
    if base.is_empty() || !(primitive.contains(&base) || old.trim_start().starts_with(base)) {
        return None;
    }
    // The bracket groups, each `[]` or `[E]`.
    let mut groups = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in dims.char_indices() {
        match c {
            '[' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    groups.push(dims[start + 1..i].trim().to_string());
                }
            }
            _ if depth == 0 && !c.is_whitespace() => return None,
            _ => {}
        }
    }
    if old.contains(['(', ';', '{', '=']) {
        return None;
    }
    // The declared name ends the text (`int **g`) or precedes its extents (`int g[N][M]`).
    let head = old.split('[').next().unwrap_or(old).trim_end();
    let name_len =
        head.chars().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
    if name_len == 0 || name_len == head.len() {
        return None;
    }
    let name = &head[head.len() - name_len..];
    // Unsized dimensions are pointers; sized ones are array suffixes.
    let stars = "*".repeat(groups.iter().filter(|g| g.is_empty()).count());
    let suffix: String =
        groups.iter().filter(|g| !g.is_empty()).map(|g| format!("[{g}]")).collect();
    Some(format!("{base} {stars}{name}{suffix}"))
}

/// Wrap the specification statements and clauses of a PVL fragment in annotation comments,
/// and write `barrier(L) { clauses }` as the clauses before `__syncthreads();`.
fn wrap_annotations(text: &str) -> String {
    let toks = lex(text).tokens;
    let word = |i: usize| -> &str {
        toks.get(i).filter(|t| t.kind == TokKind::Word).map_or("", |t| t.span.text(text))
    };
    let punct = |i: usize| -> &str {
        toks.get(i).filter(|t| t.kind == TokKind::Punct).map_or("", |t| t.span.text(text))
    };
    let mut out = String::with_capacity(text.len() + 32);
    let mut pos = 0;
    let mut i = 0;
    let mut at_start = true;
    while i < toks.len() && toks[i].kind != TokKind::Eof {
        let w = word(i);
        let next = punct(i + 1);
        let spec = at_start
            && (CLAUSE_WORDS.contains(&w) || SPEC_WORDS.contains(&w) || w == "ghost")
            && !matches!(next, "=" | "." | "++" | "--" | "+=" | "-=");
        if spec {
            // To the `;` that ends it at depth 0 (a `ghost { … }` block ends at its brace).
            let mut depth = 0i32;
            let mut j = i;
            while j < toks.len() && toks[j].kind != TokKind::Eof {
                match punct(j) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" => depth -= 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 && w == "ghost" {
                            break;
                        }
                    }
                    ";" if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            let (lo, hi) = (toks[i].span.start(), toks.get(j).map_or(text.len(), |t| t.span.end()));
            out.push_str(&text[pos..lo]);
            out.push_str("/*@ ");
            out.push_str(&text[lo..hi]);
            out.push_str(" @*/");
            pos = hi;
            i = j + 1;
            at_start = true;
            continue;
        }
        if at_start
            && w == "barrier"
            && punct(i + 1) == "("
            && punct(i + 3) == ")"
            && punct(i + 4) == "{"
        {
            // `barrier(L) { clauses }` → `/*@ clauses @*/ __syncthreads();`
            let mut j = i + 5;
            let mut depth = 1i32;
            while j < toks.len() && toks[j].kind != TokKind::Eof {
                match punct(j) {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j < toks.len() {
                let inner = text[toks[i + 4].span.end()..toks[j].span.start()].trim();
                out.push_str(&text[pos..toks[i].span.start()]);
                if !inner.is_empty() {
                    out.push_str("/*@ ");
                    out.push_str(inner);
                    out.push_str(" @*/ ");
                }
                out.push_str("__syncthreads();");
                pos = toks[j].span.end();
                i = j + 1;
                at_start = true;
                continue;
            }
        }
        at_start = matches!(punct(i), ";" | "{" | "}");
        i += 1;
    }
    out.push_str(&text[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncating_binding_is_a_cast_in_c() {
        let t = "k = (\\let int vct_cast = (\\let int vct_cast = x * 2.0; vct_cast) + y; vct_cast) + 1;";
        assert_eq!(c_casts(t), "k = ((int) (((int) (x * 2.0)) + y)) + 1;");
    }

    #[test]
    fn clauses_and_assertions_in_code_become_annotation_comments() {
        let t = "a[0] = 1;\n  loop_invariant 1 <= k && k <= m;\n  for (int k = 1; k < m; k++) { assert k > 0; x = k; }";
        let w = wrap_annotations(t);
        assert!(w.contains("/*@ loop_invariant 1 <= k && k <= m; @*/"), "{w}");
        assert!(w.contains("/*@ assert k > 0; @*/ x = k;"), "{w}");
        assert!(w.starts_with("a[0] = 1;"));
    }

    #[test]
    fn a_barrier_becomes_syncthreads_with_its_contract() {
        let w = wrap_annotations(
            "x = 1;\nbarrier(cuda_block) {\n  context Perm(a[t], write);\n}\ny = 2;",
        );
        assert_eq!(w, "x = 1;\n/*@ context Perm(a[t], write); @*/ __syncthreads();\ny = 2;");
    }

    #[test]
    fn a_pvl_array_type_replacing_a_c_declaration_is_written_in_c() {
        assert_eq!(c_declarator("int **g", "int[]").as_deref(), Some("int *g"));
        assert_eq!(c_declarator("int g[N][M]", "int[N * M]").as_deref(), Some("int g[N * M]"));
        assert_eq!(c_declarator("a[i][j]", "x[i]"), None);
    }

    #[test]
    fn text_inside_a_line_annotation_continues_it() {
        let src = "//@ loop_invariant x;\nfor (;;) {}\n";
        let out = adapt(src, 4, 4, "loop_invariant y;\nloop_invariant z;");
        assert_eq!(out, "loop_invariant y;\n//@ loop_invariant z;");
    }
}
