//! Lexer for PVL (pvl.md §2).
//!
//! Produces a flat token vector. Comments and whitespace are skipped: the original text is the
//! lossless representation, and every token keeps its byte span into it. Each token also records
//! whether whitespace or a comment precedes it, which the parser needs for the few spacing-
//! sensitive spots of the grammar (`gpuopt` operand lists, `b{`).

use super::keywords::{BS_WORDS, HARD_KEYWORDS, VALUE_WORDS};
use super::span::Span;
use diag::Diagnostic;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    /// Identifier or keyword (keywords are classified by the parser, many are contextual).
    Word,
    /// A backticked identifier `` `x` ``; the token text includes the backticks.
    QuotedWord,
    /// Decimal integer literal.
    Int,
    /// v2 decimal number `1.5`, `2.0f`.
    Decimal,
    /// v2 string literal.
    Str,
    /// v2 character literal.
    Char,
    /// A backslash word from the known list (`\forall`, `\old`, …) or a Unicode quantifier.
    BsWord,
    /// Operator or punctuation.
    Punct,
    Eof,
}

#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub kind: TokKind,
    pub span: Span,
    /// Whitespace or a comment directly precedes the token.
    pub space_before: bool,
    /// A `Word` that is a hard keyword or a value word (`true`, `write`, …), so never an
    /// identifier. Decided once here: the parser asks it several times per token.
    pub reserved: bool,
}

/// Multi-character punctuation, longest first within each common prefix.
#[cfg(test)]
const PUNCTS: &[&str] = &[
    "==>", "{:", ":}", "..", "::", "++", "--", "->", "-*", "**", "&&", "||", "==", "!=", "<=",
    ">=", "^^", "?.", "+=", "-=", "*=", "/=", "%=",
];

/// Is `\word` a single backslash-word token? (`word` without the backslash.) The printer uses
/// this to keep `1\n` from turning into a backslash word.
pub fn is_bs_word(word: &str) -> bool {
    BS_WORDS.contains(&word)
}

#[cfg(test)]
const SINGLE: &[u8] = b"(){}[],;.:?!=<>+-*/%\\|&^@#$~";

/// Length of the punctuation token at `i` (the first of `PUNCTS` that matches, else one byte of
/// `SINGLE`), by byte comparisons: this runs for every operator of the file.
fn punct_len(bytes: &[u8], i: usize) -> Option<usize> {
    let c = bytes[i];
    let n = bytes.get(i + 1).copied().unwrap_or(0);
    if c == b'=' && n == b'=' && bytes.get(i + 2) == Some(&b'>') {
        return Some(3);
    }
    let two = matches!(
        (c, n),
        (b'{', b':')
            | (b':', b'}' | b':')
            | (b'.', b'.')
            | (b'+', b'+' | b'=')
            | (b'-', b'-' | b'>' | b'*' | b'=')
            | (b'*', b'*' | b'=')
            | (b'&', b'&')
            | (b'|', b'|')
            | (b'=' | b'!' | b'<' | b'>' | b'/' | b'%', b'=')
            | (b'^', b'^')
            | (b'?', b'.')
    );
    if two {
        return Some(2);
    }
    matches!(
        c,
        b'(' | b')'
            | b'{'
            | b'}'
            | b'['
            | b']'
            | b','
            | b';'
            | b'.'
            | b':'
            | b'?'
            | b'!'
            | b'='
            | b'<'
            | b'>'
            | b'+'
            | b'-'
            | b'*'
            | b'/'
            | b'%'
            | b'\\'
            | b'|'
            | b'&'
            | b'^'
            | b'@'
            | b'#'
            | b'$'
            | b'~'
    )
    .then_some(1)
}

