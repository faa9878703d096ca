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

/// A named moment a debug build can be told to die at (`AGENT_FS_TOOLS_CRASH_AT=<point>`, a
/// SIGKILL of this process): the crash harness kills a change at each phase of its commit,
/// deterministically, where random kills cannot hit a window of microseconds. Compiled only
/// with debug assertions: a release build (the published addon) has no such code.
pub fn crash_point(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("AGENT_FS_TOOLS_CRASH_AT").is_some_and(|at| at == point) {
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
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
