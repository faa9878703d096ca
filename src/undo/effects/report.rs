//! An undo's effects told to the user: counted for the prompt, and one line per path for a
//! prompt's detail and a dry run.

use std::path::Path;

use super::model::Effects;
use crate::confirm::FilesSummary;
use crate::paths::shown::Shown;
use crate::undo::slot::Slot;

impl Effects {
    /// What the undo changes, counted for the prompt (`ConfirmRequest.summary`); `diff` is the
    /// diff it shows.
    pub fn summary(&self, diff: &str) -> FilesSummary {
        let lines = |sign: char, header: &str| {
            diff.lines()
                .filter(|l| l.starts_with(sign) && !l.starts_with(header))
                .count() as u64
        };
        FilesSummary {
            added: self.placements.iter().filter(|p| !p.exchange).count() as u64,
            updated: self.placements.iter().filter(|p| p.exchange).count() as u64,
            deleted: self.removals.iter().filter(|p| !self.refilled(p)).count() as u64,
            moved: self.renames.iter().filter(|r| r.arrives()).count() as u64,
            lines_added: lines('+', "+++"),
            lines_removed: lines('-', "---"),
        }
    }

    /// Whether something is put at `path` after what is there goes to the trash.
    fn refilled(&self, path: &Path) -> bool {
        self.placements.iter().any(|p| p.path == path) || self.renames.iter().any(|r| r.to == path)
    }

    /// One line per path, for a prompt's detail and a dry run.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for path in &self.removals {
            if !self.refilled(path) {
                lines.push(format!("remove {} (into the trash)", path.shown()));
            }
        }
        for rename in self.renames.iter().filter(|r| r.arrives()) {
            lines.push(format!(
                "move {} back to {}",
                rename.from.shown(),
                rename.to.shown()
            ));
        }
        for placement in &self.placements {
            let path = placement.path.shown();
            lines.push(match &placement.slot {
                Slot::Bytes { .. } => format!("restore the previous content of {path}"),
                Slot::Archive { meta, .. } => {
                    let what = meta.kind.as_str();
                    format!("restore the {what} {path} from the trash")
                }
                Slot::NewDir { .. } => format!("recreate the empty directory {path}"),
                Slot::Disk(_) | Slot::Absent | Slot::InArchive { .. } => continue,
            });
        }
        lines
    }
}