pub struct Lexed {
    pub tokens: Vec<Token>,
    pub errors: Vec<Diagnostic>,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

pub fn lex(src: &str) -> Lexed {
    let bytes = src.as_bytes();
    // About one token per four bytes of PVL: sized once, since growing a vector of this size
    // touches fresh pages at every doubling (measured: a fifth of a large parse).
    let mut tokens = Vec::with_capacity(src.len() / 4 + 16);
    let mut errors = Vec::new();
    let mut i = 0usize;
    // A UTF-8 byte-order mark is kept in the text and ignored here.
    if src.starts_with('\u{feff}') {
        i = 3;
    }
    let mut space = false;
    while i < bytes.len() {
        let b = bytes[i];
        // Trivia.
        if matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0c) {
            i += 1;
            space = true;
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            space = true;
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            match src[i + 2..].find("*/") {
                Some(end) => i = i + 2 + end + 2,
                None => {
                    errors.push(
                        Diagnostic::error("A0001", "unterminated block comment")
                            .with_primary(Span::new(i, i + 2), "comment starts here")
                            .with_help("close the comment with `*/`"),
                    );
                    i = bytes.len();
                }
            }
            space = true;
            continue;
        }
        // VerCors' test markers `[/expect code]` and `[/end]` are trivia for its lexer too,
        // also outside comments.
        if b == b'[' && bytes.get(i + 1) == Some(&b'/') {
            if let Some(n) = expect_marker(&src[i..]) {
                i += n;
                space = true;
                continue;
            }
        }
        if b == b'#' {
            // v1 "embedded LaTeX" comment: `#…#` on one line.
            let line_end = src[i + 1..].find('\n').map_or(bytes.len(), |e| i + 1 + e);
            if let Some(close) = src[i + 1..line_end].find('#') {
                i = i + 1 + close + 1;
                space = true;
                continue;
            }
        }
        let start = i;
        let kind;
        if is_ident_start(b) {
            while i < bytes.len() && is_ident_char(bytes[i]) {
                i += 1;
            }
            kind = TokKind::Word;
        } else if b.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            // A `.` starts a fraction only if a digit follows (so `0..n` is `0`, `..`, `n`).
            if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                if matches!(bytes.get(i), Some(b'f' | b'F' | b'd' | b'D')) {
                    i += 1;
                }
                kind = TokKind::Decimal;
            } else {
                kind = TokKind::Int;
            }
        } else if b == b'\\' {
            let mut j = i + 1;
            while j < bytes.len() && is_ident_char(bytes[j]) {
                j += 1;
            }
            let word = &src[i + 1..j];
            if BS_WORDS.contains(&word) {
                if word == "forall" && bytes.get(j) == Some(&b'*') {
                    j += 1;
                }
                i = j;
                kind = TokKind::BsWord;
            } else {
                i += 1;
                kind = TokKind::Punct;
            }
        } else if b == b'`' {
            match src[i + 1..].find(['`', '\n']) {
                Some(e) if bytes[i + 1 + e] == b'`' && e > 0 => {
                    i = i + 1 + e + 1;
                    kind = TokKind::QuotedWord;
                }
                _ => {
                    errors.push(
                        Diagnostic::error("A0001", "unterminated backticked identifier")
                            .with_primary(Span::new(i, i + 1), "opened here")
                            .with_help("close the identifier with a backtick on the same line"),
                    );
                    i += 1;
                    space = true;
                    continue;
                }
            }
        } else if b == b'"' || b == b'\'' {
            let quote = b;
            let mut j = i + 1;
            let mut closed = false;
            while j < bytes.len() && bytes[j] != b'\n' {
                if bytes[j] == b'\\' {
                    j += 2;
                    continue;
                }
                if bytes[j] == quote {
                    closed = true;
                    j += 1;
                    break;
                }
                j += 1;
            }
            if !closed {
                errors.push(
                    Diagnostic::error("A0001", "unterminated literal")
                        .with_primary(Span::new(i, (j).min(bytes.len())), "literal starts here")
                        .with_help("close the literal on the same line"),
                );
            }
            i = j.min(bytes.len());
            kind = if quote == b'"' { TokKind::Str } else { TokKind::Char };
        } else if src[i..].starts_with('∀') || src[i..].starts_with('∃') {
            i += 3;
            if src[..i].ends_with('∀') && bytes.get(i) == Some(&b'*') {
                i += 1;
            }
            kind = TokKind::BsWord;
        } else if let Some(len) = punct_len(bytes, i) {
            i += len;
            kind = TokKind::Punct;
        } else {
            let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
            let len = ch.len_utf8().max(1);
            errors.push(
                Diagnostic::error("A0001", format!("unexpected character `{}`", ch.escape_debug()))
                    .with_primary(Span::new(i, i + len), "not valid in PVL")
                    .with_help("remove this character"),
            );
            i += len;
            space = true;
            continue;
        }
        let reserved = kind == TokKind::Word && {
            let w = &src[start..i];
            HARD_KEYWORDS.contains(&w) || VALUE_WORDS.contains(&w)
        };
        tokens.push(Token { kind, span: Span::new(start, i), space_before: space, reserved });
        space = false;
    }
    tokens.push(Token {
        kind: TokKind::Eof,
        span: Span::new(bytes.len(), bytes.len()),
        space_before: true,
        reserved: false,
    });
    Lexed { tokens, errors }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        lex(src)
            .tokens
            .iter()
            .filter(|t| t.kind != TokKind::Eof)
            .map(|t| t.span.text(src))
            .collect()
    }

    /// `punct_len` is the table lookup it replaces: the first of `PUNCTS` that starts at the
    /// position, else one byte of `SINGLE`. Checked on every string of up to three bytes over
    /// the punctuation alphabet and a few other bytes.
    #[test]
    fn punct_len_matches_the_tables() {
        let mut alphabet: Vec<u8> = SINGLE.to_vec();
        alphabet.extend_from_slice(b"a0 ");
        for &a in &alphabet {
            for &b in &alphabet {
                for &c in &alphabet {
                    let bytes = [a, b, c];
                    let src = std::str::from_utf8(&bytes).expect("ascii");
                    for end in 1..=3 {
                        let s = &src[..end];
                        let expected = PUNCTS
                            .iter()
                            .find(|p| s.starts_with(**p))
                            .map(|p| p.len())
                            .or_else(|| SINGLE.contains(&bytes[0]).then_some(1));
                        assert_eq!(punct_len(s.as_bytes(), 0), expected, "{s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn ranges_and_fractions() {
        assert_eq!(texts("0..n"), vec!["0", "..", "n"]);
        assert_eq!(texts("1\\2"), vec!["1", "\\", "2"]);
        assert_eq!(texts("1\\n"), vec!["1", "\\", "n"]);
        assert_eq!(texts("(\\forall* int k"), vec!["(", "\\forall*", "int", "k"]);
        assert_eq!(texts("a ==> b -* c"), vec!["a", "==>", "b", "-*", "c"]);
        assert_eq!(texts("{: a[k] :}"), vec!["{:", "a", "[", "k", "]", ":}"]);
    }

    #[test]
    fn comments_are_trivia() {
        assert_eq!(texts("a /* x */ + 1 // y\n#tex# b"), vec!["a", "+", "1", "b"]);
        assert_eq!(lex("/* open").errors.len(), 1);
    }
}

/// The length of a VerCors test marker at the start of `s`: `[/expect name]` (letters and
/// `:`) or `[/end]`.
fn expect_marker(s: &str) -> Option<usize> {
    if s.starts_with("[/end]") {
        return Some(6);
    }
    let rest = s.strip_prefix("[/expect ")?;
    let n = rest.bytes().take_while(|c| c.is_ascii_alphabetic() || *c == b':').count();
    (n > 0 && rest.as_bytes().get(n) == Some(&b']')).then_some("[/expect ".len() + n + 1)
}

#[cfg(test)]
mod marker_tests {
    #[test]
    fn vercors_test_markers_are_trivia() {
        assert_eq!(super::expect_marker("[/expect assertFailed:false] x"), Some(28));
        assert_eq!(super::expect_marker("[/end] x"), Some(6));
        assert_eq!(super::expect_marker("[/expect ] x"), None);
        assert_eq!(super::expect_marker("[/x]"), None);
    }
}
