//! Masking a CUDA/OpenCL file for lang-c, without a preprocessor.
//!
//! lang-c parses preprocessed C. Running the system preprocessor would need CUDA's headers and
//! would move every offset, so instead the file is copied with everything lang-c cannot read
//! blanked to spaces of the same length (newlines kept): comments (annotation comments are
//! recorded first), preprocessor lines (object-like `#define`s are recorded), the CUDA and OpenCL
//! qualifiers (`__global__`, `__shared__`, `__kernel`, …) and launch configurations
//! `<<<grid, block>>>`. A typedef prelude for the CUDA types comes first; every lang-c offset
//! minus its length is an offset in the user's file.

use crate::span::Span;

/// Types that CUDA headers would declare; the user's own typedefs of the same names are legal
/// repetitions in C11.
pub(super) const PRELUDE: &str = "typedef int dim3; typedef unsigned long size_t; \
typedef int cudaError_t; typedef int cudaEvent_t; typedef int cudaStream_t; \
typedef _Bool bool; typedef unsigned int uint; typedef int int32_t; typedef unsigned int uint32_t; \
typedef long int64_t; typedef unsigned long uint64_t; \
typedef int int2; typedef int int3; typedef int int4; typedef int int8; typedef int int16; \
typedef int uint2; typedef int uint3; typedef int uint4; typedef int uint8; typedef int uint16; \
typedef int __v2si; typedef int __v4si; typedef int __v8si;\n";

/// Words blanked before parsing: what they qualify is recorded as a [`Qualifier`].
const QUALIFIERS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__forceinline__",
    "__noinline__",
    "__restrict__",
    "__kernel",
    "__global",
    "__local",
    "__constant",
    "__private",
    "__restrict",
];

/// OpenCL C's address-space and kernel keywords without their underscores: keywords in an
/// OpenCL file (and names a C or CUDA file may use), read as the long spelling.
const OPENCL_SHORT: &[(&str, &str)] = &[
    ("kernel", "__kernel"),
    ("global", "__global"),
    ("local", "__local"),
    ("constant", "__constant"),
    ("private", "__private"),
];

/// An OpenCL C file: one that includes OpenCL's header or declares a `__kernel` (or `kernel
/// void`) function.
pub(super) fn is_opencl(src: &str) -> bool {
    src.lines().map(str::trim_start).any(|l| {
        l.starts_with('#') && l.contains("include") && (l.contains("opencl") || l.contains("CL/cl"))
    }) || src.contains("__kernel")
        || src.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| w == ["kernel", "void"])
}

/// One `/*@ … @*/` or `//@ …` comment.
#[derive(Clone, Debug)]
pub struct AnnotComment {
    /// The whole comment.
    pub span: Span,
    /// Its content, between the opening `/*@`/`//@` and the closing `@*/` (or `*/`).
    pub body: Span,
}

/// A launch configuration `<<<grid, block, …>>>` after the kernel name `name_end`.
#[derive(Clone, Debug)]
pub struct Launch {
    pub name_end: usize,
    pub span: Span,
    pub args: Vec<Span>,
}

/// A declaration `dim3 name(x, y, z);` or `dim3 name = dim3(x, y, z);`: C++ that lang-c does not
/// read, blanked and kept here, with the spans of its sizes. Launches `<<<name, …>>>` use it.
#[derive(Clone, Debug)]
pub struct Dim3Decl {
    pub name: String,
    pub span: Span,
    pub args: Vec<Span>,
}

#[derive(Clone, Debug)]
pub struct Define {
    pub name: String,
    pub value: Span,
}

