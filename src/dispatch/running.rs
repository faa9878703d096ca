//! Running a tool's future: as a task of its own that an abort gives up on at once, and with
//! a panic turned into a result.

use serde_json::Value;

use crate::call::{BoxFuture, Call, Failure, Outcome};
use crate::error::{ErrorCode, ToolError};

/// Polls a tool's future, turning a panic (a bug) into an `IO_ERROR` result instead of a rejected
/// promise: `ws.call` never throws for what a tool does (../../docs/hosts.md#the-workspace-api). The future is dropped right
/// after the panic, releasing its locks.
/// Runs the tool as a task of its own, so that an abort is answered at once even while the
/// tool is stuck in the kernel (a read of a hung NFS or FUSE file system, on a runtime thread
/// or a blocking one): `ABORTED`, and the task is cancelled, dropping its locks at its next
/// await. A call is given up on only before it starts to change anything ([`crate::call::AbortGate`]);
/// after that its own abort checks decide, and its result is awaited.
pub(super) async fn run_until_aborted(
    call: Call,
    run: for<'a> fn(&'a Call, Value) -> BoxFuture<'a, Outcome>,
    args: Value,
) -> Outcome {
    let cancel = call.cancel.clone();
    let gate = call.abort_gate();
    let mut task = tokio::spawn(async move { catch_panics(run(&call, args)).await });
    let joined = tokio::select! {
        joined = &mut task => joined,
        () = cancel.aborted() => {
            if gate.give_up() {
                task.abort();
                return Err(Failure::Error(ToolError::aborted()));
            }
            task.await
        }
    };
    joined.unwrap_or_else(|e| {
        Err(Failure::Error(ToolError::new(
            ErrorCode::IoError,
            format!("internal error in the tool ({e}); the call was stopped. This is a bug in agent-fs-tools, not in your arguments"),
        )))
    })
}

pub(super) async fn catch_panics(mut run: BoxFuture<'_, Outcome>) -> Outcome {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::task::Poll;
    std::future::poll_fn(move |cx| match catch_unwind(AssertUnwindSafe(|| run.as_mut().poll(cx))) {
        Ok(poll) => poll,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let what: String = what.chars().take(200).collect();
            Poll::Ready(Err(Failure::Error(ToolError::new(
                ErrorCode::IoError,
                format!("internal error in the tool ({what}); the call was stopped. This is a bug in agent-fs-tools, not in your arguments"),
            ))))
        }
    })
    .await
}

#[cfg(test)]
mod panic_tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_tool_becomes_an_io_error_result() {
        let outcome = catch_panics(Box::pin(async { panic!("boom in a tool") })).await;
        match outcome {
            Err(Failure::Error(e)) => {
                assert_eq!(e.code, ErrorCode::IoError);
                assert!(e.message.contains("boom in a tool"), "{}", e.message);
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
}
