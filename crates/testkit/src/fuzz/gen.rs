//! Deterministic input generation for the robustness and fuzz tests, shared by
//! `tests/front_robustness.rs`, the `tests/fuzz_*.rs` suites, the release driver
//! (`examples/fuzz.rs`) and the cargo-fuzz targets (`fuzz/`): a small PRNG (splitmix64), the
//! vocabulary inputs are made of, token-level mutations, token soup and random bytes.

use alpine_rs::front::lexer::{lex, TokKind};

/// splitmix64: tiny, deterministic, good enough to pick mutations.
pub struct Rng(pub u64);

impl Rng {
    // A generator that never ends, not an iterator: `next` is the usual name for its step.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Words and symbols inputs are made of: keywords of every class, punctuation (including
/// the lexing traps of pvl.md §2.6), literals, backslash words, comments and odd characters.
pub const VOCAB: &[&str] = &[
    "class",
    "void",
    "int",
    "boolean",
    "seq",
    "set",
    "bag",
    "map",
    "tuple",
    "option",
    "resource",
    "pure",
    "static",
    "inline",
    "final",
    "constructor",
    "requires",
    "ensures",
    "context",
    "context_everywhere",
    "loop_invariant",
    "given",
    "yields",
    "decreases",
    "assume",
    "signals",
    "modifies",
    "if",
    "else",
    "while",
    "for",
    "return",
    "par",
    "and",
    "parallel",
    "sequential",
    "barrier",
    "invariant",
    "atomic",
    "ghost",
    "assert",
    "fold",
    "unfold",
    "label",
    "lock",
    "create",
    "merge",
    "split",
    "vec",
    "kernel",
    "enum",
    "with",
    "then",
    "new",
    "this",
    "null",
    "true",
    "false",
    "write",
    "read",
    "none",
    "unfolding",
    "in",
    "gpuopt",
    "loop_unroll",
    "iter_merge",
    "glob_to_reg",
    "matrix_lin",
    "tile",
    "fuse",
    "inter",
    "intra",
    "R",
    "C",
    "unroll",
    "prefetch",
    "linearize",
    "Perm",
    "PointsTo",
    "Value",
    "head",
    "a",
    "b",
    "t",
    "tid",
    "x",
    "n",
    "0",
    "1",
    "2",
    "42",
    "1.5",
    "\"s\"",
    "'c'",
    "`q`",
    "`",
    "\"",
    "'",
    "\\forall*",
    "\\forall",
    "\\exists",
    "\\let",
    "\\sum",
    "\\old",
    "\\result",
    "\\array",
    "\\matrix",
    "\\in",
    "\\unfolding",
    "\\typeof",
    "\\lengthy",
    "\\",
    "∀",
    "∃",
    "é",
    "😀",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "{:",
    ":}",
    "{*",
    "*}",
    ",",
    ";",
    ".",
    "..",
    ":",
    "::",
    "?",
    "?.",
    "!",
    "=",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "++",
    "--",
    "+=",
    "&&",
    "||",
    "**",
    "==>",
    "-*",
    "->",
    "<-",
    "|",
    "^^",
    "b{",
    "[t:",
    "#",
    "#tex#",
    "/*",
    "*/",
    "/* c */",
    "//",
    "// c\n",
    "\n",
    "\r\n",
    "\t",
    " ",
    "\u{feff}",
    "\0",
];

/// Byte ranges of the tokens of `src`.
pub fn tokens(src: &str) -> Vec<(usize, usize)> {
    lex(src)
        .tokens
        .iter()
        .filter(|t| t.kind != TokKind::Eof)
        .map(|t| (t.span.start(), t.span.end()))
        .collect()
}

/// One random token-level edit (or a truncation) of `src`.
pub fn mutate(rng: &mut Rng, src: &str) -> String {
    let toks = tokens(src);
    if toks.is_empty() {
        return (*rng.pick(VOCAB)).to_string();
    }
    let (lo, hi) = toks[rng.below(toks.len())];
    let tok = &src[lo..hi];
    match rng.below(7) {
        // Delete one to three consecutive tokens.
        0 => {
            let i = toks.iter().position(|t| t.0 == lo).unwrap_or(0);
            let end = toks[(i + rng.below(3)).min(toks.len() - 1)].1;
            format!("{}{}", &src[..lo], &src[end..])
        }
        // Duplicate a token.
        1 => format!("{}{tok}{tok}{}", &src[..lo], &src[hi..]),
        // Swap two tokens.
        2 => {
            let (lo2, hi2) = toks[rng.below(toks.len())];
            let (a, b) = if lo2 < lo { ((lo2, hi2), (lo, hi)) } else { ((lo, hi), (lo2, hi2)) };
            if a.1 > b.0 {
                return src.to_string();
            }
            format!(
                "{}{}{}{}{}",
                &src[..a.0],
                &src[b.0..b.1],
                &src[a.1..b.0],
                &src[a.0..a.1],
                &src[b.1..]
            )
        }
        // Truncate at a random character boundary.
        3 => {
            let mut cut = rng.below(src.len() + 1);
            while !src.is_char_boundary(cut) {
                cut -= 1;
            }
            src[..cut].to_string()
        }
        // Replace a token by a vocabulary word.
        4 => format!("{}{}{}", &src[..lo], *rng.pick(VOCAB), &src[hi..]),
        // Insert a vocabulary word before a token, without or with a space.
        5 => {
            let sep = if rng.below(2) == 0 { "" } else { " " };
            format!("{}{}{sep}{}", &src[..lo], *rng.pick(VOCAB), &src[lo..])
        }
        // Cut a token in the middle (at a character boundary).
        _ => {
            let mut cut = lo + rng.below(hi - lo + 1);
            while !src.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}{}", &src[..cut], &src[hi..])
        }
    }
}