/// A function-like macro `#define NAME(p, q) body` (`macros.rs` expands its uses).
#[derive(Clone, Debug)]
pub struct FnDefine {
    pub name: String,
    pub params: Vec<String>,
    pub body: Span,
    /// The whole directive, for a warning where the body is not an expression.
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Qualifier {
    pub word: &'static str,
    pub span: Span,
}

/// What masking found, besides the masked text.
#[derive(Clone, Debug, Default)]
pub struct Prepared {
    /// The prelude followed by the masked file.
    pub c_text: String,
    pub annots: Vec<AnnotComment>,
    pub launches: Vec<Launch>,
    pub dim3s: Vec<Dim3Decl>,
    pub defines: Vec<Define>,
    pub fn_defines: Vec<FnDefine>,
    pub qualifiers: Vec<Qualifier>,
    /// Directives other than `#include` and object-like `#define` (function-like macros,
    /// conditionals): reported, since their effect is not modelled.
    pub other_directives: Vec<Span>,
    /// `#pragma` lines, whole (OpenMP's change what the code means: `openmp.rs`).
    pub pragmas: Vec<Span>,
    /// An unterminated comment or launch configuration.
    pub unterminated: Option<Span>,
}

impl Prepared {
    pub fn prelude_len(&self) -> usize {
        PRELUDE.len()
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Blank `out[lo..hi]` to spaces, keeping line breaks.
fn blank(out: &mut [u8], lo: usize, hi: usize) {
    for b in &mut out[lo..hi] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

pub fn prepare(src: &str) -> Prepared {
    let opencl = is_opencl(src);
    let bytes = src.as_bytes();
    let mut out = bytes.to_vec();
    let mut p = Prepared::default();
    let mut i = 0;
    let mut line_start = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'"' | b'\'' => {
                i = skip_literal(bytes, i);
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(bytes.len(), |e| i + e);
                if bytes.get(i + 2) == Some(&b'@') {
                    p.annots.push(AnnotComment {
                        span: Span::new(i, end),
                        body: Span::new(i + 3, end),
                    });
                }
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(close) = src[i + 2..].find("*/") else {
                    p.unterminated = Some(Span::new(i, i + 2));
                    blank(&mut out, i, bytes.len());
                    break;
                };
                let end = i + 2 + close + 2;
                if bytes.get(i + 2) == Some(&b'@') {
                    // `@*/` closes an annotation; a plain `*/` is accepted too.
                    let body_end = if end >= 3 && bytes[end - 3] == b'@' && end - 3 >= i + 3 {
                        end - 3
                    } else {
                        end - 2
                    };
                    p.annots.push(AnnotComment {
                        span: Span::new(i, end),
                        body: Span::new(i + 3, body_end),
                    });
                }
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b'#' if line_start => {
                i = directive(src, i, &mut out, &mut p);
                continue;
            }
            b'<' if bytes[i..].starts_with(b"<<<") => match launch(src, i) {
                Some(l) => {
                    blank(&mut out, l.span.start(), l.span.end());
                    i = l.span.end();
                    p.launches.push(l);
                }
                None => {
                    p.unterminated = Some(Span::new(i, i + 3));
                    i += 3;
                }
            },
            _ if b.is_ascii_alphabetic() || b == b'_' => {
                let lo = i;
                while i < bytes.len() && is_ident(bytes[i]) {
                    i += 1;
                }
                let word = &src[lo..i];
                let q = QUALIFIERS.iter().find(|q| **q == word).copied().or_else(|| {
                    let short = OPENCL_SHORT.iter().find(|(w, _)| *w == word);
                    short.filter(|_| opencl).map(|(_, q)| *q)
                });
                if let Some(q) = q {
                    blank(&mut out, lo, i);
                    p.qualifiers.push(Qualifier { word: q, span: Span::new(lo, i) });
                } else if word == "dim3" {
                    if let Some(d) = dim3_decl(src, lo) {
                        blank(&mut out, d.span.start(), d.span.end());
                        i = d.span.end();
                        p.dim3s.push(d);
                    }
                } else if word == "__launch_bounds__" {
                    let end = balanced_parens(bytes, i).unwrap_or(i);
                    blank(&mut out, lo, end);
                    p.qualifiers
                        .push(Qualifier { word: "__launch_bounds__", span: Span::new(lo, end) });
                    i = end;
                }
            }
            _ => i += 1,
        }
        line_start = false;
    }
    let mut c_text = String::with_capacity(PRELUDE.len() + out.len());
    c_text.push_str(PRELUDE);
    // Only ASCII bytes were replaced by ASCII spaces, inside whole tokens or comments, so the
    // text stays UTF-8 unless a comment held a multi-byte character (blanked byte by byte).
    c_text.push_str(&String::from_utf8_lossy(&out));
    p.c_text = c_text;
    p
}

/// Skip a string or character literal starting at `i` (escapes honoured, stops at the line end).
fn skip_literal(bytes: &[u8], i: usize) -> usize {
    let q = bytes[i];
    let mut j = i + 1;
    while j < bytes.len() && bytes[j] != q && bytes[j] != b'\n' {
        j += if bytes[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(bytes.len())
}

/// The offset after the `)` matching the first `(` at or after `i` (spaces allowed before it).
fn balanced_parens(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A preprocessor line at `i` (continued by trailing backslashes): blanked; `#define N v`
/// recorded.
fn directive(src: &str, i: usize, out: &mut [u8], p: &mut Prepared) -> usize {
    let bytes = src.as_bytes();
    let mut end = i;
    loop {
        end = src[end..].find('\n').map_or(bytes.len(), |e| end + e);
        // A line ending in `\` continues (a `\r` before the newline is allowed).
        let line = src[i..end].trim_end_matches('\r');
        if line.ends_with('\\') && end < bytes.len() {
            end += 1;
            continue;
        }
        break;
    }
    let text = &src[i + 1..end];
    let trimmed = text.trim_start();
    let word_at = i + 1 + (text.len() - trimmed.len());
    let word: String =
        trimmed.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    match word.as_str() {
        "include" | "" => {}
        "pragma" => p.pragmas.push(Span::new(i, end)),
        "define" => {
            let rest_at = word_at + word.len();
            let rest = &src[rest_at..end];
            let name_lo = rest_at + (rest.len() - rest.trim_start().len());
            let mut name_hi = name_lo;
            while name_hi < end && is_ident(bytes[name_hi]) {
                name_hi += 1;
            }
            let function_like = bytes.get(name_hi) == Some(&b'(');
            if name_hi > name_lo && !function_like {
                let value = &src[name_hi..end];
                let v_lo = name_hi + (value.len() - value.trim_start().len());
                let v_hi = name_hi + value.trim_end().len();
                if v_hi > v_lo {
                    p.defines.push(Define {
                        name: src[name_lo..name_hi].to_string(),
                        value: Span::new(v_lo, v_hi),
                    });
                }
            } else if let Some(f) = fn_define(src, name_lo, name_hi, i, end) {
                p.fn_defines.push(f);
            } else {
                p.other_directives.push(Span::new(i, end));
            }
        }
        _ => p.other_directives.push(Span::new(i, end)),
    }
    blank(out, i, end);
    end
}

/// `#define NAME(p, q) body` with the name at `name_lo..name_hi` and `(` right after it: its
/// parameters (plain names; `...` is not read) and the span of its body, if it has one.
fn fn_define(src: &str, name_lo: usize, name_hi: usize, i: usize, end: usize) -> Option<FnDefine> {
    let close = name_hi + src[name_hi..end].find(')')?;
    let mut params = Vec::new();
    for p in src[name_hi + 1..close].split(',') {
        let p = p.trim();
        if p.is_empty() && params.is_empty() && src[name_hi + 1..close].trim().is_empty() {
            break;
        }
        if p.is_empty() || !p.bytes().all(is_ident) || p.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        params.push(p.to_string());
    }
    // A continued line's backslashes are blanked in the body's text by the expression parser's
    // reading of white space: only bodies on one line are read.
    let body = &src[close + 1..end];
    let lo = close + 1 + (body.len() - body.trim_start().len());
    let hi = close + 1 + body.trim_end().len();
    (hi > lo && !src[lo..hi].contains('\\')).then(|| FnDefine {
        name: src[name_lo..name_hi].to_string(),
        params,
        body: Span::new(lo, hi),
        span: Span::new(i, end),
    })
}

/// The launch configuration `<<<…>>>` at `i`, split into its arguments at top-level commas.
fn launch(src: &str, i: usize) -> Option<Launch> {
    let bytes = src.as_bytes();
    let mut name_end = i;
    while name_end > 0 && bytes[name_end - 1].is_ascii_whitespace() {
        name_end -= 1;
    }
    let mut j = i + 3;
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut arg_lo = j;
    while j < bytes.len() {
        if depth == 0 && bytes[j..].starts_with(b">>>") {
            args.push(trimmed(src, arg_lo, j));
            return Some(Launch { name_end, span: Span::new(i, j + 3), args });
        }
        if bytes[j..].starts_with(b"/*") {
            j = src[j + 2..].find("*/").map_or(bytes.len(), |e| j + 2 + e + 2);
            continue;
        }
        match bytes[j] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                args.push(trimmed(src, arg_lo, j));
                arg_lo = j + 1;
            }
            b';' | b'{' | b'}' => return None,
            _ => {}
        }
        j += 1;
    }
    None
}

/// The declaration `dim3 name(args);` or `dim3 name = dim3(args);` starting at `lo`, if that is
/// what stands there.
fn dim3_decl(src: &str, lo: usize) -> Option<Dim3Decl> {
    let bytes = src.as_bytes();
    let skip_ws = |mut j: usize| {
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    let mut j = skip_ws(lo + 4);
    if j == lo + 4 {
        return None;
    }
    let name_lo = j;
    while j < bytes.len() && is_ident(bytes[j]) {
        j += 1;
    }
    if j == name_lo || bytes[name_lo].is_ascii_digit() {
        return None;
    }
    let name = src[name_lo..j].to_string();
    j = skip_ws(j);
    if bytes.get(j) == Some(&b'=') {
        j = skip_ws(j + 1);
        if !bytes[j..].starts_with(b"dim3") {
            return None;
        }
        j = skip_ws(j + 4);
    }
    if bytes.get(j) != Some(&b'(') {
        return None;
    }
    let close = balanced_parens(bytes, j)?;
    let mut args = Vec::new();
    let (mut depth, mut arg_lo) = (0usize, j + 1);
    for (k, &b) in bytes.iter().enumerate().take(close - 1).skip(j + 1) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                args.push(trimmed(src, arg_lo, k));
                arg_lo = k + 1;
            }
            _ => {}
        }
    }
    args.push(trimmed(src, arg_lo, close - 1));
    let semi = skip_ws(close);
    if bytes.get(semi) != Some(&b';') || args.len() > 3 || args.iter().any(|a| a.is_empty()) {
        return None;
    }
    Some(Dim3Decl { name, span: Span::new(lo, semi + 1), args })
}

/// The span of `src[lo..hi]` without surrounding whitespace and comments' blanks.
fn trimmed(src: &str, lo: usize, hi: usize) -> Span {
    let s = &src[lo..hi];
    let l = lo + (s.len() - s.trim_start().len());
    let h = lo + s.trim_end().len();
    Span::new(l, h.max(l))
}

/// Only the annotation comments of `src` (for placing generated text).
pub fn prepare_comments(src: &str) -> Vec<AnnotComment> {
    prepare(src).annots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_keeps_offsets_and_records_what_it_blanks() {
        let src = "#include <cuda.h>\n#define N 64\n/*@ requires n > 0; @*/\n__global__ void k(int n) { //@ assert n > 0;\n f<<<1, N>>>(n); }\n";
        let p = prepare(src);
        let masked = &p.c_text[p.prelude_len()..];
        assert_eq!(masked.len(), src.len());
        assert!(!masked.contains("__global__") && !masked.contains('#') && !masked.contains("<<<"));
        assert!(masked.contains("void k(int n)"));
        assert_eq!(p.annots.len(), 2);
        assert_eq!(p.annots[0].body.text(src).trim(), "requires n > 0;");
        assert_eq!(p.annots[1].body.text(src).trim(), "assert n > 0;");
        assert_eq!(p.defines[0].name, "N");
        assert_eq!(p.defines[0].value.text(src), "64");
        let l = &p.launches[0];
        assert_eq!(l.args.iter().map(|a| a.text(src)).collect::<Vec<_>>(), ["1", "N"]);
        assert_eq!(&src[l.name_end - 1..l.name_end], "f");
        assert_eq!(p.qualifiers[0].word, "__global__");
    }

    #[test]
    fn dim3_declarations_are_blanked_and_kept() {
        let src = "void h() { dim3 g(n / 4, 2); dim3  b = dim3(8); dim3 x = 3; k<<<g, b>>>(); }";
        let p = prepare(src);
        let masked = &p.c_text[p.prelude_len()..];
        assert_eq!(masked.len(), src.len());
        assert!(!masked.contains("dim3 g") && !masked.contains("dim3(8)"), "{masked}");
        // An integer-initialised `dim3` is C that lang-c reads: left alone.
        assert!(masked.contains("dim3 x = 3;"));
        let d: Vec<(&str, Vec<&str>)> = p
            .dim3s
            .iter()
            .map(|d| (d.name.as_str(), d.args.iter().map(|a| a.text(src)).collect()))
            .collect();
        assert_eq!(d, [("g", vec!["n / 4", "2"]), ("b", vec!["8"])]);
    }
}
