//! The few facts about processes the crate needs: whether a process still runs (a journal
//! record's writer) and who we run as (what owns the data directory's files).

/// Whether the process `pid` exists (ours or another user's). `0` and ids the system cannot
/// have are not processes.
pub fn alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    // Signal 0 checks that the process exists; EPERM means it does, but is someone else's.
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// The effective user id we run as.
pub fn effective_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_no_process_is_not() {
        assert!(alive(std::process::id()));
        assert!(!alive(0));
        assert!(!alive(u32::MAX));
    }
}