pub fn token_soup(rng: &mut Rng, max: usize) -> String {
    let n = rng.below(max + 1);
    let mut s = String::new();
    for _ in 0..n {
        s.push_str(rng.pick::<&str>(VOCAB));
        if rng.below(3) > 0 {
            s.push(' ');
        }
    }
    s
}

pub fn random_bytes(rng: &mut Rng, max: usize) -> String {
    let n = rng.below(max + 1);
    // Mostly ASCII punctuation and letters, some arbitrary bytes (made valid UTF-8 lossily).
    let bytes: Vec<u8> = (0..n)
        .map(|_| match rng.below(4) {
            0 => rng.below(256) as u8,
            _ => *rng.pick(b" \n\t(){}[];:,.<>=!?+-*/%\\|&^#`'\"abtxn0129_"),
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub fn show(input: &str) -> String {
    if input.len() <= 3000 {
        format!("{input:?}")
    } else {
        let mut a = 1500;
        while !input.is_char_boundary(a) {
            a -= 1;
        }
        let mut b = input.len() - 1500;
        while !input.is_char_boundary(b) {
            b += 1;
        }
        format!("{:?} … ({} bytes) … {:?}", &input[..a], input.len(), &input[b..])
    }
}

pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".to_string())
}

/// Integer literals that find edge cases: zero, one, negative numbers, and the 32- and 64-bit
/// limits and one past them.
pub const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-2",
    "31",
    "32",
    "64",
    "1024",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
];

/// Operators that keep an expression well-formed when one replaces another.
const OPERATORS: &[&str] =
    &["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "==>"];

/// One edit that keeps the token structure: a number becomes another (often an edge case), an
/// operator another operator, a name another name of the same text. Most such mutants still
/// parse, so they reach the analyses behind the parser; when no such token exists it falls
/// back to [`mutate`].
pub fn mutate_same_kind(rng: &mut Rng, src: &str) -> String {
    let toks: Vec<_> = lex(src).tokens.into_iter().filter(|t| t.kind != TokKind::Eof).collect();
    let text = |t: &alpine_rs::front::lexer::Token| &src[t.span.start()..t.span.end()];
    let ints: Vec<_> = toks.iter().filter(|t| t.kind == TokKind::Int).collect();
    let ops: Vec<_> =
        toks.iter().filter(|t| t.kind == TokKind::Punct && OPERATORS.contains(&text(t))).collect();
    let words: Vec<_> = toks.iter().filter(|t| t.kind == TokKind::Word && !t.reserved).collect();
    let splice = |lo: usize, hi: usize, with: &str| format!("{}{with}{}", &src[..lo], &src[hi..]);
    match rng.below(3) {
        0 if !ints.is_empty() => {
            let t = rng.pick(&ints);
            // A negative literal right after a name or `]` would read as a subtraction.
            let n = rng.pick(NUMBERS).trim_start_matches('-');
            splice(t.span.start(), t.span.end(), n)
        }
        1 if !ops.is_empty() => {
            let t = rng.pick(&ops);
            let op = rng.pick(OPERATORS);
            splice(t.span.start(), t.span.end(), op)
        }
        2 if !words.is_empty() => {
            let t = rng.pick(&words);
            let other = *rng.pick(&words);
            let w = text(other).to_string();
            splice(t.span.start(), t.span.end(), &w)
        }
        _ => mutate(rng, src),
    }
}

/// The names (non-reserved words) of `src`, deduplicated, in order of first appearance.
pub fn names(src: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in lex(src).tokens.iter().filter(|t| t.kind == TokKind::Word && !t.reserved) {
        let w = &src[t.span.start()..t.span.end()];
        if !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// One to `max` rounds of mutation of `src`: mostly structure-keeping ones (see
/// [`mutate_same_kind`]), some arbitrary token edits.
pub fn mutant(rng: &mut Rng, src: &str, max: usize) -> String {
    let mut m = src.to_string();
    for _ in 0..1 + rng.below(max.max(1)) {
        m = if rng.below(4) == 0 { mutate(rng, &m) } else { mutate_same_kind(rng, &m) };
    }
    m
}
