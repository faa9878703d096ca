//! `cwd_get`, `cwd_push`, `cwd_pop`: a per-workspace working-directory stack (like `pushd` and
//! `popd`) that relative paths of every tool follow. The process's own cwd is never changed, and
//! these tools never ask for confirmation (they are still bounded by `allowedPaths`).

use serde::Deserialize;
use serde_json::{json, Value};

use super::files;
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{BoxFuture, Call, Outcome, Success, ToolNames};
use crate::error::{ErrorCode, ToolError};
use crate::options::WorkspaceOptions;
use crate::paths::canonical::resolve;
use crate::paths::fsops;
use crate::paths::os_error::{self, cause, Cause};
use crate::paths::project::find_project_root;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::workspace::{CwdFrame, CwdInfo};

pub static GET: ToolSpec = ToolSpec {
    name: "cwd_get",
    description: get_description,
    schema: no_arguments,
    mutates: false,
    destructive: false,
    idempotent: true,
    asks: false,
    path_argument: None,
    summarizes_itself: false,
    format_call: no_header,
    run: run_get,
};

fn get_description(_: &ToolNames, _: &WorkspaceOptions) -> String {
    "Show the working directory that relative paths of these tools resolve against. Also shows the project \
root (the nearest directory holding .git) and the depth of the directory stack. It is this toolset's own: no shell or process \
directory is involved."
        .to_owned()
}

pub static PUSH: ToolSpec = ToolSpec {
    name: "cwd_push",
    description: push_description,
    schema: push_schema,
    mutates: false,
    destructive: false,
    idempotent: false,
    asks: false,
    path_argument: Some("path"),
    summarizes_itself: false,
    format_call: super::format_path,
    run: run_push,
};

fn push_description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let pop = names.hint("cwd_pop", |pop| {
        format!(", remembering the current one so that {pop} returns to it (like pushd). Pair every push with a pop when the work there is done")
    });
    format!(
        "Change the working directory that relative paths of these tools resolve against{pop}. It does not change \
the directory of a shell or of the process."
    )
}

pub static POP: ToolSpec = ToolSpec {
    name: "cwd_pop",
    description: pop_description,
    schema: no_arguments,
    mutates: false,
    destructive: false,
    idempotent: false,
    asks: false,
    path_argument: None,
    summarizes_itself: false,
    format_call: no_header,
    run: run_pop,
};

fn pop_description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let push = names.hint("cwd_push", |push| format!(" saved by the last {push}"));
    format!(
        "Return to the working directory{push} (like popd), with its project root. It affects only the relative \
paths of these tools."
    )
}

fn no_arguments() -> Value {
    object_schema(json!({}), &[])
}

fn push_schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The directory to change to, absolute or relative to the current working directory." },
        }),
        &["path"],
    )
}

fn no_header(_: &Value) -> String {
    String::new()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PushArgs {
    path: String,
}

fn with_cwd_data(success: Success, info: &CwdInfo) -> Success {
    success
        .with_data("cwd", info.cwd.shown().into_owned())
        .with_data("projectRoot", info.project_root.shown().into_owned())
        .with_data("depth", info.depth)
}

fn run_get(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let _: NoArgs = parse_args("cwd_get", args)?;
        let info = call.ws.cwd_snapshot();
        let text = format!(
            "CWD: {}\nProjectRoot: {}\nStack depth: {}",
            info.cwd.shown(),
            info.project_root.shown(),
            info.depth
        );
        Ok(with_cwd_data(Success::text(text), &info))
    })
}

