//! Who asks for a change, and the refusal of a change that would wait for the prompt of the
//! call whose confirm handler made it.

/// Who asks for a change: a call, and the calls whose confirm handlers it was made from,
/// outermost first (none for a call the host made directly).
#[derive(Clone, Copy, Debug, Default)]
pub struct Asker<'a> {
    pub call: Option<u32>,
    pub answering: &'a [u32],
}

/// A change refused because it would wait for a change of the call whose confirm handler made
/// it, which cannot go on before the handler answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitsForItsAsker {
    /// The call that holds the paths.
    pub call: u32,
}
