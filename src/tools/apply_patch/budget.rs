//! What a patch may read and write in all (`patchMaxTotalBytes`), and how much new content its
//! plan keeps for the commit.

use std::path::Path;

use crate::error::{ErrorCode, ToolError};
use crate::options::Limits;
use crate::paths::shown::Shown;

/// What a patch may still read and write (`patchMaxTotalBytes`): every file it reads (updated,
/// deleted, moved or replaced) at its size before, plus every file it writes at its size after.
pub(super) struct Budget {
    limit: u64,
    used: u64,
}

impl Budget {
    pub fn new(limits: &Limits) -> Self {
        Budget {
            limit: limits.patch_max_total_bytes,
            used: 0,
        }
    }

    /// Counts `bytes` read or written at `path`; `TOO_LARGE` once the total is over the limit.
    pub(super) fn spend(&mut self, bytes: u64, path: &Path) -> Result<(), ToolError> {
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

/// How much new content the plan keeps for the commit: up to `patchMaxBytes` in all (the size
/// of a patch, so a usual patch is never derived twice), never more than 256 MiB.
pub(super) struct Keeping {
    left: u64,
}

impl Keeping {
    pub(super) fn new(max_bytes: u64) -> Self {
        Keeping {
            left: max_bytes.min(256 << 20),
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