fn run_push(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: PushArgs = parse_args("cwd_push", args)?;
        let target = call.resolve(&args.path, "path", FinalLink::Follow)?;
        let planned = target.clone();
        let hint = format!("{} changes to a directory; give one", call.tool_name);
        let project_root = call
            .reading(move || {
                files::open_directory(&planned, false, "change to", &hint)?;
                Ok(find_project_root(&planned.path))
            })
            .await?;
        let max = call.limits().cwd_max_depth as usize;
        call.begin_change()?;
        let (depth, same) = {
            let mut stack = call.ws.cwd_stack();
            if stack.saved.len() >= max {
                let pop = call.names.hint("cwd_pop", |pop| {
                    format!("; use {pop} to return from directories you are done with")
                });
                return Err(ToolError::new(
                    ErrorCode::StackOverflow,
                    format!("directory stack overflow (max {max}){pop}"),
                )
                .into());
            }
            let same = stack.current.cwd == target.path;
            let frame = CwdFrame {
                cwd: target.path.clone(),
                project_root: project_root.clone().unwrap_or_else(|| target.path.clone()),
            };
            let previous = std::mem::replace(&mut stack.current, frame);
            stack.saved.push(previous);
            (stack.saved.len(), same)
        };
        let verb = if same { "Already in" } else { "Pushed to" };
        let mut text = format!("{verb} {} (stack depth: {depth})", target.path.shown());
        if project_root.is_none() {
            text.push_str("\nNote: not a git repository, using directory as project root");
        }
        Ok(with_cwd_data(Success::text(text), &call.ws.cwd_snapshot()))
    })
}

fn run_pop(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let _: NoArgs = parse_args("cwd_pop", args)?;
        let saved = call.ws.cwd_stack().saved.last().cloned();
        let Some(saved) = saved else {
            let info = call.ws.cwd_snapshot();
            let text = format!(
                "Stack is empty, already at initial directory: {}",
                info.cwd.shown()
            );
            return Ok(with_cwd_data(Success::text(text), &info));
        };
        let (sandbox, dir, depth) = (
            call.ws.sandbox().clone(),
            saved.cwd.clone(),
            call.ws.cwd_stack().saved.len(),
        );
        let elsewhere = call
            .names
            .hint("cwd_push", |push| format!(" Use {push} to go elsewhere"));
        // The saved directory is reached again as a push would reach it: without following a
        // link that replaced part of it since, and only inside the allowed trees.
        call.reading(move || {
            let unchanged = format!("the stack is unchanged (depth {depth})");
            let gone = || {
                ToolError::new(
                    ErrorCode::NotFound,
                    format!(
                        "cannot pop to {}: the directory no longer exists; {unchanged}.{elsewhere}",
                        dir.shown()
                    ),
                )
            };
            let anchor = sandbox.anchor_of(&dir).ok_or_else(gone)?;
            let became_link = || resolve(&dir).is_ok_and(|c| c.path != dir);
            match fsops::open_dir(&anchor, &dir, false) {
                Ok(_) => Ok(()),
                // (A link in the way is ELOOP or ENOTDIR, as the kernel decides.)
                Err(e)
                    if matches!(cause(&e), Cause::NotFound | Cause::NotADirectory)
                        && !became_link() =>
                {
                    Err(gone())
                }
                Err(e) => {
                    let e = if became_link() {
                        os_error::error(Cause::Loop)
                    } else {
                        e
                    };
                    let mut error = ToolError::io(&e, "pop to", &dir);
                    error.message.push_str(&format!("; {unchanged}"));
                    Err(error)
                }
            }
        })
        .await?;
        call.begin_change()?;
        let mut stack = call.ws.cwd_stack();
        // Pop only the frame we checked (a concurrent push/pop may have moved the stack).
        if stack.saved.last() == Some(&saved) {
            stack.current = stack.saved.pop().expect("checked above");
        }
        let info = CwdInfo {
            cwd: stack.current.cwd.clone(),
            project_root: stack.current.project_root.clone(),
            depth: stack.saved.len(),
        };
        drop(stack);
        let text = format!(
            "Popped to {} (stack depth: {})\nProjectRoot: {}",
            info.cwd.shown(),
            info.depth,
            info.project_root.shown()
        );
        Ok(with_cwd_data(Success::text(text), &info))
    })
}
