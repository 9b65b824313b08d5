//! Open documents: their text, version, and the translation between the byte offsets of our
//! spans and the protocol's positions (line, UTF-16 code unit).

use lsp_types::{Position, Range, TextDocumentContentChangeEvent, Url};

/// One open document.
#[derive(Clone, Debug)]
pub struct Doc {
    pub uri: Url,
    /// The file name our front end sees: its extension picks PVL or C/CUDA/OpenCL.
    pub name: String,
    pub text: String,
    pub version: i32,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl Doc {
    pub fn new(uri: Url, language: &str, text: String, version: i32) -> Doc {
        let name = file_name(&uri, language);
        let starts = line_starts(&text);
        Doc { uri, name, text, version, starts }
    }

    /// Apply one change of `textDocument/didChange` (a range, or the whole text).
    pub fn apply(&mut self, change: &TextDocumentContentChangeEvent) {
        match change.range {
            Some(r) => {
                let (a, b) = (self.offset(r.start), self.offset(r.end));
                let (a, b) = (a.min(b), a.max(b));
                self.text.replace_range(a..b, &change.text);
            }
            None => self.text = change.text.clone(),
        }
        self.starts = line_starts(&self.text);
    }

    /// The protocol position of byte offset `off` (clamped to the text, moved back to a
    /// character boundary).
    pub fn position(&self, off: usize) -> Position {
        let mut off = off.min(self.text.len());
        while !self.text.is_char_boundary(off) {
            off -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= off).saturating_sub(1);
        let start = self.starts[line];
        let character: usize = self.text[start..off].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, lo: usize, hi: usize) -> Range {
        Range::new(self.position(lo), self.position(hi))
    }

    /// The byte offset of a protocol position; a position past the end of its line is the end
    /// of the line, a line past the end is the end of the text (as the protocol asks).
    pub fn offset(&self, p: Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else { return self.text.len() };
        let end = self.starts.get(p.line as usize + 1).copied().unwrap_or(self.text.len());
        let line = &self.text[start..end];
        let mut units = 0usize;
        for (i, c) in line.char_indices() {
            if units >= p.character as usize || c == '\n' || c == '\r' {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    /// The 1-based line of byte offset `off`.
    pub fn line_of(&self, off: usize) -> usize {
        self.position(off).line as usize + 1
    }

    /// The whole text as a range (for an edit that replaces everything).
    pub fn full_range(&self) -> Range {
        self.range(0, self.text.len())
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

/// The name the front end reads the document under: the URI's path, or for an unsaved
/// document a name whose extension follows the language the editor says it is in.
fn file_name(uri: &Url, language: &str) -> String {
    if let Ok(p) = uri.to_file_path() {
        if p.extension().is_some() {
            return p.display().to_string();
        }
    }
    let ext = match language {
        "cuda" | "cuda-cpp" => "cu",
        "c" => "c",
        "opencl" => "cl",
        _ => "pvl",
    };
    let last = uri.path_segments().and_then(|mut s| s.next_back()).unwrap_or("untitled");
    let last = if last.is_empty() { "untitled" } else { last };
    if last.contains('.') {
        last.to_string()
    } else {
        format!("{last}.{ext}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Doc {
        Doc::new(Url::parse("file:///t/a.pvl").unwrap(), "pvl", text.to_string(), 1)
    }

    #[test]
    fn positions_count_utf16_units() {
        let d = doc("ab\n// é𝕏 x\nlast");
        let x = d.text.find(" x").unwrap() + 1;
        // `//`, space, é (1 unit), 𝕏 (2 units), space: 7 units before x.
        assert_eq!(d.position(x), Position::new(1, 7));
        assert_eq!(d.offset(Position::new(1, 7)), x);
        assert_eq!(d.offset(Position::new(1, 99)), d.text.find("\nlast").unwrap());
        assert_eq!(d.offset(Position::new(9, 0)), d.text.len());
        assert_eq!(d.position(d.text.len()), Position::new(2, 4));
    }

    #[test]
    fn incremental_changes_edit_the_range() {
        let mut d = doc("int x;\nint y;\n");
        d.apply(&TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(1, 4), Position::new(1, 5))),
            range_length: None,
            text: "zz".into(),
        });
        assert_eq!(d.text, "int x;\nint zz;\n");
        assert_eq!(d.line_of(d.text.len()), 3);
    }

    #[test]
    fn unsaved_documents_are_named_by_language() {
        let d = Doc::new(Url::parse("untitled:Untitled-1").unwrap(), "cuda", String::new(), 0);
        assert!(d.name.ends_with(".cu"), "{}", d.name);
    }
}
