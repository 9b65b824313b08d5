//! Stable fuzzing of the Viper encoder (issue 26): mutants of the corpus, fixture and peer
//! files that parse are encoded (resolution and type checks included); the encoder must produce
//! a Viper program or refuse with an error diagnostic that is not an internal one, and must not
//! panic or take over its budget.
//!
//! With `ALPINE_SLOW=1`, `encoded_mutants_are_valid_viper` also hands a sample of the encoded
//! mutants to Silicon (batches through `viper::verify_batch`, contract-satisfiability checks
//! left out): a Silicon parse, type or consistency error (E-INTERNAL) is an encoder bug. Failed
//! verifications, timeouts and refusals are fine.

use testkit::fuzz;

use alpine_rs::diag::SourceFile;
use fuzz::targets::{encode_target, timed};
use fuzz::{gen, seeds, Reach, Rng, Seeds, Tally};
use std::path::Path;
use std::time::Duration;

fn tally() -> Tally {
    Tally {
        save_to: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz")),
        ..Tally::new("encode")
    }
}

/// `n` mutants (of files up to `max_len` bytes) that parse, from `seed`, each encoded; the
/// tally and the encoded ones (input, Viper text).
fn encode_mutants(seed: u64, n: usize, max_len: usize) -> (Tally, Vec<(String, String)>) {
    let mut rng = Rng(seed);
    let srcs = seeds(Seeds::Small(max_len));
    let mut t = tally();
    let mut encoded = Vec::new();
    let mut i = 0;
    while t.inputs < n {
        let (name, src) = &srcs[i % srcs.len()];
        i += 1;
        let m = gen::mutant(&mut rng, src, 2);
        let (r, took) = timed(Duration::from_secs(2), "encode", &m, || encode_target(&m));
        let r = r.map(|(reach, vpr)| {
            if let Some(v) = vpr {
                encoded.push((m.clone(), v));
            }
            reach
        });
        // Mutants that do not parse never reach the encoder: they do not count.
        if !matches!(r, Ok(Reach::Front)) {
            t.record(&format!("mutant of {name}"), "encode", &m, took, r);
        }
    }
    (t, encoded)
}

/// 2 000 mutants that parse, encoded.
#[test]
fn encode_on_mutants() {
    let (t, encoded) = encode_mutants(0x26_0003, 2000, 4000);
    t.assert_clean(2000);
    assert!(encoded.len() > 500, "only {} mutants encoded", encoded.len());
}

/// Silicon reads what the encoder writes: a sample of encoded mutants, in batches.
#[test]
fn encoded_mutants_are_valid_viper() {
    if std::env::var_os("ALPINE_SLOW").is_none() {
        eprintln!("skipped: set ALPINE_SLOW=1 to check encoded mutants with Silicon's parser");
        return;
    }
    let (t, encoded) = encode_mutants(0x26_0004, 600, 2500);
    t.assert_clean(600);
    let opts = alpine_rs::viper::VerifyOptions {
        timeout_s: 120,
        no_cache: true,
        no_sat: true,
        ..Default::default()
    };
    let mut rejected = Vec::new();
    let mut conclusive = 0;
    let sample: Vec<_> = encoded.iter().step_by(2).take(150).collect();
    for batch in sample.chunks(10) {
        let srcs: Vec<SourceFile> = batch
            .iter()
            .enumerate()
            .map(|(k, (m, _))| SourceFile::new(format!("mutant{k}.pvl"), m.as_str()))
            .collect();
        let reports = alpine_rs::viper::verify_batch(&srcs, &opts);
        for (r, (m, vpr)) in reports.iter().zip(batch) {
            use alpine_rs::viper::Verdict as V;
            conclusive += usize::from(matches!(r.verdict, V::Verified | V::Failed));
            let own = r.diagnostics.iter().find(|d| {
                d.code == "E-INTERNAL" && !d.message.contains("another program of the same batch")
            });
            if let Some(d) = own {
                rejected.push(format!(
                    "{}: {}\n--- input ---\n{m}\n--- viper ---\n{vpr}",
                    d.code, d.message
                ));
            }
            assert!(
                r.verdict != V::BackendMissing,
                "no Silicon backend: {:?}",
                r.diagnostics.first().map(|d| &d.message)
            );
        }
    }
    eprintln!("silicon: {} encoded mutants checked, {conclusive} conclusive", sample.len());
    assert!(rejected.is_empty(), "Silicon rejected encoder output:\n\n{}", rejected.join("\n\n"));
    assert!(conclusive * 2 > sample.len(), "only {conclusive} batches conclusive");
}
