//! Counts as the messages write them: `1 byte`, `3 bytes`, `2 edits`. Shared by the tools and
//! the engines that render their outputs, so a size reads the same in every message.

/// `n` with its unit, singular for one: `1 byte`, `3 bytes`.
pub fn quantity(n: impl Into<u64>, singular: &str, plural: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {singular}")
    } else {
        format!("{n} {plural}")
    }
}

/// `n` bytes, singular for one.
pub fn bytes(n: impl Into<u64>) -> String {
    quantity(n, "byte", "bytes")
}

/// A size for a person: `512 bytes`, `1.5 KiB`, `48.2 MiB`, `3.0 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return bytes(n);
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_bytes(1), "1 byte");
        assert_eq!(human_bytes(1023), "1023 bytes");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 * 1024 * 1024), "5.0 MiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(bytes(1u64), "1 byte");
        assert_eq!(bytes(0u64), "0 bytes");
        assert_eq!(quantity(3u64, "edit", "edits"), "3 edits");
    }
}
