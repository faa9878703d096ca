//! `copy_file`: copy a file, a symlink (as a link) or a whole directory tree (links inside as
//! links; FIFOs, sockets and devices refused before anything is written). The copy is built
//! under a journaled temp name beside the destination and placed by one commit with its history
//! record, so a failure or a kill leaves nothing. An existing destination is replaced only with
//! `overwrite: true`, after it has gone to the trash; replacing a tree always asks.
//!
//! The story is `run`; what it reads first is `plan`, the question `prompt`, the change
//! `make` (its failures `failure`), the refusals `refusals` and the result `report`.

use serde::Deserialize;
use serde_json::{json, Value};

use super::destination;
use super::{blast_radius, object_schema, parse_args, ToolSpec};
use crate::call::{BoxFuture, Call, Outcome, ToolNames};
use crate::options::WorkspaceOptions;
use crate::paths::sandbox::FinalLink;
use crate::progress::Meter;

mod failure;
mod make;
mod plan;
mod prompt;
mod refusals;
mod report;

use make::Copying;
#[cfg(test)]
use plan::too_large;

pub static SPEC: ToolSpec = ToolSpec {
    name: "copy_file",
    description,
    schema,
    mutates: true,
    destructive: true,
    idempotent: false,
    asks: true,
    path_argument: Some("source"),
    summarizes_itself: false,
    format_call,
    run,
};

fn description(_: &ToolNames, _: &WorkspaceOptions) -> String {
    "Copy a file, a symbolic link (the link itself) or a whole directory tree (links inside stay links; FIFOs, sockets \
and devices are refused). destination is the path of the copy, not a directory to copy into; its missing parents are \
created. The copy appears all at once, with content, permissions and modification times. An existing destination is an \
error unless overwrite is true: then it goes to the recoverable trash first, and when it is a directory the user is \
always asked."
        .to_owned()
}

fn schema() -> Value {
    object_schema(
        json!({
            "source": { "type": "string", "minLength": 1, "description": "The file, link or directory to copy, absolute or relative to the current working directory." },
            "destination": { "type": "string", "minLength": 1, "description": "The path of the copy (not the directory to copy it into), absolute or relative to the current working directory." },
            "overwrite": { "type": "boolean", "description": "Replace an existing destination (it goes to the trash first). Default false." },
        }),
        &["source", "destination"],
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    source: String,
    destination: String,
    #[serde(default)]
    overwrite: bool,
}

fn format_call(args: &Value) -> String {
    let get = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or("");
    super::with_flags(
        format!("{} → {}", get("source"), get("destination")),
        args,
        &["overwrite"],
    )
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("copy_file", args)?;
        let source = call.resolve(&args.source, "source", FinalLink::Keep)?;
        let destination = call.resolve(&args.destination, "destination", FinalLink::Keep)?;
        destination::refuse_dangerous(&call.ws, &destination.path)?;
        refusals::same_or_inside(&call.tool_name, &source, &destination)?;
        let lock = call
            .lock_for_change(&[&source.path, &destination.path])
            .await?;
        let (src, dst, overwrite) = (source.clone(), destination.clone(), args.overwrite);
        let (tool, given, cancel) = (
            call.tool_name.clone(),
            args.destination.clone(),
            call.cancel.clone(),
        );
        let found = call
            .reading(move || plan::plan(&src, &dst, overwrite, &tool, &given, &cancel))
            .await?;
        let replaced_tree =
            destination::replaces_tree(found.replaced_tree.as_ref(), &destination.path);
        let asked = prompt::authorization(&source, &destination, &found, replaced_tree.as_deref());
        call.authorize(asked).await?;
        let _lock = lock.exclusive().await;
        let meter = match &found.replaced_tree {
            Some(replaced) => blast_radius::trash_meter(&call.progress, replaced),
            None => Meter::none(),
        };
        let copying = Copying {
            source: source.clone(),
            destination: destination.clone(),
            planned: found.source,
            replaced: found.replaced,
        };
        let (ws, heading, cancel) = (call.ws.clone(), call.heading.clone(), call.cancel.clone());
        let made = call
            .blocking(move || meter.scoped(|| copying.make(&ws, &heading, &cancel)))
            .await?;
        if let Some(seen) = &made.seen {
            call.saw(&destination.path, seen);
        }
        Ok(report::success(
            call,
            &source,
            &destination,
            found.source.kind(),
            made,
        ))
    })
}

#[cfg(test)]
#[path = "copy_file_tests.rs"]
mod tests;
