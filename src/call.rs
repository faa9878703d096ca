//! The one flow every tool call goes through, and the primitives a tool composes:
//! resolve → lock → plan (off the JS thread) → authorize (permissions, confirm, timeout, abort)
//! → commit. Each tool file reads top to bottom as that story; this file holds [`Call`], which
//! drives it, and its submodules the shared parts (what the host passes, what a call ends with,
//! the permission question, the abort gate, the recorded commit, the executor of a plan).

mod abort;
mod authorization;
mod context;
pub mod execute;
mod outcome;
pub mod plan;
mod recorded_commit;
mod stage;
mod tool_names;
pub mod trashing;

pub use abort::AbortGate;
pub use authorization::Authorization;
pub use context::{CallContext, CheckSlot, Decision};
pub use outcome::{
    BoxFuture, Denial, DenialCode, Failure, Outcome, Recorded, Success, ToolResult, DENIED_NEXT,
};
pub use recorded_commit::{commit_consuming, commit_recorded};
pub use tool_names::ToolNames;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::cancel::CancelToken;
use crate::confirm::{ConfirmRequest, Confirmer};
use crate::error::{ErrorCode, ToolError};
use crate::history::{Author, Heading, History};
use crate::locks::{Asker, ChangeGuard, ReadGuard};
use crate::options::{Limits, StaleWrites};
use crate::paths::canonical::Canonical;
use crate::paths::sandbox::FinalLink;
use crate::paths::shown::Shown;
use crate::paths::Target;
use crate::permissions::Permissions;
use crate::progress::Progress;
use crate::views::{Seen, View};
use crate::workspace::Workspace;

fn owned(paths: &[&Path]) -> Vec<PathBuf> {
    paths.iter().map(|p| p.to_path_buf()).collect()
}

/// One running call: the workspace, the exposed tool name, this call's permissions, its
/// confirmer and its abort token.
pub struct Call {
    pub ws: Arc<Workspace>,
    pub tool_name: String,
    /// What the history will say of this call's change (its id is decided when the call starts).
    pub heading: Heading,
    /// The names of the tools this workspace offers.
    pub names: Arc<ToolNames>,
    pub permissions: Permissions,
    pub confirmer: Option<Arc<dyn Confirmer>>,
    pub cancel: CancelToken,
    /// Where this call's long operations report progress ([`Progress::meter`]).
    pub progress: Progress,
    /// Whether the result goes to the model (a tool call), not to the host alone (an undo):
    /// a denial then says what the model should do next.
    pub for_model: bool,
    cwd: PathBuf,
    id: Option<u32>,
    answering: Vec<u32>,
    gate: Arc<AbortGate>,
    check: Option<Arc<CheckSlot>>,
}

impl Call {
    pub fn new(
        ws: Arc<Workspace>,
        tool_name: String,
        names: Arc<ToolNames>,
        permissions: Permissions,
        ctx: CallContext,
    ) -> Self {
        let cwd = ws.cwd_snapshot().cwd;
        let trash = &ws.options().trash;
        let heading = Heading {
            id: History::new_id(),
            tool: tool_name.clone(),
            summary: String::new(),
            author: Author {
                session_id: trash.session_id.clone(),
                run_id: trash.run_id.clone(),
                agent_name: trash.agent_name.clone(),
            },
            undoes: Vec::new(),
        };
        Self {
            ws,
            heading,
            tool_name,
            names,
            permissions,
            confirmer: ctx.confirmer,
            cancel: ctx.cancel,
            progress: ctx.progress,
            for_model: true,
            cwd,
            id: ctx.id,
            answering: ctx.answering,
            gate: Arc::default(),
            check: ctx.check,
        }
    }

    /// Whether this call may be given up on when aborted (see [`AbortGate`]).
    pub fn abort_gate(&self) -> Arc<AbortGate> {
        self.gate.clone()
    }

    pub fn limits(&self) -> &Limits {
        &self.ws.options().limits
    }

    /// The workspace cwd at the start of this call.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Resolves and sandbox-checks the model's path argument `field`.
    pub fn resolve(
        &self,
        raw: &str,
        field: &str,
        final_link: FinalLink,
    ) -> Result<Target, ToolError> {
        self.ws
            .sandbox()
            .resolve(raw, field, &self.cwd, self.ws.home(), final_link)
    }

