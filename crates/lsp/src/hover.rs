//! Hovers: on an array access, its row of the last cost run (`alpine-rs run --cost` on the saved
//! version: sectors, bank conflicts, executions); on a diagnostic, `alpine-rs explain`'s text of
//! its code.

use crate::text::Doc;

/// One access row of a cost run, summed over the runs (methods, inputs) it appeared in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccessRow {
    /// 1-based line.
    pub line: usize,
    pub text: String,
    pub write: bool,
    pub space: String,
    pub execs: u64,
    pub sectors: u64,
    pub conflicts: u64,
    pub worst: u64,
}

/// The rows of `alpine-rs run FILE --cost --format json`: each access once per (line, text,
/// read or write), summed over the runs.
pub fn cost_rows(run: &serde_json::Value) -> Vec<AccessRow> {
    let mut out: Vec<AccessRow> = Vec::new();
    let runs = run.get("runs").and_then(|r| r.as_array()).cloned().unwrap_or_default();
    for r in &runs {
        let accesses = r.pointer("/cost/accesses").and_then(|a| a.as_array());
        for a in accesses.into_iter().flatten() {
            let num = |k: &str| a.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
            let row = AccessRow {
                line: num("line") as usize,
                text: a.get("text").and_then(|v| v.as_str()).unwrap_or_default().to_string(),
                write: a.get("write").and_then(|v| v.as_bool()).unwrap_or(false),
                space: a.get("space").and_then(|v| v.as_str()).unwrap_or("global").to_string(),
                execs: num("execs"),
                sectors: num("sectors"),
                conflicts: num("conflicts"),
                worst: num("worst"),
            };
            match out
                .iter_mut()
                .find(|o| o.line == row.line && o.text == row.text && o.write == row.write)
            {
                Some(o) => {
                    o.execs += row.execs;
                    o.sectors += row.sectors;
                    o.conflicts += row.conflicts;
                    o.worst = o.worst.max(row.worst);
                }
                None => out.push(row),
            }
        }
    }
    out
}

/// The rows of the access under byte offset `off`: those on its line whose text (compared
/// without white space) covers the offset.
pub fn rows_at<'a>(doc: &Doc, rows: &'a [AccessRow], off: usize) -> Vec<&'a AccessRow> {
    let line = doc.line_of(off);
    let start = doc.offset(lsp_types::Position::new(line as u32 - 1, 0));
    let end = doc.offset(lsp_types::Position::new(line as u32, 0));
    let text = &doc.text[start..end];
    // The line without white space, with the offset of each kept byte.
    let (squeezed, at): (String, Vec<usize>) =
        text.char_indices().filter(|(_, c)| !c.is_whitespace()).map(|(i, c)| (c, i)).unzip();
    let at_byte: Vec<usize> = squeezed.char_indices().map(|(i, _)| i).collect();
    let cursor = off - start;
    rows.iter()
        .filter(|r| r.line == line && !r.text.is_empty())
        .filter(|r| {
            let want: String = r.text.chars().filter(|c| !c.is_whitespace()).collect();
            squeezed.match_indices(&want).any(|(i, m)| {
                let first = at_byte.iter().position(|&b| b == i);
                let last = at_byte.iter().rposition(|&b| b < i + m.len());
                match (first, last) {
                    (Some(f), Some(l)) => at[f] <= cursor && cursor <= at[l],
                    _ => false,
                }
            })
        })
        .collect()
}

/// Markdown for the rows of one access.
pub fn render_rows(rows: &[&AccessRow]) -> String {
    let mut s = String::from("**cost model** (last `run --cost` of the saved file)\n\n");
    s.push_str("| access | | space | executions | sectors | conflicts | worst |\n");
    s.push_str("|---|---|---|---:|---:|---:|---:|\n");
    for r in rows {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            r.text,
            if r.write { "write" } else { "read" },
            r.space,
            r.execs,
            r.sectors,
            r.conflicts,
            r.worst
        ));
    }
    s
}

/// Markdown for a diagnostic code: `explain`'s title and text.
pub fn explain(code: &str) -> Option<String> {
    let c = diag::codes::lookup(&code.to_uppercase())?;
    Some(format!("**{}**: {}\n\n{}", c.code, c.title, c.explanation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_is_found_under_the_cursor_whatever_its_spacing() {
        let doc = Doc::new(
            lsp_types::Url::parse("file:///t/a.pvl").unwrap(),
            "pvl",
            "x\n  b[tid] = a[ tid ] + 1;\n".into(),
            1,
        );
        let rows = vec![
            AccessRow { line: 2, text: "a[tid]".into(), sectors: 4, ..AccessRow::default() },
            AccessRow { line: 2, text: "b[tid]".into(), write: true, ..AccessRow::default() },
        ];
        let on_a = doc.text.find("tid ]").unwrap();
        let got = rows_at(&doc, &rows, on_a);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].text, "a[tid]");
        let on_b = doc.text.find("b[").unwrap();
        assert_eq!(rows_at(&doc, &rows, on_b)[0].text, "b[tid]");
        assert!(rows_at(&doc, &rows, doc.text.find("+ 1").unwrap()).is_empty());
    }
}
