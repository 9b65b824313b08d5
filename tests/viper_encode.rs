//! Encoder tests that need no backend: coverage of the corpus, unsupported constructs, output
//! parsing and the position map.

mod common;

use alpine_rs::diag::SourceFile;
use alpine_rs::viper::{self, errors};

fn encode(text: &str) -> Result<viper::Encoded, Vec<alpine_rs::diag::Diagnostic>> {
    let src = SourceFile::new("t.pvl", text);
    let parsed = alpine_rs::front::parse(text, &Default::default());
    assert!(!parsed.has_errors());
    viper::encode(&parsed.program, &src)
}

#[test]
fn every_parsable_corpus_program_encodes() {
    let mut n = 0;
    for p in common::files(&common::corpus_dir(), "pvl") {
        let text = std::fs::read_to_string(&p).unwrap();
        let parsed = alpine_rs::front::parse(&text, &Default::default());
        if parsed.has_errors() {
            continue;
        }
        let src = SourceFile::new(p.display().to_string(), text.clone());
        let r = viper::encode(&parsed.program, &src);
        assert!(r.is_ok(), "{} does not encode: {:?}", p.display(), r.err());
        n += 1;
    }
    assert!(n >= 80, "only {n} corpus programs found");
}

#[test]
fn unsupported_constructs_are_named_with_their_span() {
    // A sum over a symbolic range whose terms call a function.
    let text = "class C {\n  pure int g(int i) = i;\n  int f(int n) {\n    return (\\sum int i; \
                0 <= i && i < n; g(i));\n  }\n}\n";
    let ds = encode(text).unwrap_err();
    let d = &ds[0];
    assert_eq!(d.code, "V-UNSUPPORTED");
    assert!(d.message.contains("\\sum"), "{}", d.message);
    let s = d.primary_span().unwrap();
    assert!(s.text(text).starts_with("(\\sum"));
}

#[test]
fn early_return_jumps_to_the_end_of_the_method() {
    let text = "class C {\n  int f(int n) {\n    if (n > 0) { return 1; }\n    return 2;\n  }\n}\n";
    let enc = encode(text).unwrap();
    let body = &enc.vpr[enc.vpr.find("method C_f").unwrap()..];
    assert!(body.contains("goto end"), "{body}");
    assert!(body.trim_end().trim_end_matches('}').trim_end().ends_with("label end"), "{body}");
}

#[test]
fn a_goto_into_a_loop_is_refused() {
    let text = "class C {\n  void m(int i) {\n    goto l;\n    while (i < 3) {\n      label l;\n      i = i + 1;\n    }\n  }\n}\n";
    let ds = encode(text).unwrap_err();
    assert_eq!(ds[0].code, "V-UNSUPPORTED");
    assert!(ds[0].message.contains("into a loop"), "{}", ds[0].message);
    assert_eq!(ds[0].primary_span().unwrap().text(text), "goto l;");
}

#[test]
fn silicon_error_lines_parse_with_padded_indices() {
    let e = errors::parse_error_line(
        "  [ 9] Assignment might fail. There might be insufficient permission to access aloc(a, tid).int_val (f.vpr@12.3--12.40)",
    )
    .unwrap();
    assert_eq!(e.start, (12, 3));
    assert_eq!(e.end, (12, 40));
    assert_eq!(errors::error_kind(&e), "assignment.failed");
}

#[test]
fn a_failing_postcondition_maps_to_its_pvl_conjunct() {
    let text = "class C {\n  ensures \\result == x + 1;\n  ensures \\result > 0;\n  int f(int x) {\n    return x + 1;\n  }\n}\n";
    let enc = encode(text).unwrap();
    // Find the Viper line of the second ensures and fake Silicon's report on it.
    let (ln, line) = enc
        .vpr
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim_start().starts_with("ensures") && l.contains("> 0"))
        .unwrap();
    let c1 = line.find("ret").unwrap() as u32 + 1;
    let c2 = line.len() as u32 + 1;
    let e = errors::SiliconError {
        full_id: Some("postcondition.violated:assertion.false".into()),
        message: "Postcondition of C_f might not hold. Assertion ret > 0 might not hold.".into(),
        start: (ln as u32 + 1, c1),
        end: (ln as u32 + 1, c2),
        reason: None,
    };
    let ds = viper::map_errors(&enc, &[e]);
    assert_eq!(ds[0].code, "V-POST");
    assert_eq!(ds[0].primary_span().unwrap().text(text), "\\result > 0");
}

#[test]
fn par_blocks_produce_thread_and_barrier_methods() {
    let root = common::corpus_dir().join("syntax/barrier_forms.pvl");
    let text = std::fs::read_to_string(root).unwrap();
    let enc = encode(&text).unwrap();
    assert!(enc.vpr.contains("method MirrorRounds_mirror_rounds(tid: Int"));
    assert!(enc.vpr.contains("method MirrorRounds_mirror_rounds_barrier1("));
    assert!(enc.vpr.contains("method MirrorRounds_mirror_rounds_barrier2("));
    // The shifted receiver a[n - 1 - tid] is re-indexed so that the trigger is a bare variable.
    assert!(!enc.vpr.contains("{ aloc(a, (n - 1) - tid) }"));
}
