//! Path resolution (`paths::Sandbox::resolve`, ../../docs/paths-and-sandbox.md) never yields a path outside the allowed
//! root, whatever the string: for every `Ok` target, the path is absolute and normal, lies
//! inside the allowed tree, names no hidden (trash) directory, and its existing part has no
//! symlink in it (the kernel's realpath of it is itself). Where the kernel's `realpath` of the
//! same input exists, is inside the tree and the final link is followed, resolution agrees
//! with it.
//!
//! The fixture (built once in a temp dir, on tmpfs when there is one) holds the traps: links to
//! the outside (absolute, relative, chained, dangling), links inside, a loop, a file in the
//! middle, a sibling whose name extends the root's (`R_evil`), and a hidden trash directory.
#![no_main]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use agent_fs_tools::paths::sandbox::FinalLink;
use agent_fs_tools::paths::Sandbox;
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

struct Fixture {
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
    hidden: PathBuf,
    sandbox: Sandbox,
    cwds: Vec<PathBuf>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let parent = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let base = parent.join(format!("afs-fuzz-paths-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(&base).unwrap();
        let base = fs::canonicalize(&base).unwrap();
        let root = base.join("R");
        let outside = base.join("outside");
        for d in [
            root.join("sub/deep"),
            root.join("home"),
            root.join(".data/trash"),
            outside.join("o"),
            base.join("R_evil"),
        ] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(root.join("file"), "f").unwrap();
        fs::write(outside.join("secret"), "s").unwrap();
        let links: &[(&str, PathBuf)] = &[
            ("in_abs", root.join("sub")),
            ("in_rel", PathBuf::from("sub/deep")),
            ("out_abs", outside.clone()),
            ("out_rel", PathBuf::from("../outside")),
            ("out_file", outside.join("secret")),
            ("evil", PathBuf::from("../R_evil")),
            ("dangling_in", root.join("sub/missing")),
            ("dangling_out", outside.join("missing")),
            ("chain", PathBuf::from("in_abs/../out_rel")),
            ("loop_a", PathBuf::from("loop_b")),
            ("loop_b", PathBuf::from("loop_a")),
            ("up", PathBuf::from("..")),
            ("self", PathBuf::from(".")),
            ("to_trash", root.join(".data/trash")),
            ("sub/deep/back", PathBuf::from("../../..")),
            ("sub/deep/to_root", root.clone()),
        ];
        for (name, target) in links {
            symlink(target, root.join(name)).unwrap();
        }
        let hidden = root.join(".data/trash");
        let sandbox = Sandbox::new(root.clone(), Some(vec![root.clone()]), vec![hidden.clone()]);
        let cwds = vec![
            root.clone(),
            root.join("sub"),
            root.join("sub/deep"),
            root.join("home"),
        ];
        Fixture {
            home: root.join("home"),
            base,
            root,
            hidden,
            sandbox,
            cwds,
        }
    })
}

#[derive(Arbitrary, Debug)]
struct Input {
    path: PathInput,
    cwd: u8,
    keep_final_link: bool,
}

#[derive(Arbitrary, Debug)]
enum PathInput {
    /// Components from a list of the fixture's names and tricky spellings, joined with `/`.
    Tokens {
        absolute: bool,
        parts: Vec<u8>,
        trailing_slash: bool,
    },
    Raw(String),
}

const TOKENS: &[&str] = &[
    "..",
    ".",
    "",
    "sub",
    "deep",
    "file",
    "in_abs",
    "in_rel",
    "out_abs",
    "out_rel",
    "out_file",
    "evil",
    "dangling_in",
    "dangling_out",
    "chain",
    "loop_a",
    "up",
    "self",
    "to_trash",
    ".data",
    "trash",
    "back",
    "to_root",
    "missing",
    "R",
    "R_evil",
    "outside",
    "secret",
    "~",
    "home",
    "o",
    "x\u{301}",
    "\u{202e}",
    "..\u{2215}..",
];

impl PathInput {
    fn render(&self, root: &Path) -> String {
        match self {
            PathInput::Raw(s) => s.clone(),
            PathInput::Tokens {
                absolute,
                parts,
                trailing_slash,
            } => {
                let joined: Vec<&str> = parts
                    .iter()
                    .take(24)
                    .map(|i| TOKENS[*i as usize % TOKENS.len()])
                    .collect();
                let mut s = joined.join("/");
                if *absolute {
                    // Absolute paths through the base, so `..` games can climb out.
                    s = format!("{}/{s}", root.display());
                }
                if *trailing_slash {
                    s.push('/');
                }
                s
            }
        }
    }
}

/// The input as the tools see it before canonicalisation (same `~` and cwd rules).
fn absolute(raw: &str, cwd: &Path, home: &Path) -> PathBuf {
    if raw == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = raw.strip_prefix("~/") {
        return home.join(rest);
    }
    let p = Path::new(raw);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The deepest ancestor of `path` (itself included) that exists, as `lstat` sees it.
fn deepest_existing(path: &Path) -> PathBuf {
    path.ancestors()
        .find(|a| fs::symlink_metadata(a).is_ok())
        .unwrap_or(Path::new("/"))
        .to_path_buf()
}

fuzz_target!(|input: Input| {
    let f = fixture();
    let raw = input.path.render(&f.root);
    let cwd = &f.cwds[input.cwd as usize % f.cwds.len()];
    let mode = if input.keep_final_link {
        FinalLink::Keep
    } else {
        FinalLink::Follow
    };
    let result = f.sandbox.resolve(&raw, "path", cwd, Some(&f.home), mode);
    if let Ok(target) = &result {
        let p = &target.path;
        assert!(p.is_absolute(), "{raw:?} → {p:?}: not absolute");
        assert!(
            p.components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
            "{raw:?} → {p:?}: not normal"
        );
        assert!(
            p.starts_with(&f.root),
            "{raw:?} → {p:?}: outside the allowed root"
        );
        assert_eq!(target.anchor, f.root, "{raw:?}: wrong anchor");
        assert!(
            !p.starts_with(&f.hidden),
            "{raw:?} → {p:?}: inside the hidden trash"
        );
        // The existing part has no symlink in it: what the kernel resolves it to is itself
        // (for `Keep`, the final entry may be a link: its parent is checked).
        let checked = match mode {
            FinalLink::Keep if p != &f.root => p.parent().unwrap_or(p),
            _ => p.as_path(),
        };
        let existing = deepest_existing(checked);
        if let Ok(real) = fs::canonicalize(&existing) {
            assert_eq!(
                real, existing,
                "{raw:?} → {p:?}: the existing part passes through a link"
            );
            assert!(
                real.starts_with(&f.root),
                "{raw:?} → {p:?}: escapes through {real:?}"
            );
        }
        if mode == FinalLink::Follow && target.exists {
            let meta = fs::symlink_metadata(p).expect("exists");
            assert!(
                !meta.file_type().is_symlink(),
                "{raw:?} → {p:?}: final link not followed"
            );
        }
    }
    // Agreement with the kernel where it has an answer inside the tree.
    if mode == FinalLink::Follow && !raw.is_empty() && !raw.contains('\0') {
        let abs = absolute(&raw, cwd, &f.home);
        if let Ok(real) = fs::canonicalize(&abs) {
            if real.starts_with(&f.root) && !real.starts_with(&f.hidden) {
                let target = result.as_ref().unwrap_or_else(|e| {
                    panic!("{raw:?}: the kernel resolves it to {real:?} inside the root, resolve says {e:?}")
                });
                assert_eq!(target.path, real, "{raw:?}: disagrees with the kernel");
            }
        }
    }
    let _ = &f.base;
});
