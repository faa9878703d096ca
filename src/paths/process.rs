//! The few facts about processes the crate needs: whether a process still runs (a journal
//! record's writer) and who we run as (what owns the data directory's files).

/// Whether the process `pid` exists (ours or another user's). `0` and ids the system cannot
/// have are not processes.
#[cfg(unix)]
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

/// Whether the process `pid` exists (ours or another user's): it can be opened and has not
/// exited, or it exists but we may not open it (`ERROR_ACCESS_DENIED`, as `EPERM`). `0` (the
/// idle process) and ids the system cannot have are not processes.
#[cfg(windows)]
pub fn alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{
        CloseHandle, GetLastError, ERROR_ACCESS_DENIED, STILL_ACTIVE,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    if pid == 0 {
        return false;
    }
    // SAFETY: plain calls; the handle is closed before returning.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if handle.is_null() {
            return GetLastError() == ERROR_ACCESS_DENIED;
        }
        let mut code = 0u32;
        let running = GetExitCodeProcess(handle, &mut code) != 0 && code == STILL_ACTIVE as u32;
        CloseHandle(handle);
        running
    }
}

/// The effective user id we run as.
#[cfg(unix)]
pub fn effective_user() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The user we run as, as `Stat.uid` names owners: on Windows `0`, as every `Stat.uid` is there
/// (owners are SIDs: `fsops::owned_by_user` compares them).
#[cfg(windows)]
pub fn effective_user() -> u32 {
    0
}

/// A named moment a debug build can be told to die at (`AGENT_FS_TOOLS_CRASH_AT=<point>`, a
/// SIGKILL of this process; on Windows `TerminateProcess`, which as surely runs nothing more): the crash harness kills a change at each phase of its commit,
/// deterministically, where random kills cannot hit a window of microseconds. Compiled only
/// with debug assertions: a release build (the published addon) has no such code.
pub fn crash_point(point: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("AGENT_FS_TOOLS_CRASH_AT").is_some_and(|at| at == point) {
        #[cfg(unix)]
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        #[cfg(windows)]
        // SAFETY: ends this process at once, as SIGKILL does; nothing after it runs.
        unsafe {
            use windows_sys::Win32::System::Threading::{GetCurrentProcess, TerminateProcess};
            TerminateProcess(GetCurrentProcess(), 137);
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = point;
}

/// The [`crash_point`] `step <index>`: a commit killed with its steps before `index` applied and
/// the rest not (the recovery tests aim at the middle of a large patch this way on every system,
/// where a kill timed from outside lands before or after so short a window under a slow one).
pub fn crash_point_before_step(index: usize) {
    #[cfg(debug_assertions)]
    if std::env::var_os("AGENT_FS_TOOLS_CRASH_AT").is_some() {
        crash_point(&format!("step {index}"));
    }
    #[cfg(not(debug_assertions))]
    let _ = index;
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
