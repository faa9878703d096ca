//! `move_file`: move or rename a file, symlink or directory. An existing destination is replaced
//! only with `overwrite: true`, after it has been put into the trash; if the move then fails, the
//! destination is restored from that archive.

use std::os::fd::AsFd;

use serde::Deserialize;
use serde_json::{json, Value};

use super::files;
use super::trashing::{put_in_trash, restore_hint, restore_into, trash_error};
use super::{object_schema, parse_args, ToolSpec};
use crate::call::{Authorization, BoxFuture, Call, Outcome, Success};
use crate::error::{libc_codes, ErrorCode, ToolError};
use crate::paths::fsops;
use crate::paths::sandbox::FinalLink;
use crate::permissions::Operation;

pub static SPEC: ToolSpec = ToolSpec {
    name: "move_file",
    description: "Move or rename a file, symbolic link or directory, creating the destination's parent directories. \
Fails if the destination exists unless overwrite is true, in which case the existing destination is first put into the \
recoverable trash.",
    schema,
    mutates: true,
    destructive: true,
    format_call,
    run,
};

fn schema() -> Value {
    object_schema(
        json!({
            "source": { "type": "string", "minLength": 1, "description": "The file, link or directory to move, absolute or relative to the current working directory." },
            "destination": { "type": "string", "minLength": 1, "description": "Its new path (not the directory to move it into), absolute or relative to the current working directory." },
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
    format!("{} → {}", get("source"), get("destination"))
}

fn run(call: &Call, args: Value) -> BoxFuture<'_, Outcome> {
    Box::pin(async move {
        let args: Args = parse_args("move_file", args)?;
        let source = call.resolve(&args.source, "source", FinalLink::Keep)?;
        let destination = call.resolve(&args.destination, "destination", FinalLink::Keep)?;
        let root = call.ws.sandbox().root();
        if root.starts_with(&source.path) || call.ws.sandbox().contains_hidden(&source.path) {
            return Err(ToolError::new(
                ErrorCode::DangerousPath,
                format!("{} is the workspace root, an ancestor of it, or holds the trash; it cannot be moved", source.path.display()),
            )
            .into());
        }
        if destination.path.starts_with(&source.path) {
            return Err(ToolError::invalid(format!(
                "move_file: invalid arguments: destination {} is the source or inside it",
                destination.path.display()
            ))
            .into());
        }
        let _lock = call.lock(&[&source.path, &destination.path]).await;
        let (src, dst, overwrite) = (source.clone(), destination.clone(), args.overwrite);
        let (source_inode, destination_existed) = call
            .blocking(move || {
                let (src_parent, src_name) = files::open_parent(&src, "move")?;
                let src_stat = fsops::lstat_at(src_parent.as_fd(), &src_name)
                    .map_err(|e| ToolError::io(&e, "move", &src.path))?
                    .ok_or_else(|| ToolError::new(ErrorCode::NotFound, format!("source not found: {}", src.path.display())))?;
                let dst_stat = match files::open_parent(&dst, "move to") {
                    Ok((parent, name)) => fsops::lstat_at(parent.as_fd(), &name).map_err(|e| ToolError::io(&e, "move to", &dst.path))?,
                    Err(e) if e.code == ErrorCode::NotFound => None,
                    Err(e) => return Err(e),
                };
                if let Some(d) = &dst_stat {
                    if (d.st_dev, d.st_ino) == (src_stat.st_dev, src_stat.st_ino) {
                        return Err(ToolError::invalid(format!(
                            "move_file: invalid arguments: source and destination are the same file ({})",
                            dst.path.display()
                        )));
                    }
                    if !overwrite {
                        return Err(ToolError::new(
                            ErrorCode::AlreadyExists,
                            format!(
                                "{} already exists; pass overwrite: true to replace it (the existing one goes to the trash first), or choose another destination",
                                dst.path.display()
                            ),
                        ));
                    }
                }
                Ok(((src_stat.st_dev, src_stat.st_ino), dst_stat.is_some()))
            })
            .await?;
        call.authorize(Authorization {
            needs: vec![
                (Operation::Write, destination.inside_root),
                (Operation::Remove, source.inside_root),
            ],
            always_ask: false,
            label: "Move file?",
            path: &source.path,
            detail: format!("{} → {}", source.path.display(), destination.path.display()),
            diff: None,
            recursive: None,
            permanent: None,
            denial: "The user denied this move.",
        })
        .await?;
        let (ws, src, dst, cancel) = (
            call.ws.clone(),
            source.clone(),
            destination.clone(),
            call.cancel.clone(),
        );
        let archived = call
            .blocking(move || {
                let (src_parent, src_name) = files::open_parent(&src, "move")?;
                let now = fsops::lstat_at(src_parent.as_fd(), &src_name).map_err(|e| ToolError::io(&e, "move", &src.path))?;
                if now.map(|s| (s.st_dev, s.st_ino)) != Some(source_inode) {
                    return Err(files::changed_since_planned(&src.path));
                }
                let (dst_parent_path, dst_name) = dst.split().ok_or_else(|| files::is_a_directory(&dst.path))?;
                let dst_parent = fsops::ensure_dir(&dst.anchor, dst_parent_path)
                    .and_then(|(fd, _)| fsops::reopen_readable(fd.as_fd()))
                    .map_err(|e| ToolError::io(&e, "create the parent directory of", &dst.path))?;
                let exists = fsops::lstat_at(dst_parent.as_fd(), dst_name).map_err(|e| ToolError::io(&e, "move to", &dst.path))?.is_some();
                if exists != destination_existed {
                    return Err(files::changed_since_planned(&dst.path));
                }
                let archived = if exists {
                    Some(put_in_trash(&ws, dst_parent.as_fd(), dst_name, &dst.path, true, &cancel)?)
                } else {
                    None
                };
                if let Err(e) = fsops::rename_noreplace(src_parent.as_fd(), &src_name, dst_parent.as_fd(), dst_name) {
                    let mut error = match e.raw_os_error() {
                        Some(libc_codes::EXDEV) => ToolError::new(
                            ErrorCode::IoError,
                            format!(
                                "cannot move {} to {}: they are on different file systems, and move_file only renames within one",
                                src.path.display(),
                                dst.path.display()
                            ),
                        ),
                        _ => ToolError::io(&e, "move", &src.path),
                    };
                    if let Some(archived) = &archived {
                        match restore_into(&ws, &archived.archive_path, dst_parent_path, dst_parent.as_fd(), dst_name, &|| false) {
                            Ok(_) => error.message.push_str("; the destination was restored as it was"),
                            Err(re) => error.message.push_str(&format!(
                                "; the previous destination is in the trash at {} ({})",
                                archived.archive_path.display(),
                                trash_error(re, "restore", &dst.path).message
                            )),
                        }
                    }
                    return Err(error);
                }
                fsops::fsync_dir(dst_parent.as_fd());
                fsops::fsync_dir(src_parent.as_fd());
                Ok(archived)
            })
            .await?;
        let mut success = Success::text(format!(
            "Moved {} → {}",
            source.path.display(),
            destination.path.display()
        ))
        .with_data("source", source.path.display().to_string())
        .with_data("destination", destination.path.display().to_string());
        if let Some(archived) = archived {
            success.output.push_str(&format!(
                "\nThe previous {} is in the trash at {}; {}.",
                destination.path.display(),
                archived.archive_path.display(),
                restore_hint(&call.ws, &archived.archive_path)
            ));
            success = success.with_data("trashedTo", archived.archive_path.display().to_string());
            success.sha256_before = Some(archived.metadata.original_sha256.clone());
            success.trashed_to = Some(archived.archive_path);
        }
        success.path = Some(source.path);
        Ok(success)
    })
}
