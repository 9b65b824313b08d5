//! Developer aid: `VIPER_DUMP=dir cargo test --test viper_dump -- --ignored` writes the Viper
//! encoding of every corpus program (and the combined batch file) to `dir`.

use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::viper;
use std::path::Path;

#[test]
#[ignore]
fn dump_corpus() {
    let Ok(dir) = std::env::var("VIPER_DUMP") else {
        return;
    };
    let filter = std::env::var("VIPER_FILTER").unwrap_or_default();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut files = Vec::new();
    for d in std::fs::read_dir(&root).unwrap() {
        let d = d.unwrap().path();
        if d.is_dir() {
            for f in std::fs::read_dir(&d).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "pvl") {
                    files.push(f);
                }
            }
        }
    }
    files.sort();
    std::fs::create_dir_all(&dir).unwrap();
    for f in files {
        let name = f.strip_prefix(&root).unwrap().display().to_string();
        if !name.contains(&filter) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let src = SourceFile::new(name.clone(), text);
        let parsed = alpine_rs::front::parse(&src.text, &Default::default());
        if parsed.has_errors() {
            continue;
        }
        match viper::encode(&parsed.program, &src) {
            Ok(e) => {
                std::fs::write(
                    Path::new(&dir).join(name.replace('/', "__") + ".vpr"),
                    &e.vpr,
                )
                .unwrap();
            }
            Err(ds) => println!("{}", render_plain(&[&src], &ds)),
        }
    }
}
