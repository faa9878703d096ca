//! What a patch may read and write in all (`patchMaxTotalBytes`), and how much of the files'
//! contents its plan keeps for the commit.

use std::path::{Path, PathBuf};

use crate::error::{ErrorCode, ToolError};
use crate::options::Limits;
use crate::paths::shown::Shown;

/// What a patch may still read and write (`patchMaxTotalBytes`): every file it reads (updated,
/// deleted, moved or replaced) at its size before, plus every file it writes at its size after.
pub(super) struct Budget {
    limit: u64,
    used: u64,
    /// For a file planned alongside others: what it spends, in order, counted against the
    /// patch's budget once the files before it are ([`Budget::settle`]).
    spent: Option<Vec<(u64, PathBuf)>>,
}

impl Budget {
    pub fn new(limits: &Limits) -> Self {
        Budget {
            limit: limits.patch_max_total_bytes,
            used: 0,
            spent: None,
        }
    }

    /// A budget that only notes what one file spends (never refuses), for [`Budget::settle`].
    pub fn noting(limits: &Limits) -> Self {
        Budget {
            spent: Some(Vec::new()),
            ..Budget::new(limits)
        }
    }

    /// Counts what the file `noted` spent against this budget, in the order it spent it: the
    /// refusal it would have met, at the same point, had it been planned on this budget.
    pub(super) fn settle(&mut self, noted: Budget) -> Result<(), ToolError> {
        for (bytes, path) in noted.spent.unwrap_or_default() {
            self.spend(bytes, &path)?;
        }
        Ok(())
    }

    /// Counts `bytes` read or written at `path`; `TOO_LARGE` once the total is over the limit.
    pub(super) fn spend(&mut self, bytes: u64, path: &Path) -> Result<(), ToolError> {
        if let Some(spent) = &mut self.spent {
            spent.push((bytes, path.to_owned()));
            return Ok(());
        }
        self.used = self.used.saturating_add(bytes);
        if self.used <= self.limit {
            return Ok(());
        }
        Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "the patch reads and writes more than {} bytes in all (patchMaxTotalBytes: its files before and after, summed), reached at {}; split it into several patches that each change fewer or smaller files",
                self.limit,
                path.shown()
            ),
        ))
    }
}

/// How much new content the plan keeps for the commit, so that the commit does not derive it
/// again: up to the larger of `patchMaxBytes` (the size of a patch: a usual patch of many files)
/// and `editMaxFileBytes` (the largest file a patch may change: a patch of one file is never
/// derived twice), never more than 256 MiB. What is left of it after a file's new content
/// keeps the bytes the file held, which the commit then compares with rather than hashing.
pub(super) struct Keeping {
    left: u64,
}

impl Keeping {
    pub(super) fn new(limits: &Limits) -> Self {
        Keeping {
            left: limits
                .patch_max_bytes
                .max(limits.edit_max_file_bytes)
                .min(256 << 20),
        }
    }

    /// `new`, if it still fits.
    pub(super) fn keep(&mut self, new: Vec<u8>) -> Option<Vec<u8>> {
        let len = new.len() as u64;
        (len <= self.left).then(|| {
            self.left -= len;
            new
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: u64) -> Limits {
        Limits {
            patch_max_total_bytes: total,
            ..Limits::default()
        }
    }

    #[test]
    fn a_file_planned_alongside_others_is_refused_where_it_would_have_been() {
        let limits = limits(100);
        let mut budget = Budget::new(&limits);
        let mut first = Budget::noting(&limits);
        first.spend(60, Path::new("a.ts")).unwrap();
        // Noting never refuses, however much is noted.
        let mut second = Budget::noting(&limits);
        second.spend(30, Path::new("b.ts")).unwrap();
        second.spend(30, Path::new("c.ts")).unwrap();
        second.spend(500, Path::new("d.ts")).unwrap();
        budget.settle(first).unwrap();
        let refused = budget.settle(second).unwrap_err();
        assert_eq!(refused.code, ErrorCode::TooLarge);
        assert!(
            refused.message.contains("reached at c.ts"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn a_file_at_the_edit_limit_is_kept_even_past_patch_max_bytes() {
        let keeping = |patch_max_bytes, edit_max_file_bytes| {
            Keeping::new(&Limits {
                patch_max_bytes,
                edit_max_file_bytes,
                ..Limits::default()
            })
        };
        let mut kept = keeping(100, 1_000);
        assert!(kept.keep(vec![b'a'; 1_000]).is_some());
        assert!(
            kept.keep(vec![b'b']).is_none(),
            "past the budget: derived again"
        );
        // The larger of the two, whichever it is.
        let mut kept = keeping(1_000, 100);
        assert!(kept.keep(vec![b'a'; 600]).is_some());
        assert!(kept.keep(vec![b'b'; 400]).is_some());
        assert!(kept.keep(vec![b'c']).is_none());
    }
}
