//! What keeping an edit's old bytes for undo (../docs/history-and-undo.md) costs `edit_file`, on the bench's 2 MB
//! case (50 one-line edits and a replaceAll of 2,000 occurrences): the parts of the call that
//! exist only for the history, timed against the diff every edit computes anyway.
//!
//!   cargo bench --bench edit_history --target x86_64-unknown-linux-gnu
//!
//! Prints medians; asserts nothing about time (speed is reported, not tested).

use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

use agent_fs_tools::hashing::sha256_hex;
use agent_fs_tools::text::delta::Delta;
use agent_fs_tools::text::diff::diff_with_delta;

mod timing;
use timing::time;

/// About `bytes` of code-like lines with `markers` unique lines to edit and `shared` lines that
/// a replaceAll changes; returns (old, new).
fn texts(bytes: usize, markers: usize, shared: usize) -> (String, String) {
    let mut lines: Vec<String> = Vec::new();
    let mut size = 0;
    let mut state = 1u64;
    while size < bytes {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let line = format!(
            "    let value_{} = compute({}, {});",
            state >> 40,
            state % 997,
            (state >> 20) % 131
        );
        size += line.len() + 1;
        lines.push(line);
    }
    let n = lines.len();
    for i in 0..shared {
        lines[(2 * i + 1) * n / (2 * shared)] = format!("  result = legacyHandler(request, {i});");
    }
    for i in 0..markers {
        lines[(4 * i + 1) * n / (4 * markers)] =
            format!("  const marker_{i:04} = computeValue({i}, 'alpha');");
    }
    let old = lines.join("\n") + "\n";
    let new = old
        .replace("'alpha'", "'beta', options")
        .replace("legacyHandler", "modernHandler");
    (old, new)
}

fn main() {
    let (old, new) = texts(2 << 20, 50, 2000);
    let timeout = Duration::from_millis(1000);
    let dir = tempfile::tempdir().expect("a temp dir");
    let runs = 15;

    let diff = time(runs, || {
        black_box(diff_with_delta(&old, &new, "a", "a", timeout, 0));
    });
    let (_, delta) = diff_with_delta(&old, &new, "a", "a", timeout, 0);
    let encode = time(runs, || {
        black_box(delta.encode());
    });
    let encoded = delta.encode();
    let hashes = time(runs, || {
        black_box(sha256_hex(old.as_bytes()));
        black_box(sha256_hex(new.as_bytes()));
    });
    let mut n = 0;
    let store = time(runs, || {
        n += 1;
        let mut file = std::fs::File::create(dir.path().join(format!("{n}.delta"))).unwrap();
        file.write_all(&encoded).unwrap();
    });
    let common_ends = time(runs, || {
        black_box(Delta::around_common_ends(old.as_bytes(), new.as_bytes()).encode());
    });
    // The sha256 of both sides is not the history's cost: edit_file computed it for the audit log
    // (../docs/trash.md) before there was a history. It is timed for scale.
    let history = encode + store;
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    println!(
        "edit_file 2 MB case ({} bytes, delta {} bytes):",
        old.len(),
        encoded.len()
    );
    println!(
        "  diff + line-matched delta (every edit; the delta is a pass over the diff's ops): {}",
        ms(diff)
    );
    println!(
        "  history only: encode {} + store the delta {} = {}",
        ms(encode),
        ms(store),
        ms(history)
    );
    println!(
        "  (every edit, before the history too: sha256 of both sides for the audit log {})",
        ms(hashes)
    );
    println!(
        "  for comparison, Delta::around_common_ends + encode: {}",
        ms(common_ends)
    );
}
