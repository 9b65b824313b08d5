//! The base protocol over stdio (`Content-Length` framing), written so that nothing a client
//! sends can end the server: a frame that is not JSON, or JSON that is not a message, is
//! reported back and skipped (lsp-server's own reader stops at the first such frame).

use crossbeam_channel::{Receiver, Sender};
use lsp_server::Message;
use std::io::{BufRead, Write};

/// What the reader hands the server.
#[derive(Debug)]
pub enum Incoming {
    Message(Message),
    /// A frame that could not be read as a message: why.
    Malformed(String),
}

/// Read frames from `input` until it ends, sending each to `tx`.
pub fn read_loop(mut input: impl BufRead, tx: Sender<Incoming>) {
    loop {
        match read_frame(&mut input) {
            Ok(Some(body)) => {
                let item = match serde_json::from_slice::<Message>(&body) {
                    Ok(m) => Incoming::Message(m),
                    Err(e) => Incoming::Malformed(format!("not a JSON-RPC message: {e}")),
                };
                if tx.send(item).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(why) => {
                if tx.send(Incoming::Malformed(why)).is_err() {
                    return;
                }
            }
        }
    }
}

/// One frame's body; `Ok(None)` at the end of the input; `Err` for a bad header (the frame is
/// skipped up to the blank line that ends its header).
fn read_frame(input: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut length: Option<usize> = None;
    let mut bad: Option<String> = None;
    let mut seen_header = false;
    loop {
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) => return Err(format!("cannot read the header: {e}")),
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if !seen_header {
                continue;
            }
            break;
        }
        seen_header = true;
        match line.split_once(':') {
            Some((k, v)) if k.trim().eq_ignore_ascii_case("content-length") => {
                match v.trim().parse::<usize>() {
                    Ok(n) if n <= MAX_FRAME => length = Some(n),
                    _ => bad = Some(format!("bad Content-Length `{}`", v.trim())),
                }
            }
            Some(_) => {}
            None => bad = Some(format!("not a header line: `{}`", truncate(line))),
        }
    }
    if let Some(b) = bad {
        return Err(b);
    }
    let n = length.ok_or("a frame without Content-Length")?;
    let mut body = vec![0; n];
    input.read_exact(&mut body).map_err(|e| format!("the frame ended early: {e}"))?;
    Ok(Some(body))
}

/// The largest frame accepted (a document of 64 MiB is not a kernel).
const MAX_FRAME: usize = 64 << 20;

fn truncate(s: &str) -> String {
    s.chars().take(60).collect()
}

/// Write each message of `rx` to `out` until the channel closes.
pub fn write_loop(mut out: impl Write, rx: Receiver<Message>) {
    for m in rx {
        // lsp-server's message types leave the protocol version to their own writer.
        let Ok(mut v) = serde_json::to_value(&m) else { continue };
        if let Some(o) = v.as_object_mut() {
            o.insert("jsonrpc".into(), "2.0".into());
        }
        let body = v.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        if out.write_all(frame.as_bytes()).and_then(|_| out.flush()).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<Incoming> {
        let (tx, rx) = crossbeam_channel::unbounded();
        read_loop(std::io::Cursor::new(input.as_bytes().to_vec()), tx);
        rx.into_iter().collect()
    }

    #[test]
    fn garbage_between_messages_is_reported_and_skipped() {
        let ok = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let input = format!(
            "Content-Length: 5\r\n\r\n{{oops\
             Nonsense\r\n\r\n\
             Content-Length: {}\r\n\r\n{ok}\
             Content-Length: 12\r\n\r\n{{\"a\": true}}",
            ok.len()
        );
        let got = frames(&input);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(matches!(got[0], Incoming::Malformed(_)));
        assert!(matches!(got[1], Incoming::Malformed(_)));
        assert!(matches!(got[2], Incoming::Message(_)));
        assert!(matches!(got[3], Incoming::Malformed(_)));
    }

    #[test]
    fn a_short_frame_ends_the_input_quietly() {
        let got = frames("Content-Length: 100\r\n\r\n{}");
        assert!(matches!(got.as_slice(), [Incoming::Malformed(_)]), "{got:?}");
    }
}
