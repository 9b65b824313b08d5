//! VerCors 2's example suite (dev ab31613) as a regression test (issue 52): every program of
//! `../shared/peer/dev-verdicts.tsv` (PVL, C, CUDA and OpenCL; a multi-file program verified
//! as one) is verified, and our exit code is compared with VerCors' verdict and with
//! `fixtures/peer/dev-expectations.tsv`. The rules are in tests/common/peer.rs;
//! `UPDATE_PEER=1 cargo test --test peer_dev` records the current results.

use testkit::peer;

use peer::{Grouping, Suite};

const SUITE: Suite = Suite {
    table: "dev-verdicts.tsv",
    base: "vercors-dev",
    expectations: "fixtures/peer/dev-expectations.tsv",
    grouping: Grouping::Listed,
    unstable: &[],
};

#[test]
fn vercors_dev_examples_keep_their_verdicts() {
    peer::keep_verdicts(&SUITE);
}