    /// The canonical form of the model's path argument `field`, before the sandbox check (for
    /// tools that must refuse some paths with their own code first).
    pub fn canonical(
        &self,
        raw: &str,
        field: &str,
        final_link: FinalLink,
    ) -> Result<Canonical, ToolError> {
        self.ws
            .sandbox()
            .canonicalize(raw, field, &self.cwd, self.ws.home(), final_link)
    }

    /// Locks `paths` for a change, from its plan through its prompt: other changes of these
    /// paths wait, reads go on. Upgrade it with `exclusive()` after `authorize`, before the
    /// commit (see `locks`). `CONFLICT` at once for a change made from the confirm handler of a
    /// change of the same paths, which would wait for its own answer, and for a change of a path
    /// that a change a crash cut short covers, which this workspace could not finish
    /// ([`Workspace::unfinished_change_of`]).
    pub async fn lock_for_change(&self, paths: &[&Path]) -> Result<ChangeGuard<'_>, ToolError> {
        if let Some((path, pending)) = self.ws.unfinished_change_of(paths) {
            return Err(ToolError::new(
                ErrorCode::Conflict,
                format!(
                    "{} is part of a change that a crash cut short and that this workspace cannot finish: the change also covers {}, outside its allowed paths. Nothing was changed. Open the workspace with allowed paths that include {} (it finishes that change), then retry.",
                    path.shown(),
                    pending.out_of_reach.shown(),
                    pending.out_of_reach.shown(),
                ),
            ));
        }
        let asker = Asker {
            call: self.id,
            answering: &self.answering,
        };
        self.ws
            .locks()
            .change(owned(paths), asker)
            .await
            .map_err(|_| {
                let path = paths.first().map(|p| p.shown().into_owned());
                ToolError::new(
                    ErrorCode::Conflict,
                    format!(
                        "{} is being changed by the call whose confirmation this call was made from, so this change would wait for that answer forever. Make it after answering.",
                        path.unwrap_or_default()
                    ),
                )
            })
    }

    /// Locks `paths` for reading: waits only for commits. Take it after `authorize`, never
    /// across a prompt (see `locks`).
    pub async fn lock_for_read(&self, paths: &[&Path]) -> ReadGuard<'_> {
        self.ws.locks().read(owned(paths)).await
    }

    /// Runs blocking filesystem work that may change files on tokio's blocking pool, never on
    /// the JS thread, and waits for it whatever happens: an abort is for the work itself to
    /// check at its safe points. From here on the call is not given up on ([`AbortGate`]).
    pub async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        self.begin_change()?;
        tokio::task::spawn_blocking(work)
            .await
            .unwrap_or_else(internal_error)
    }

    /// The call is about to change something (files, the workspace's cwd stack): from here on
    /// it is not given up on when aborted ([`AbortGate`]); `ABORTED` if it already was.
    /// [`Call::blocking`] does this itself.
    pub fn begin_change(&self) -> Result<(), ToolError> {
        if self.gate.may_change() {
            Ok(())
        } else {
            Err(ToolError::aborted())
        }
    }

    /// Runs blocking filesystem work that changes nothing (a read, a listing, a plan) on
    /// tokio's blocking pool. An abort ends the wait at once with `ABORTED`: a read stuck in
    /// the kernel (a hung NFS or FUSE file system) cannot be interrupted, so its thread is left
    /// to finish on its own, holding no lock, and its result is dropped.
    pub async fn reading<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
    ) -> Result<T, ToolError> {
        let task = tokio::task::spawn_blocking(work);
        tokio::select! {
            joined = task => joined.unwrap_or_else(internal_error),
            () = self.cancel.aborted() => Err(ToolError::aborted()),
        }
    }

    pub fn check_abort(&self) -> Result<(), ToolError> {
        if self.cancel.is_aborted() {
            Err(ToolError::aborted())
        } else {
            Ok(())
        }
    }

    /// Whether the permissions grant `auth` without asking.
    pub fn is_granted(&self, auth: &Authorization<'_>) -> bool {
        !auth.always_ask
            && auth
                .needs
                .iter()
                .all(|(op, inside)| self.permissions.grants(*op, *inside))
    }

    /// Grants or asks. Granted permissions skip the prompt unless `always_ask`; otherwise the
    /// confirmer is asked once; no confirmer, a "no", or a timeout deny; an abort while waiting
    /// is `ABORTED`.
    pub async fn authorize(&self, auth: Authorization<'_>) -> Result<(), Failure> {
        self.check_abort()?;
        if let Some(slot) = &self.check {
            slot.record(if self.is_granted(&auth) {
                Decision::Allow
            } else {
                Decision::Ask(Box::new(self.request(auth)))
            });
            return Err(ToolError::aborted().into());
        }
        if self.is_granted(&auth) {
            return Ok(());
        }
        let Some(confirmer) = self.confirmer.clone() else {
            return Err(Failure::Denied(self.nobody_to_ask(&auth)));
        };
        let denial = auth.denial;
        let request = self.request(auth);
        let timeout_ms = self.ws.options().confirm_timeout_ms;
        let timeout = async {
            if timeout_ms == 0 {
                std::future::pending::<()>().await
            } else {
                tokio::time::sleep(Duration::from_millis(timeout_ms)).await
            }
        };
        let answer = tokio::select! {
            yes = confirmer.ask(request) => yes,
            _ = self.cancel.aborted() => return Err(ToolError::aborted().into()),
            _ = timeout => {
                return Err(Failure::Denied(Denial::new(
                    DenialCode::ConfirmTimeout,
                    format!("{denial} (No answer within {timeout_ms} ms; nothing was changed.){}", self.denied_next()),
                )))
            }
        };
        self.check_abort()?;
        if answer {
            Ok(())
        } else {
            Err(Failure::Denied(Denial::new(
                DenialCode::UserDenied,
                format!("{denial}{}", self.denied_next()),
            )))
        }
    }

    /// What a denial adds for the model ([`DENIED_NEXT`], after a space), or nothing for the host.
    fn denied_next(&self) -> String {
        if self.for_model {
            format!(" {DENIED_NEXT}")
        } else {
            String::new()
        }
    }

    /// What the user is asked for `auth`. A path outside the root is named on a last line of
    /// the detail, so a prompt never looks the same for `/etc/hosts` as for a project file.
    fn request(&self, auth: Authorization<'_>) -> ConfirmRequest {
        let mut paths: Vec<String> = Vec::new();
        let mut outside: Vec<String> = Vec::new();
        for (path, inside_root) in &auth.paths {
            let shown = path.shown().into_owned();
            if !inside_root && !outside.contains(&shown) {
                outside.push(shown.clone());
            }
            if !paths.contains(&shown) {
                paths.push(shown);
            }
        }
        let mut detail = auth.detail;
        if !outside.is_empty() {
            detail.push_str(&outside_the_project(self.ws.sandbox().root(), &outside));
        }
        ConfirmRequest {
            tool: self.tool_name.clone(),
            label: auth.label.to_owned(),
            path: auth.path.shown().into_owned(),
            paths,
            detail,
            diff: auth.diff,
            recursive: auth.recursive,
            permanent: auth.permanent,
            summary: auth.summary,
        }
    }

    /// The denial of a call that needs the user's approval when no one can be asked: says so
    /// (it is not the user's "no"), and what the host must configure for it to run.
    fn nobody_to_ask(&self, auth: &Authorization<'_>) -> Denial {
        let action = auth
            .denial
            .strip_prefix("The user denied this ")
            .and_then(|rest| rest.strip_suffix('.'))
            .unwrap_or("action");
        let mut grant: Vec<&'static str> = if auth.always_ask {
            Vec::new()
        } else {
            auth.needs
                .iter()
                .filter(|(op, inside)| !self.permissions.grants(*op, *inside))
                .map(|(op, inside)| Permissions::key_of(*op, *inside))
                .collect()
        };
        grant.sort_unstable();
        grant.dedup();
        let next = if grant.is_empty() {
            "it always needs a confirmation, whatever the permissions".to_owned()
        } else {
            format!(
                "grant {} in its permissions to allow it without asking",
                grant.join(" and ")
            )
        };
        Denial {
            code: DenialCode::NoConfirmHandler,
            message: format!(
                "Nobody was asked to approve this {action}: the host has no way to ask the user (no confirmation handler), so nothing was changed. For the host: give the workspace or the call a confirm handler, or {next}.{}", self.denied_next()
            ),
            grant,
        }
    }
}

