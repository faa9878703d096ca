//! `create_directory`: `mkdir -p`, each component created beneath the allowed tree without
//! following symlinks. An existing directory is fine; an existing file is `NOT_A_DIRECTORY`.

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::files;
use super::{object_schema, parse_args, ToolSpec};
use crate::call::execute::{execute, Done, Failure};
use crate::call::plan::{Act, ChangePlan, Expect, Keep, Place, Step};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Recorded, Success, ToolNames};
use crate::cancel::CancelToken;
use crate::change::{Action, EntryFacts, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::history::Heading;
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::AsDir;
use crate::paths::{EntryKind, Target};
use crate::permissions::Operation;
use crate::workspace::Workspace;

pub static SPEC: ToolSpec = ToolSpec {
    name: "create_directory",
    description,
    schema,
    mutates: true,
    destructive: false,
    idempotent: true,
    asks: true,
    path_argument: Some("path"),
    summarizes_itself: false,
    format_call: super::format_path,
    run,
};

fn description(names: &ToolNames, _: &WorkspaceOptions) -> String {
    let write = names.hint("write_file", |write| {
        format!(" Not needed before {write}, which creates parent directories itself.")
    });
    format!(
        "Create a directory and any missing parents (like `mkdir -p`); a directory that exists already is fine.{write}"
    )
}

fn schema() -> Value {
    object_schema(
        json!({
            "path": { "type": "string", "minLength": 1, "description": "The directory to create, absolute or relative to the current working directory." },
        }),
        &["path"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("create_directory", args)?;
        let target = call.resolve(&args.path, "path", FinalLink::Follow)?;
        let lock = call.lock_for_change(&[&target.path]).await?;
        let planned = target.clone();
        let existing = call.reading(move || inspect(&planned)).await?;
        let done =
            |output: String, created: Option<(Option<EntryFacts>, Vec<std::path::PathBuf>)>| {
                let success = Success::text(output)
                    .with_data("path", target.path.shown().into_owned())
                    .with_data("created", created.is_some());
                match created {
                    Some((facts, parents)) => {
                        let mut change = FileChange::new(target.path.clone(), Action::Created);
                        change.undo.entry = facts;
                        change.undo.created_dirs = parents;
                        success.with_change(change)
                    }
                    None => success,
                }
            };
        let already = || {
            done(
                format!("Directory already exists: {}", target.path.shown()),
                None,
            )
        };
        match existing {
            Some(true) => return Ok(already()),
            Some(false) => return Err(not_a_directory(&target).into()),
            None => {}
        }
        call.authorize(Authorization::of(
            Operation::Write,
            &target,
            "Create directory?",
            "The user denied this write.",
        ))
        .await?;
        let _lock = lock.exclusive().await;
        let created = target.clone();
        let ws = call.ws.clone();
        let (heading, cancel) = (call.heading.clone(), call.cancel.clone());
        let made = call
            .blocking(move || make(&ws, &created, &heading, &cancel))
            .await?;
        // Someone else made it while the user was asked: `mkdir -p` is satisfied.
        let Some((facts, recorded)) = made else {
            return Ok(already());
        };
        let mut success = done(
            format!("Created directory {}", target.path.shown()),
            Some(facts),
        );
        success.recorded = recorded;
        Ok(success)
    })
}

/// What is at `target` now: a directory (`Some(true)`), something else (`Some(false)`), or
/// nothing (`None`, also when a parent is missing).
fn inspect(target: &Target) -> Result<Option<bool>, ToolError> {
    if target.split().is_none() {
        return Ok(Some(true)); // the root of the file system
    }
    let (parent, name) = match files::open_parent(target, "inspect") {
        Ok(found) => found,
        Err(e) if e.code == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let stat = fsops::lstat_at(parent.as_dir(), &name)
        .map_err(|e| ToolError::io(&e, "inspect", &target.path))?;
    Ok(stat.map(|s| EntryKind::of(&s) == EntryKind::Directory))
}

fn not_a_directory(target: &Target) -> ToolError {
    ToolError::new(
        ErrorCode::NotADirectory,
        format!(
            "{} exists and is not a directory; choose another path",
            target.path.shown()
        ),
    )
}

/// What the history keeps of a directory made: its entry facts and the parents made for it.
type Made = (Option<EntryFacts>, Vec<PathBuf>);

/// How many times a plan is made again when another process made one of its directories
/// between the plan and its commit.
const PLANS: usize = 3;

/// Makes `target` and its missing parents as one change, recorded with it (see [`make_once`]);
/// `None` when another process made `target` first, as `mkdir -p` would not mind.
fn make(
    ws: &Workspace,
    target: &Target,
    heading: &Heading,
    cancel: &CancelToken,
) -> Result<Option<(Made, Recorded)>, ToolError> {
    let mut last = None;
    for _ in 0..PLANS {
        match inspect(target)? {
            Some(true) => return Ok(None),
            Some(false) => return Err(not_a_directory(target)),
            None => {}
        }
        match make_once(ws, target, heading, cancel) {
            Ok(made) => return Ok(Some(made)),
            Err(MakeError::TakenMeanwhile(e)) => last = Some(e),
            Err(MakeError::Failed(e)) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| not_a_directory(target)))
}

enum MakeError {
    /// A directory of the plan was made by someone else after the plan found its name free.
    TakenMeanwhile(ToolError),
    Failed(ToolError),
}

/// One try: the topmost missing directory is built under a temp name with the rest inside it,
/// then takes its name, so a failure or a kill leaves none of them.
fn make_once(
    ws: &Workspace,
    target: &Target,
    heading: &Heading,
    cancel: &CancelToken,
) -> Result<(Made, Recorded), MakeError> {
    let failed = |e: &io::Error| ToolError::io(e, "create directory", &target.path);
    let parents = files::missing_parents(target);
    let top = parents.first().unwrap_or(&target.path).clone();
    let below = target.path.strip_prefix(&top).unwrap_or(Path::new(""));
    let top_target = Target {
        path: top.clone(),
        ..target.clone()
    };
    let Some(at) = Place::of(&top_target) else {
        return Err(MakeError::TakenMeanwhile(failed(&io::Error::from(
            io::ErrorKind::AlreadyExists,
        ))));
    };
    let plan = ChangePlan {
        consume: Vec::new(),
        steps: vec![Step {
            at,
            expect: Expect::Nothing,
            keep: Keep::Nothing,
            act: Act::MakeDir {
                mode: None,
                below: below.to_owned(),
            },
        }],
    };
    let mut facts = None;
    let files = |_: &Done| {
        let made = files::open_parent(target, "create directory").ok();
        facts = made.and_then(|(parent, name)| EntryFacts::of_entry(parent.as_dir(), &name));
        let mut change = FileChange::new(target.path.clone(), Action::Created);
        change.undo.entry = facts;
        change.undo.created_dirs = parents.clone();
        vec![change]
    };
    match execute(ws, plan, heading, cancel, files) {
        Ok(executed) => Ok(((facts, parents), executed.recorded)),
        Err(e) => Err(match e.failure {
            Failure::Io(e) => MakeError::Failed(failed(&e)),
            // Made meanwhile by someone else (the plan found the name free a moment ago).
            Failure::NotAsExpected(_) | Failure::Changed { .. } => {
                MakeError::TakenMeanwhile(failed(&io::Error::from(io::ErrorKind::AlreadyExists)))
            }
            Failure::Invalid(why) => MakeError::Failed(failed(&io::Error::other(why))),
            Failure::Trash(e) => MakeError::Failed(failed(&io::Error::other(e.to_string()))),
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::tools::testing::TestWorkspace;
    use serde_json::json;
    use std::path::Path;

    /// `mkdir -p` is one change made with its record: the record lists the directory with its
    /// identity and the parents made for it, and nothing of the build (temp names, journal
    /// records) is left.
    #[tokio::test]
    async fn the_directories_and_their_record_are_made_as_one_change() {
        let ws = TestWorkspace::new();
        let result = ws
            .call("create_directory", json!({ "path": "a/b/c" }))
            .await;
        assert_eq!(result.code, None, "{}", result.output);
        let c = ws.root.join("a/b/c");
        assert!(std::fs::symlink_metadata(&c).unwrap().is_dir());
        assert_eq!(ws.names(), ["a"]);
        let history = ws.settled_history();
        assert_eq!(history.len(), 1);
        let file = &history[0].record.files[0];
        assert_eq!(file.path, c);
        assert_eq!(file.created_dirs, [ws.root.join("a"), ws.root.join("a/b")]);
        let made = crate::paths::testing::lstat(&c).unwrap();
        let facts = file.entry.unwrap();
        assert_eq!(facts.id, made.id());
    }

    /// A directory that cannot be made (its parent is a file) leaves nothing and records
    /// nothing.
    #[tokio::test]
    async fn a_directory_that_cannot_be_made_leaves_nothing() {
        let ws = TestWorkspace::new();
        std::fs::write(ws.root.join("f"), "x").unwrap();
        let result = ws
            .call("create_directory", json!({ "path": "f/b/c" }))
            .await;
        assert!(result.code.is_some(), "{}", result.output);
        assert_eq!(ws.names(), ["f"]);
        let workspace = ws.toolset.workspace();
        assert!(workspace
            .history()
            .entries(&|_: &Path| true)
            .unwrap()
            .is_empty());
    }
}
