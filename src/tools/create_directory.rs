//! `create_directory`: `mkdir -p`, each component created beneath the allowed tree without
//! following symlinks. An existing directory is fine; an existing file is `NOT_A_DIRECTORY`.

use std::os::fd::AsFd;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files;
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success, ToolNames};
use crate::change::{Action, EntryFacts, FileChange};
use crate::error::{ErrorCode, ToolError};
use crate::options::WorkspaceOptions;
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::EntryKind;
use crate::permissions::Operation;

pub static SPEC: ToolSpec = ToolSpec {
    name: "create_directory",
    description,
    schema,
    mutates: true,
    destructive: false,
    idempotent: true,
    asks: true,
    path_argument: Some("path"),
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
        let existing = call
            .reading(move || {
                if planned.split().is_none() {
                    return Ok(Some(true)); // the root of the file system
                }
                let (parent, name) = match files::open_parent(&planned, "inspect") {
                    Ok(found) => found,
                    Err(e) if e.code == ErrorCode::NotFound => return Ok(None),
                    Err(e) => return Err(e),
                };
                let stat = fsops::lstat_at(parent.as_fd(), &name)
                    .map_err(|e| ToolError::io(&e, "inspect", &planned.path))?;
                Ok(stat.map(|s| EntryKind::of(&s) == EntryKind::Directory))
            })
            .await?;
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
        match existing {
            Some(true) => {
                return Ok(done(
                    format!("Directory already exists: {}", target.path.shown()),
                    None,
                ))
            }
            Some(false) => {
                return Err(ToolError::new(
                    ErrorCode::NotADirectory,
                    format!(
                        "{} exists and is not a directory; choose another path",
                        target.path.shown()
                    ),
                )
                .into())
            }
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
        let facts = call
            .blocking(move || {
                let parents = files::missing_parents(&created);
                fsops::ensure_dir(&created.anchor, &created.path)
                    .map_err(|e| ToolError::io(&e, "create directory", &created.path))?;
                let (parent, name) = files::open_parent(&created, "create directory")?;
                Ok((files::entry_facts(parent.as_fd(), &name), parents))
            })
            .await?;
        Ok(done(
            format!("Created directory {}", target.path.shown()),
            Some(facts),
        ))
    })
}