/// How a change uses a file's current content, for the check against the model's view of it
/// ([`Call::check_view`], ../docs/tools.md#stale-views).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewrite {
    /// It replaces the whole content (`write_file`): what the model has not seen would be lost.
    Whole,
    /// It changes or adds to the text it finds there (edit, append, patch), so it cannot
    /// silently undo a change it does not name.
    Part,
}

impl Call {
    /// How the existing file at `path`, now as `stat` describes it, compares with the version
    /// the model last saw.
    pub fn view(&self, path: &Path, stat: &crate::paths::Stat) -> View {
        self.ws.seen().view(path, stat)
    }

    /// The one check of ../docs/tools.md#stale-views, for a change of the existing file at `path` (now as `stat`
    /// describes it): a [`Rewrite::Whole`] of a file the model has not seen, or that changed
    /// since it last saw it, is `STALE` unless the workspace allows stale writes; otherwise the
    /// line the output adds when the file had changed since the model saw it.
    pub fn check_view(
        &self,
        path: &Path,
        stat: &crate::paths::Stat,
        rewrite: Rewrite,
    ) -> Result<Option<String>, ToolError> {
        let view = self.view(path, stat);
        let refuse = rewrite == Rewrite::Whole
            && self.ws.options().stale_writes == StaleWrites::Refuse
            && view != View::Current;
        if refuse {
            let p = path.shown();
            let read = self.names.exposed("read_file");
            let message = match view {
                View::Unseen => {
                    let edit = self.names.hint("edit_file", |edit| {
                        format!("; to change a part of it, use {edit}")
                    });
                    format!("{p} exists and you have not read it. Read it first ({read}), then write it{edit}.")
                }
                _ => {
                    let edit = self.names.hint("edit_file", |edit| {
                        format!("; {edit} changes only the text you name")
                    });
                    format!("{p} has changed since you last read it (by the user or another program). Read it again before you overwrite it{edit}.")
                }
            };
            return Err(ToolError::new(ErrorCode::Stale, message));
        }
        Ok((view == View::Changed).then(|| changed_note(&[path])))
    }

