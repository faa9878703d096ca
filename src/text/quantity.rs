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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular() {
        assert_eq!(bytes(1u64), "1 byte");
        assert_eq!(bytes(0u64), "0 bytes");
        assert_eq!(quantity(3u64, "edit", "edits"), "3 edits");
    }
}
