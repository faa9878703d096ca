//! The three lock modes and which of them conflict (the table in [`super`]'s docs).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Read,
    Change,
    Exclusive,
}

impl Mode {
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// The modes that conflict with this one (the relation is symmetric).
    pub(super) fn conflicting(self) -> &'static [Mode] {
        match self {
            Mode::Read => &[Mode::Exclusive],
            Mode::Change => &[Mode::Change, Mode::Exclusive],
            Mode::Exclusive => &[Mode::Read, Mode::Change, Mode::Exclusive],
        }
    }
}