    /// Records that the model has seen `path` as `seen` describes it: what `read_file` returned,
    /// or what one of the model's own successful changes left there (write, edit, append,
    /// patch, move, restore — and copy_file's destination, once that tool exists).
    pub fn saw(&self, path: &Path, seen: &Seen) {
        self.ws.seen().saw(path, seen);
    }
}

/// The one line an output adds for files that had changed since the model last saw them
/// (../docs/tools.md#stale-views): the change went to what they hold now, which the model has not seen.
pub fn changed_note(paths: &[&Path]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.shown().into_owned()).collect();
    let (them, hold) = if paths.len() == 1 {
        ("it", "it holds")
    } else {
        ("them", "they hold")
    };
    format!(
        "Note: {} had changed since you last read {them} (by the user or another program); this change was made to what {hold} now. Read {them} again before relying on what you saw.",
        shown.join(", ")
    )
}

/// The last line of a prompt's detail naming the paths outside the root (the project):
/// `\nOutside the project (<root>): <abs>[, <abs>…]`.
fn outside_the_project(root: &Path, outside: &[String]) -> String {
    format!(
        "\nOutside the project ({}): {}",
        root.shown(),
        outside.join(", ")
    )
}

/// A blocking task that panicked or was cancelled, as a tool error.
fn internal_error<T>(e: tokio::task::JoinError) -> Result<T, ToolError> {
    Err(ToolError::new(
        ErrorCode::IoError,
        format!("internal error while working on the file system: {e}"),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::AbortGate;
    use crate::tools::testing::TestWorkspace;

    /// A workspace that asks before every change, and a directory beside its root.
    fn asking() -> (TestWorkspace, std::path::PathBuf) {
        let ws = TestWorkspace::with(json!({ "permissions": {} }));
        let outside = ws.root.parent().unwrap().join("outside");
        std::fs::create_dir(&outside).unwrap();
        (ws, outside)
    }

    /// A patch over several files asks once, with every file it touches in `paths` (a move's
    /// source and destination both), and a detail that stays as documented for files in the project.
    #[tokio::test]
    async fn a_patch_asks_with_every_path_it_touches() {
        let (ws, _) = asking();
        std::fs::write(ws.root.join("a.txt"), "one\n").unwrap();
        std::fs::write(ws.root.join("gone.txt"), "bye\n").unwrap();
        std::fs::write(ws.root.join("old.txt"), "moved\n").unwrap();
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: new.txt\n+new\n*** Delete File: gone.txt\n*** Update File: old.txt\n*** Move to: sub/renamed.txt\n@@\n-moved\n+MOVED\n*** End Patch";
        let asked = ws.asked("apply_patch", json!({ "input": patch })).await;
        assert_eq!(asked.len(), 1);
        let at = |name: &str| ws.at(name).to_string_lossy().into_owned();
        assert_eq!(
            asked[0].paths,
            [
                at("a.txt"),
                at("new.txt"),
                at("gone.txt"),
                at("old.txt"),
                at("sub/renamed.txt")
            ]
        );
        assert_eq!(asked[0].path, at("a.txt"));
        assert!(
            !asked[0].detail.contains("Outside the project"),
            "{}",
            asked[0].detail
        );
    }

    /// A move asks with its source and its destination.
    #[tokio::test]
    async fn a_move_asks_with_its_source_and_destination() {
        let (ws, _) = asking();
        std::fs::write(ws.root.join("a.txt"), "a").unwrap();
        let asked = ws
            .asked(
                "move_file",
                json!({ "source": "a.txt", "destination": "b.txt" }),
            )
            .await;
        let at = |name: &str| ws.at(name).to_string_lossy().into_owned();
        assert_eq!(asked[0].paths, [at("a.txt"), at("b.txt")]);
        assert_eq!(
            asked[0].detail,
            format!("{} → {}", at("a.txt"), at("b.txt"))
        );
    }

    /// Without `allowedPaths`, a path outside the root is reachable and asks like one inside:
    /// the detail says which paths are outside the project, on a last line of its own.
    #[tokio::test]
    async fn a_prompt_names_the_paths_outside_the_project() {
        let (ws, outside) = asking();
        let root = ws.root.to_string_lossy().into_owned();
        let inside = ws.root.join("in.txt").to_string_lossy().into_owned();
        let file = outside.join("out.txt").to_string_lossy().into_owned();

        let asked = ws
            .asked("write_file", json!({ "path": "in.txt", "content": "x" }))
            .await;
        assert_eq!(asked[0].detail, inside);
        assert_eq!(asked[0].paths, std::slice::from_ref(&inside));

        let asked = ws
            .asked("write_file", json!({ "path": &file, "content": "x" }))
            .await;
        assert_eq!(asked[0].paths, std::slice::from_ref(&file));
        assert_eq!(
            asked[0].detail,
            format!("{file}\nOutside the project ({root}): {file}")
        );

        std::fs::write(ws.root.join("in.txt"), "x").unwrap();
        let asked = ws
            .asked(
                "move_file",
                json!({ "source": "in.txt", "destination": &file }),
            )
            .await;
        assert_eq!(
            asked[0].detail,
            format!("{inside} → {file}\nOutside the project ({root}): {file}")
        );
    }

    /// A call is given up on only before it starts to change something, and once given up on
    /// it starts nothing that changes files.
    #[test]
    fn a_call_is_given_up_on_only_before_it_changes_anything() {
        let gate = AbortGate::default();
        assert!(gate.give_up() && gate.give_up());
        assert!(!gate.may_change());
        let gate = AbortGate::default();
        assert!(gate.may_change() && gate.may_change());
        assert!(!gate.give_up());
    }
}
