//! What a "not found" adds about the path the model gave (../../docs/tools.md#error-codes: the fact, then what to do
//! next): whitespace at its ends, which a model copies from a listing by mistake, and the names in
//! its directory nearest to the one it gave (a typo, another extension, another case).

use std::ffi::OsStr;
use std::path::Path;

use crate::paths::fsops;
use crate::paths::shown::{echo, Shown};
use crate::paths::AsDir;
use crate::paths::{Sandbox, Target};

/// The most names suggested.
const MAX_SUGGESTIONS: usize = 3;
/// The most names of a directory compared (a huge directory is not read whole for a hint).
const MAX_NAMES_COMPARED: usize = 10_000;
/// Names longer than this are not compared (the distance is quadratic in the length).
const MAX_NAME_CHARS: usize = 128;

/// Where the model's `raw` path (resolved as `target`) was not found: the hint to add to the
/// "not found" message, starting with `; ` (empty when there is nothing to say). The names in
/// its directory are looked at only when `may_list` (the call may read that directory) and never
/// those of the hidden data directory.
pub fn not_found_hint(raw: &str, target: &Target, sandbox: &Sandbox, may_list: bool) -> String {
    let mut hint = String::new();
    if raw.trim() != raw {
        let quoted = serde_json::to_string(&echo(raw)).unwrap_or_default();
        let (starts, ends) = (raw.trim_start() != raw, raw.trim_end() != raw);
        let place = match (starts, ends) {
            (true, true) => "starts and ends",
            (true, false) => "starts",
            _ => "ends",
        };
        hint.push_str(&format!(
            "; the path you gave, {quoted}, {place} with whitespace, which is part of the name"
        ));
    }
    if !may_list {
        return hint;
    }
    let (Some(parent), Some(name)) = (target.path.parent(), target.path.file_name()) else {
        return hint;
    };
    let dir = match fsops::open_dir(&target.anchor, parent, true) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            hint.push_str(&format!(
                "; its directory {} does not exist either",
                parent.shown()
            ));
            return hint;
        }
        Err(_) => return hint,
    };
    let Ok(names) = fsops::list_names(dir.as_dir()) else {
        return hint;
    };
    let wanted = name.to_string_lossy();
    let mut near: Vec<(usize, String)> = names
        .iter()
        .take(MAX_NAMES_COMPARED)
        .filter(|candidate| !sandbox.is_hidden(&parent.join(candidate)))
        .filter_map(|candidate| {
            let text = candidate.to_str()?;
            closeness(&wanted, text).map(|d| (d, text.to_owned()))
        })
        .collect();
    near.sort();
    let shown: Vec<String> = near
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| {
            serde_json::to_string(&Path::new(OsStr::new(&name)).shown()).unwrap_or_default()
        })
        .collect();
    if !shown.is_empty() {
        hint.push_str(&format!(
            "; similar names in {}: {}",
            parent.shown(),
            shown.join(", ")
        ));
    }
    hint
}

/// How far `candidate` is from the `wanted` name, if near enough to suggest: 0 for the same
/// name but for case or surrounding whitespace, 1 for the same name with another extension, else
/// 1 + the edit distance when it is at most a quarter of the name (at least 1).
fn closeness(wanted: &str, candidate: &str) -> Option<usize> {
    if wanted == candidate {
        return None;
    }
    let fold = |s: &str| s.trim().to_lowercase();
    if fold(wanted) == fold(candidate) {
        return Some(0);
    }
    let stem = |s: &str| s.split_once('.').map_or(s, |(stem, _)| stem).to_owned();
    if !stem(wanted).is_empty() && fold(&stem(wanted)) == fold(&stem(candidate)) {
        return Some(1);
    }
    let (a, b): (Vec<char>, Vec<char>) = (
        wanted.trim().to_lowercase().chars().collect(),
        candidate.to_lowercase().chars().collect(),
    );
    if a.len() > MAX_NAME_CHARS || b.len() > MAX_NAME_CHARS {
        return None;
    }
    let limit = (a.len() / 4).max(1);
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let distance = edit_distance(&a, &b);
    (distance <= limit).then_some(distance + 1)
}

/// Levenshtein distance (insertions, deletions and substitutions of one character).
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_typos_other_extensions_and_other_cases() {
        assert_eq!(closeness("config.ts", "Config.ts"), Some(0));
        assert_eq!(closeness("config.ts", "config.js"), Some(1));
        assert_eq!(closeness("confg.ts", "config.ts"), Some(2));
        assert_eq!(closeness("a.txt", "b.txt"), Some(2));
        assert_eq!(closeness("main.rs", "lib.rs"), None);
        assert_eq!(closeness("config.ts", "config.ts"), None);
        assert_eq!(edit_distance(&['a', 'b'], &[]), 2);
    }
}
