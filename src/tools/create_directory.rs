//! `create_directory`: `mkdir -p`, each component created beneath the allowed tree without
//! following symlinks. An existing directory is fine; an existing file is `NOT_A_DIRECTORY`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::error::{ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::permissions::Operation;

pub static SPEC: ToolSpec = ToolSpec {
    name: "create_directory",
    description: "Create a directory and any missing parent directories (like `mkdir -p`). Succeeds if the directory \
already exists. Not needed before write_file, which creates parent directories itself.",
    schema,
    mutates: true,
    destructive: false,
    format_call: super::format_path,
    run,
};

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
        let path = target.path.clone();
        let existing = call
            .blocking(move || match std::fs::symlink_metadata(&path) {
                Ok(meta) => Ok(Some(meta.is_dir())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(ToolError::io(&e, "inspect", &path)),
            })
            .await?;
        let done = |output: String, created: bool| {
            let mut success = Success::text(output)
                .with_data("path", target.path.display().to_string())
                .with_data("created", created);
            success.path = Some(target.path.clone());
            success
        };
        match existing {
            Some(true) => {
                return Ok(done(
                    format!("Directory already exists: {}", target.path.display()),
                    false,
                ))
            }
            Some(false) => {
                return Err(ToolError::new(
                    ErrorCode::NotADirectory,
                    format!(
                        "{} exists and is not a directory; choose another path",
                        target.path.display()
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
        let (anchor, path) = (target.anchor.clone(), target.path.clone());
        call.blocking(move || {
            fsops::ensure_dir(&anchor, &path)
                .map(|_| ())
                .map_err(|e| ToolError::io(&e, "create directory", &path))
        })
        .await?;
        Ok(done(
            format!("Created directory {}", target.path.display()),
            true,
        ))
    })
}
