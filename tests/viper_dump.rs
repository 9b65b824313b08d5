//! Developer aid: `VIPER_DUMP=dir cargo test --test viper_dump -- --ignored` writes the Viper
//! encoding of every corpus program (and the combined batch file) to `dir`.

mod common;

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
    let root = common::corpus_dir();
    let files = common::files(&root, "pvl");
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
                std::fs::write(Path::new(&dir).join(name.replace('/', "__") + ".vpr"), &e.vpr)
                    .unwrap();
            }
            Err(ds) => println!("{}", render_plain(&[&src], &ds)),
        }
    }
}
