//! Dialect selection (pvl.md §1.2): VerCors 1.4 (`v1`) or VerCors 2 (`v2`).

use super::lexer::{TokKind, Token};
use super::span::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    V1,
    V2,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Dialect::V1 => "v1",
            Dialect::V2 => "v2",
        }
    }
}

/// What the user asked for with `--dialect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DialectChoice {
    #[default]
    Auto,
    V1,
    V2,
}

impl std::str::FromStr for DialectChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(DialectChoice::Auto),
            "v1" => Ok(DialectChoice::V1),
            "v2" => Ok(DialectChoice::V2),
            _ => Err(format!("unknown dialect `{s}` (expected auto, v1 or v2)")),
        }
    }
}

/// Choose the dialect and whether that reading is settled.
pub fn select(src: &str, toks: &[Token], choice: DialectChoice) -> (Dialect, bool) {
    match choice {
        DialectChoice::V1 => return (Dialect::V1, true),
        DialectChoice::V2 => return (Dialect::V2, true),
        DialectChoice::Auto => {}
    }
    let (v1, v2) = markers(src, toks);
    match (v1.is_some(), v2.is_some()) {
        (false, true) => (Dialect::V2, true),
        (true, false) => (Dialect::V1, true),
        // No markers, or both: v1, the dialect of every Alpinist file; the reading is not settled.
        _ => (Dialect::V1, false),
    }
}

/// Where a file under `auto` has syntax of both generations: the first v1-only and the first
/// v2-only token (pvl.md §1.2), for the A0013 warning.
pub fn mixed(src: &str, toks: &[Token], choice: DialectChoice) -> Option<(Span, Span)> {
    if choice != DialectChoice::Auto {
        return None;
    }
    match markers(src, toks) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    }
}

/// Scan tokens for syntax only one generation accepts: the first v1 marker and the first v2
/// marker.
fn markers(src: &str, toks: &[Token]) -> (Option<Span>, Option<Span>) {
    let text = |i: usize| toks.get(i).map_or("", |t: &Token| t.span.text(src));
    let kind = |i: usize| toks.get(i).map_or(TokKind::Eof, |t| t.kind);
    let mut v1: Option<Span> = None;
    let mut v2: Option<Span> = None;
    // Start token of the statement that the current token belongs to.
    let mut stmt_start = 0usize;
    for i in 0..toks.len() {
        let t = text(i);
        match kind(i) {
            TokKind::Decimal | TokKind::Str | TokKind::Char => v2 = v2.or(Some(toks[i].span)),
            TokKind::Word => match t {
                "constructor" if text(i + 1) == "(" || text(i + 1) == "<" => {
                    v2 = v2.or(Some(toks[i].span))
                }
                "run" if text(i + 1) == "{" => v2 = v2.or(Some(toks[i].span)),
                "adt" | "model" if kind(i + 1) == TokKind::Word && text(i + 2) == "{" => {
                    v2 = v2.or(Some(toks[i].span))
                }
                "prover_type" | "prover_function" | "choreography"
                    if kind(i + 1) == TokKind::Word =>
                {
                    v2 = v2.or(Some(toks[i].span))
                }
                "parallel" | "sequential" if text(i + 1) == "{" => v2 = v2.or(Some(toks[i].span)),
                "decreases" if i == stmt_start => v2 = v2.or(Some(toks[i].span)),
                "enum" if kind(i + 1) == TokKind::Word => v2 = v2.or(Some(toks[i].span)),
                "given" | "yields" if text(i + 1) == "{" => v2 = v2.or(Some(toks[i].span)),
                "with" | "then" if text(i + 1) == "{" && i > 0 && text(i - 1) == ")" => {
                    v1 = v1.or(Some(toks[i].span))
                }
                "and" => v1 = v1.or(Some(toks[i].span)),
                "kernel" if kind(i + 1) == TokKind::Word && text(i + 2) == "{" => {
                    v1 = v1.or(Some(toks[i].span))
                }
                "vec" if text(i + 1) == "(" => v1 = v1.or(Some(toks[i].span)),
                "par" if i > 0 && text(i - 1) == ";" => {
                    let s = text(stmt_start);
                    if matches!(s, "requires" | "ensures" | "context")
                        && prev_stmt_is_clause(src, toks, i)
                    {
                        v1 = v1.or(Some(toks[i].span));
                    }
                }
                "for" if text(i + 1) == "(" => {
                    // Ranged for: `..` before the first `;` inside the header.
                    let mut j = i + 2;
                    let mut depth = 0;
                    while j < toks.len() && j < i + 64 {
                        match text(j) {
                            "(" => depth += 1,
                            ")" if depth == 0 => break,
                            ")" => depth -= 1,
                            ";" => break,
                            ".." => {
                                v2 = v2.or(Some(toks[i].span));
                                break;
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                }
                _ => {}
            },
            TokKind::BsWord if t == "\\old" && text(i + 1) == "[" => v2 = v2.or(Some(toks[i].span)),
            _ => {}
        }
        if matches!(t, ";" | "{" | "}") && kind(i) == TokKind::Punct {
            stmt_start = i + 1;
        }
    }
    (v1, v2)
}

/// Does a contract clause statement end right before token `i` (a `par`), and did that clause sit
/// inside a method body (not in front of a method)? Approximated by the clause being preceded by
/// `;`/`{`/`}` of a statement list, which is where a v1 region contract stands.
fn prev_stmt_is_clause(src: &str, toks: &[Token], i: usize) -> bool {
    // Walk back over clause statements to find what precedes the prefix.
    let mut j = i;
    while j > 0 {
        j -= 1;
        let t = toks[j].span.text(src);
        if t == "{" || t == "}" {
            return true;
        }
        if t == ")" {
            // `void m() requires …; par` is impossible; a `)` before the clauses means a method
            // header or a loop header, not a statement list.
            let mut k = j;
            while k > 0 {
                k -= 1;
                let u = toks[k].span.text(src);
                if u == ";" || u == "{" || u == "}" {
                    break;
                }
            }
        }
    }
    false
}
