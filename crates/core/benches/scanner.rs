//! How long the text scanner takes on the largest text `POST /ronin/api/v1/scan` reads
//! (100,000 characters), ordinary and hostile. Prints figures; asserts nothing.
//!
//!     cargo bench -p kd-core --bench scanner

#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Instant;

use kd_core::scanner::scan;

fn repeat_to(unit: &str, chars: usize) -> String {
    unit.chars().cycle().take(chars).collect()
}

fn main() {
    let cases = [
        (
            "ordinary prose",
            repeat_to(
                "Summarised the quarterly report into five bullet points with sources. ",
                100_000,
            ),
        ),
        (
            "curl é (non-ASCII near triggers)",
            repeat_to("curl é ", 100_000),
        ),
        ("curl a (many near-matches)", repeat_to("curl a ", 100_000)),
        ("pipes without a shell", repeat_to("curl x | y ", 100_000)),
        ("ignore ignore ignore", repeat_to("ignore the ", 100_000)),
        ("dotted numbers", repeat_to("1.2.3.4.5 ", 100_000)),
        (
            "joiners and marks",
            repeat_to("a\u{200D}b\u{200E}", 100_000),
        ),
        ("CJK", repeat_to("東京の天気は晴れです。", 100_000)),
        ("send your", repeat_to("send your ", 100_000)),
    ];
    println!(
        "{:<36} {:>10} {:>8} {:>8}",
        "input (100,000 chars)", "ms/scan", "level", "reasons"
    );
    for (name, text) in &cases {
        let started = Instant::now();
        let mut runs = 0u32;
        let mut last = scan(text);
        while started.elapsed().as_millis() < 1000 || runs < 3 {
            last = scan(text);
            runs += 1;
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
        println!(
            "{name:<36} {ms:>10.2} {:>8} {:>8}",
            format!("{:?}", last.level),
            last.reasons.len()
        );
    }
}
