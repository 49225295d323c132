//! The mutation-testing oracle (`reports/mutants.md`): the protocol passes the quick suite.
//!
//! cargo-mutants seeds one defect at a time into the protocol's files and runs this test
//! alone. It judges only what the protocol promises, never how many states there are: every
//! invariant holds on every preset of the quick suite, every example is reached, and every
//! rule of the protocol is exercised. A mutant it lets through is either equivalent (it
//! changes nothing a property can observe) or a missing property or domain, and
//! `reports/mutants.md` says which.

use memtx_checker::cli::SuiteArgs;
use memtx_checker::suite::run_suite;

#[test]
fn the_protocol_passes_the_quick_suite() {
    let traces = std::env::temp_dir().join(format!("memtx-oracle-{}", std::process::id()));
    let args = SuiteArgs {
        quick: true,
        json: true,
        report: None,
        threads: 2,
        traces,
    };
    let suite = run_suite(&args, "memtx suite --quick").expect("the suite runs");
    assert!(suite.passed(), "{}", suite.render_text());
}
