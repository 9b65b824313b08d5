//! Spans of nodes in the plan's YAML text, for diagnostics that point into the plan.

use crate::front::span::Span;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

// ---------------------------------------------------------------------------------------------
// Locating nodes in the YAML text
//
// serde_yaml keeps no positions in its values, but it attaches the position of the event being
// deserialized to every error a visitor raises. A probe that walks to a node and fails there
// therefore learns where the real YAML parser saw that node, for any YAML layout.

#[derive(Clone, Copy, Debug)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

const FOUND: &str = "\u{0}alpine-rs-probe-found";

struct Probe<'a> {
    path: &'a [Seg<'a>],
    /// At the last key: the key itself rather than its value.
    want_key: bool,
}

impl<'de> DeserializeSeed<'de> for Probe<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.leaf()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.leaf()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        match self.path.split_first() {
            None => Err(de::Error::custom(FOUND)),
            Some((Seg::Index(i), rest)) => {
                for _ in 0..*i {
                    if seq.next_element::<IgnoredAny>()?.is_none() {
                        return Ok(());
                    }
                }
                seq.next_element_seed(Probe { path: rest, want_key: self.want_key })?;
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        match self.path.split_first() {
            None => Err(de::Error::custom(FOUND)),
            Some((Seg::Key(k), rest)) => {
                let at_key = rest.is_empty() && self.want_key;
                while let Some(hit) = map.next_key_seed(KeyProbe { target: k, fail: at_key })? {
                    if hit {
                        map.next_value_seed(Probe { path: rest, want_key: self.want_key })?;
                        return Ok(());
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }
}

impl Probe<'_> {
    fn leaf<E: de::Error>(&self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(FOUND))
        } else {
            Ok(())
        }
    }
}

struct KeyProbe<'a> {
    target: &'a str,
    fail: bool,
}

impl<'de> DeserializeSeed<'de> for KeyProbe<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyProbe<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        if v == self.target && self.fail {
            Err(E::custom(FOUND))
        } else {
            Ok(v == self.target)
        }
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

/// Byte offset of a 1-based line and column (in characters).
pub(super) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return off
                + l.char_indices().nth(column.saturating_sub(1)).map_or(l.len(), |(b, _)| b);
        }
        off += l.len();
    }
    text.len()
}

/// The end of the YAML token starting at `start`: a quoted scalar, a bracketed flow collection,
/// a key (up to its colon) or a plain scalar (up to a comment, the line end, or, inside a flow
/// collection, a separator).
pub(super) fn token_end(text: &str, start: usize, key: bool) -> usize {
    let rest = &text[start..];
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let in_flow = text[line_start..start].chars().fold(0i32, |d, c| match c {
        '[' | '{' => d + 1,
        ']' | '}' => d - 1,
        _ => d,
    }) > 0;
    let mut chars = rest.char_indices().peekable();
    match rest.chars().next() {
        Some(q @ ('"' | '\'')) => {
            chars.next();
            while let Some((i, c)) = chars.next() {
                if c == '\\' && q == '"' {
                    chars.next();
                } else if c == q {
                    return start + i + 1;
                }
            }
            start + rest.len()
        }
        Some('[' | '{') => {
            let mut depth = 0;
            for (i, c) in rest.char_indices() {
                match c {
                    '[' | '{' => depth += 1,
                    ']' | '}' => {
                        depth -= 1;
                        if depth == 0 {
                            return start + i + 1;
                        }
                    }
                    _ => {}
                }
            }
            start + rest.len()
        }
        _ => {
            let mut end = rest.len();
            for (i, c) in rest.char_indices() {
                let next = rest[i + c.len_utf8()..].chars().next();
                let stop = c == '\n'
                    || (c == '#' && i > 0 && rest[..i].ends_with(' '))
                    || (key && c == ':' && next.is_none_or(|n| n.is_whitespace()))
                    || (in_flow && matches!(c, ',' | ']' | '}'));
                if stop {
                    end = i;
                    break;
                }
            }
            start + rest[..end].trim_end().len()
        }
    }
}

/// The span of the node at `path` (the key itself with `want_key`), if it exists.
pub(super) fn locate(text: &str, path: &[Seg], want_key: bool) -> Option<Span> {
    let de = serde_yaml::Deserializer::from_str(text);
    let err = match (Probe { path, want_key }).deserialize(de) {
        Err(e) if e.to_string().contains(FOUND) => e,
        _ => return None,
    };
    let loc = err.location()?;
    let start = offset_of(text, loc.line(), loc.column());
    Some(Span::new(start, token_end(text, start, want_key)))
}

/// The best span for a key of a node: the key, else the node, else the file start.
pub(super) fn key_span(text: &str, node: &[Seg], key: &str) -> Span {
    let mut p = node.to_vec();
    p.push(Seg::Key(key));
    locate(text, &p, true).or_else(|| locate(text, node, false)).unwrap_or(Span::new(0, 0))
}

pub(super) fn value_span(text: &str, node: &[Seg], key: &str) -> Span {
    let mut p = node.to_vec();
    p.push(Seg::Key(key));
    locate(text, &p, false).unwrap_or_else(|| key_span(text, node, key))
}
