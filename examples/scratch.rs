fn main() {
    for path in std::env::args().skip(1) {
        let src = std::fs::read_to_string(&path).unwrap();
        let p = alpine_rs::front::parse(&src, &Default::default());
        let f = alpine_rs::diag::SourceFile::new(path.clone(), src.clone());
        if p.diagnostics.is_empty() {
            println!("OK {path}");
        } else {
            print!("{}", alpine_rs::diag::render_plain(&[&f], &p.diagnostics));
        }
    }
}
