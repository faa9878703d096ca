//! Where one `apply_patch` of many chunks spends its time (issue 33, `npm run bench`'s `chunks`
//! case): 10,000 one-line changes on a 100,000-line file in Codex's format, each chunk one
//! context line either side, as `bench/data.mjs` makes them. Times the pure phases one by one:
//! parsing, placing the chunks and rebuilding the text, and the diff for the prompt and result
//! (the one `apply_patch` makes, from the placement, and a whole-file diff for comparison).
//!
//!   cargo bench --bench patch_chunks --target x86_64-unknown-linux-gnu
//!
//! Prints medians; asserts nothing about time (speed is reported, not tested), only that the
//! result is the expected text.

use std::hint::black_box;
use std::time::Duration;

use agent_fs_tools::cancel::CancelToken;
use agent_fs_tools::text::diff::{unified_diff, unified_diff_within};
use agent_fs_tools::text::patch::{self, PatchChange};

mod timing;
use timing::time;

/// Code-like lines with `changes` one-line changes spread evenly; returns (old, new, patch).
fn data(lines: usize, changes: usize) -> (String, String, String) {
    let mut state = 8u64;
    let mut old: Vec<String> = (0..lines)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!(
                "    let value_{} = compute({}, {});",
                state >> 40,
                state % 997,
                (state >> 20) % 131
            )
        })
        .collect();
    let mut new = old.clone();
    let mut chunks = String::new();
    for i in 0..changes {
        let at = ((2 * i + 1) * lines) / (2 * changes);
        old[at] = format!("  const c_{i:05} = compute({at}, 'alpha');");
        new[at] = format!("  const c_{i:05} = compute({at}, 'beta', options);");
        chunks += &format!(
            "@@\n {}\n-{}\n+{}\n {}\n",
            old[at - 1],
            old[at],
            new[at],
            old[at + 1]
        );
    }
    let patch = format!("*** Begin Patch\n*** Update File: big.ts\n{chunks}*** End Patch\n");
    (old.join("\n") + "\n", new.join("\n") + "\n", patch)
}

fn main() {
    let runs = 15;
    let timeout = Duration::from_millis(1000);
    let cancel = CancelToken::new();
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    for (lines, changes) in [(10_000, 1_000), (100_000, 10_000)] {
        let (old, new, input) = data(lines, changes);
        let parsed = patch::parse(&input).expect("the patch parses");
        let PatchChange::Update { chunks, .. } = &parsed.files[0].change else {
            unreachable!("one update")
        };
        let applied = patch::apply("big.ts", &old, chunks, &cancel).expect("every chunk places");
        assert!(applied.text == new, "the patch gives the expected text");
        let parse = time(runs, || {
            black_box(patch::parse(&input).unwrap());
        });
        let apply = time(runs, || {
            black_box(patch::apply("big.ts", &old, chunks, &cancel).unwrap());
        });
        let spans_diff = time(runs, || {
            black_box(unified_diff_within(
                &old,
                &new,
                &applied.spans,
                "a/big.ts",
                "b/big.ts",
                timeout,
            ));
        });
        let whole_diff = time(runs, || {
            black_box(unified_diff(&old, &new, "a/big.ts", "b/big.ts", timeout));
        });
        println!("{changes} chunks on {lines} lines ({} bytes):", old.len());
        println!("  parse {}", ms(parse));
        println!("  place the chunks and rebuild the text {}", ms(apply));
        println!("  diff of what the chunks changed {}", ms(spans_diff));
        println!("  (a whole-file diff, as before {})", ms(whole_diff));
    }
}
