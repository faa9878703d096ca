use super::*;
use crate::paths::fsops::Snapshot;
use crate::undo::disk::Real;
use std::collections::BTreeMap;

fn real(kind: EntryKind) -> Option<Real> {
    let mode = match kind {
        EntryKind::Directory => 0o040755,
        _ => 0o100644,
    };
    Some(Real {
        stat: Snapshot {
            dev: 1,
            ino: 2,
            mode,
            uid: 0,
            gid: 0,
            size: 0,
            mtime: (0, 0),
            ctime: (0, 0),
        },
        kind,
    })
}

fn plan(slots: &[(&str, Slot)], reals: &[(&str, Option<Real>)]) -> Plan {
    Plan {
        slots: slots
            .iter()
            .map(|(p, s)| (PathBuf::from(p), s.clone()))
            .collect(),
        reals: reals
            .iter()
            .map(|(p, r)| (PathBuf::from(p), r.clone()))
            .collect::<BTreeMap<_, _>>(),
        members: Default::default(),
        tree_digests: Default::default(),
        restored: Default::default(),
    }
}

#[test]
fn a_chain_of_moves_frees_each_name_before_it_is_taken() {
    // c's entry goes back to b, b's to a.
    let p = plan(
        &[
            ("/w/a", Slot::Disk("/w/b".into())),
            ("/w/b", Slot::Disk("/w/c".into())),
            ("/w/c", Slot::Absent),
        ],
        &[
            ("/w/a", None),
            ("/w/b", real(EntryKind::File)),
            ("/w/c", real(EntryKind::File)),
        ],
    );
    let effects = Effects::of(&p).unwrap();
    let order: Vec<_> = effects
        .renames
        .iter()
        .map(|r| (r.from.to_str().unwrap(), r.to.to_str().unwrap()))
        .collect();
    assert_eq!(order, [("/w/b", "/w/a"), ("/w/c", "/w/b")]);
    assert!(effects.removals.is_empty());
}

#[test]
fn entries_that_trade_places_go_round_a_temp_name() {
    // a, b and c trade places: a's entry goes to b, b's to c, c's to a.
    let p = plan(
        &[
            ("/w/a", Slot::Disk("/w/c".into())),
            ("/w/b", Slot::Disk("/w/a".into())),
            ("/w/c", Slot::Disk("/w/b".into())),
        ],
        &[
            ("/w/a", real(EntryKind::File)),
            ("/w/b", real(EntryKind::File)),
            ("/w/c", real(EntryKind::File)),
        ],
    );
    let effects = Effects::of(&p).unwrap();
    assert!(effects.removals.is_empty());
    // Replayed on a map of names: every step finds its source and a free destination.
    let mut names: BTreeMap<PathBuf, &str> = [("/w/a", "A"), ("/w/b", "B"), ("/w/c", "C")]
        .into_iter()
        .map(|(p, e)| (PathBuf::from(p), e))
        .collect();
    for rename in &effects.renames {
        let entry = names.remove(&rename.source()).expect("the source is there");
        let (Location::Real(dir), name) = rename.destination() else {
            panic!("a real directory")
        };
        assert!(names.insert(dir.join(name), entry).is_none(), "{rename:?}");
    }
    let end: Vec<_> = names.iter().map(|(p, e)| (p.as_path(), *e)).collect();
    let expected = [("/w/a", "C"), ("/w/b", "A"), ("/w/c", "B")];
    assert_eq!(end, expected.map(|(p, e)| (Path::new(p), e)));
    assert_eq!(effects.renames.len(), 4);
    assert_eq!(effects.lines().len(), 3, "one line per entry moved back");
}

#[test]
fn what_goes_with_its_directory_is_removed_once_and_what_lands_in_a_new_tree_is_staged_there() {
    let p = plan(
        &[
            ("/w/d", Slot::Absent),
            ("/w/d/x", Slot::Absent),
            ("/w/n", Slot::NewDir { mode: 0o755 }),
            (
                "/w/n/f",
                Slot::Bytes {
                    data: b"f".to_vec(),
                    like: super::super::slot::Like::Mode(0o644),
                },
            ),
        ],
        &[
            ("/w/d", real(EntryKind::Directory)),
            ("/w/d/x", real(EntryKind::File)),
            ("/w/n", None),
            ("/w/n/f", None),
        ],
    );
    let effects = Effects::of(&p).unwrap();
    assert_eq!(effects.removals, [PathBuf::from("/w/d")]);
    let placed: Vec<_> = effects
        .placements
        .iter()
        .map(|p| (p.path.to_str().unwrap(), p.parent.clone()))
        .collect();
    assert_eq!(
        placed,
        [
            ("/w/n", Location::Real("/w".into())),
            (
                "/w/n/f",
                Location::Staged {
                    top: "/w/n".into(),
                    rel: PathBuf::new()
                }
            ),
        ]
    );
}

/// The metadata of a directory archive of `/w/a`.
fn dir_meta() -> crate::trash::Metadata {
    crate::trash::Metadata {
        session_id: "s".into(),
        run_id: "r".into(),
        agent_name: "a".into(),
        trashed_at: "2026-01-01T00:00:00.000Z".into(),
        original_path: "/w/a".into(),
        relative_path: "a".into(),
        kind: EntryKind::Directory,
        original_sha256: "0".repeat(64),
        size: 0,
        mode: 0o755,
        file_count: Some(2),
    }
}

#[test]
fn inside_a_tree_from_the_trash_what_changed_makes_room_and_what_moved_is_refused() {
    use crate::trash::{Member, Members};
    let meta = dir_meta();
    let member = |kind| Member {
        kind,
        mode: 0o644,
        content: [0; 32],
        first: None,
    };
    let members: Members = [
        (b"".to_vec(), member(EntryKind::Directory)),
        (b"x".to_vec(), member(EntryKind::File)),
        (b"d".to_vec(), member(EntryKind::Directory)),
        (b"d/y".to_vec(), member(EntryKind::File)),
        (b"keep".to_vec(), member(EntryKind::File)),
    ]
    .into_iter()
    .collect();
    let archive = PathBuf::from("/trash/a.tar.gz");
    let in_archive = |member: &str| Slot::InArchive {
        archive: archive.clone(),
        member: member.into(),
    };
    let mut p = plan(
        &[
            (
                "/w/a",
                Slot::Archive {
                    archive: archive.clone(),
                    meta,
                },
            ),
            // x gets its older bytes, d goes with what is in it, new never was.
            (
                "/w/a/x",
                Slot::Bytes {
                    data: b"old".to_vec(),
                    like: super::super::slot::Like::Mode(0o644),
                },
            ),
            ("/w/a/d", Slot::Absent),
            ("/w/a/d/y", Slot::Absent),
            ("/w/a/new", Slot::Absent),
            ("/w/a/keep", in_archive("keep")),
        ],
        &[("/w/a", None)],
    );
    p.members
        .insert(archive.clone(), std::sync::Arc::new(members));
    let effects = Effects::of(&p).unwrap();
    assert_eq!(
        effects.drops,
        [
            (PathBuf::from("/w/a"), PathBuf::from("d")),
            (PathBuf::from("/w/a"), PathBuf::from("x")),
        ]
    );
    let placed: Vec<_> = effects
        .placements
        .iter()
        .map(|p| p.path.to_str().unwrap())
        .collect();
    assert_eq!(placed, ["/w/a", "/w/a/x"]);
    // An entry of the archive wanted at another place is not followed.
    p.slots.insert("/w/a/x".into(), in_archive("keep"));
    assert_eq!(Effects::of(&p).unwrap_err().code, ErrorCode::Conflict);
}

/// The plan over `/w` of `slots` where `/w/a` comes back from a directory archive holding
/// `members` (directories end in `/`), nothing on disk at any path. A slot: `-` nothing, `=x`
/// a file of the bytes `x`, else the archive's member of that path.
fn from_the_trash(members: &[&str], slots: &[(&str, &str)]) -> Plan {
    use crate::trash::{Member, Members};
    let archive = PathBuf::from("/trash/a.tar.gz");
    let held: Members = std::iter::once("")
        .chain(members.iter().copied())
        .map(|m| {
            let kind = if m.is_empty() || m.ends_with('/') {
                EntryKind::Directory
            } else {
                EntryKind::File
            };
            let member = Member {
                kind,
                mode: 0o644,
                content: [0; 32],
                first: None,
            };
            (m.trim_end_matches('/').as_bytes().to_vec(), member)
        })
        .collect();
    let slot = |s: &str| match s.strip_prefix('=') {
        _ if s == "-" => Slot::Absent,
        Some(data) => Slot::Bytes {
            data: data.as_bytes().to_vec(),
            like: super::super::slot::Like::Mode(0o644),
        },
        None => Slot::InArchive {
            archive: archive.clone(),
            member: s.into(),
        },
    };
    let top = Slot::Archive {
        archive: archive.clone(),
        meta: dir_meta(),
    };
    let slots: Vec<(&str, Slot)> = std::iter::once(("/w/a", top))
        .chain(slots.iter().map(|(path, s)| (*path, slot(s))))
        .collect();
    let mut p = plan(&slots, &[("/w/a", None)]);
    p.members.insert(archive, std::sync::Arc::new(held));
    p
}

/// Pairs of paths, compared name by name (on Windows a path joined here has `\\` where the
/// expected one has `/`).
fn paths<'a>(pairs: impl IntoIterator<Item = &'a (PathBuf, PathBuf)>) -> Vec<(&'a Path, &'a Path)> {
    pairs
        .into_iter()
        .map(|(a, b)| (a.as_path(), b.as_path()))
        .collect()
}

/// `pairs` as paths, to compare with [`paths`].
fn at<'a>(pairs: &[(&'a str, &'a str)]) -> Vec<(&'a Path, &'a Path)> {
    pairs
        .iter()
        .map(|(a, b)| (Path::new(*a), Path::new(*b)))
        .collect()
}

#[test]
fn a_directory_moved_into_a_tree_from_the_trash_moves_out_once_the_tree_is_placed() {
    // d moved into a as d-in, its file written there, then a removed.
    let p = from_the_trash(
        &["x", "d-in/", "d-in/f"],
        &[("/w/a/d-in", "-"), ("/w/d", "d-in"), ("/w/d/f", "=f one")],
    );
    let effects = Effects::of(&p).unwrap();
    assert_eq!(
        effects.moves_out,
        [MoveOut {
            top: "/w/a".into(),
            member: "d-in".into(),
            aside: None,
            to: "/w/d".into(),
            parent: Location::Real("/w".into()),
        }]
    );
    // The file gets its older bytes inside the tree as it is staged, where the directory is
    // then: the archive's file makes room.
    let placed: Vec<_> = effects
        .placements
        .iter()
        .map(|p| (p.path.to_str().unwrap(), p.parent.clone()))
        .collect();
    assert_eq!(
        placed,
        [
            ("/w/a", Location::Real("/w".into())),
            (
                "/w/d/f",
                Location::Staged {
                    top: "/w/a".into(),
                    rel: "d-in".into()
                }
            ),
        ]
    );
    assert_eq!(paths(&effects.drops), at(&[("/w/a", "d-in/f")]));
    assert!(effects.moves_inside.is_empty() && effects.removals.is_empty());
}

#[test]
fn directories_moved_within_a_tree_from_the_trash_move_back_as_it_is_staged() {
    // sub moved to other/sub (other made for it), its file z moved out to the top, w written
    // in it, then a removed.
    let p = from_the_trash(
        &["x", "z", "other/", "other/sub/", "other/sub/w"],
        &[
            ("/w/a/sub", "other/sub"),
            ("/w/a/sub/z", "z"),
            ("/w/a/sub/w", "-"),
            ("/w/a/z", "-"),
            ("/w/a/other", "-"),
            ("/w/a/other/sub", "-"),
        ],
    );
    let effects = Effects::of(&p).unwrap();
    let moves: Vec<_> = effects
        .moves_inside
        .iter()
        .map(|(top, from, to)| [top, from, to].map(|p| p.as_path()))
        .collect();
    assert_eq!(
        moves,
        [["/w/a", "other/sub", "sub"], ["/w/a", "z", "sub/z"]].map(|names| names.map(Path::new))
    );
    // w is dropped where the archive keeps it, beneath the directory set aside before other
    // is dropped.
    assert_eq!(
        paths(&effects.drops),
        at(&[("/w/a", "other"), ("/w/a", "other/sub/w")])
    );
    assert!(effects.moves_out.is_empty() && effects.removals.is_empty());
}

#[test]
fn an_entry_moves_out_of_a_tree_from_the_trash_into_another_that_comes_back_beside_it() {
    // d/f moved into a, then a and d removed: f moves out of a into d, both placed by then.
    let mut p = from_the_trash(&["x", "f"], &[("/w/a/f", "-")]);
    let archive = PathBuf::from("/trash/d.tar.gz");
    let meta = crate::trash::Metadata {
        original_path: "/w/d".into(),
        relative_path: "d".into(),
        ..dir_meta()
    };
    p.slots.insert(
        "/w/d".into(),
        Slot::Archive {
            archive: archive.clone(),
            meta,
        },
    );
    p.slots.insert(
        "/w/d/f".into(),
        Slot::InArchive {
            archive: "/trash/a.tar.gz".into(),
            member: "f".into(),
        },
    );
    p.reals.insert("/w/d".into(), None);
    let held = p.members[&PathBuf::from("/trash/a.tar.gz")].clone();
    p.members.insert(archive.clone(), held);
    let effects = Effects::of(&p).unwrap();
    assert_eq!(
        effects.moves_out,
        [MoveOut {
            top: "/w/a".into(),
            member: "f".into(),
            aside: None,
            to: "/w/d/f".into(),
            parent: Location::Staged {
                top: "/w/d".into(),
                rel: PathBuf::new()
            },
        }]
    );
    let placed: Vec<_> = effects
        .placements
        .iter()
        .map(|p| p.path.to_str().unwrap())
        .collect();
    assert_eq!(placed, ["/w/a", "/w/d"]);
    // Not into a tree inside the one it comes out of.
    p.slots.remove(&PathBuf::from("/w/d"));
    p.slots.remove(&PathBuf::from("/w/d/f"));
    p.slots.insert(
        "/w/a/n".into(),
        Slot::Archive {
            archive,
            meta: dir_meta(),
        },
    );
    p.slots.insert(
        "/w/a/n/f".into(),
        Slot::InArchive {
            archive: "/trash/a.tar.gz".into(),
            member: "f".into(),
        },
    );
    assert_eq!(Effects::of(&p).unwrap_err().code, ErrorCode::Conflict);
}

#[test]
fn an_entry_whose_place_in_a_tree_from_the_trash_comes_back_is_set_aside_to_move_out() {
    // b moved over a/y (y archived), then a removed (seed 198975): y comes back at its place in
    // the tree, so b is set aside at the tree's top as it is staged, and moves out from there.
    let p = from_the_trash(&["x", "y"], &[("/w/a/y", "=old y"), ("/w/b", "y")]);
    let effects = Effects::of(&p).unwrap();
    let [out] = &effects.moves_out[..] else {
        panic!("one move out: {:?}", effects.moves_out)
    };
    let aside = out.aside.clone().expect("set aside");
    assert_eq!(
        (out.member.to_str(), out.to.to_str()),
        (Some("y"), Some("/w/b"))
    );
    assert_eq!(
        effects.moves_inside,
        [("/w/a".into(), "y".into(), PathBuf::from(&aside))]
    );
    // What the archive keeps at y moves away by itself: nothing is dropped there.
    assert!(effects.drops.is_empty(), "{:?}", effects.drops);
    let placed: Vec<_> = effects
        .placements
        .iter()
        .map(|p| p.path.to_str().unwrap())
        .collect();
    assert_eq!(placed, ["/w/a", "/w/a/y"]);
    // With its place left empty it moves out from there, as before.
    let p = from_the_trash(&["x", "y"], &[("/w/a/y", "-"), ("/w/b", "y")]);
    let effects = Effects::of(&p).unwrap();
    assert_eq!(effects.moves_out[0].aside, None);
    assert!(effects.moves_inside.is_empty());
}

#[test]
fn an_entry_in_a_directory_made_in_a_tree_from_the_trash_is_set_aside_to_move_out() {
    // c made in a, b moved into it as c/n, then a removed (seed 610763): c is dropped, n set
    // aside before.
    let p = from_the_trash(
        &["x", "c/", "c/n"],
        &[("/w/a/c", "-"), ("/w/a/c/n", "-"), ("/w/b", "c/n")],
    );
    let effects = Effects::of(&p).unwrap();
    let aside = effects.moves_out[0].aside.clone().expect("set aside");
    assert_eq!(
        effects.moves_inside,
        [("/w/a".into(), "c/n".into(), PathBuf::from(&aside))]
    );
    assert_eq!(paths(&effects.drops), at(&[("/w/a", "c")]));
}

#[test]
fn what_is_built_in_a_directory_set_aside_to_move_out_is_built_where_it_is_then() {
    // d moved over a/x, its file f written there, then a removed: x comes back at its place,
    // d (set aside) gets f's older bytes beneath its temp name.
    let p = from_the_trash(
        &["x/", "x/f"],
        &[("/w/a/x", "=old x"), ("/w/d", "x"), ("/w/d/f", "=f one")],
    );
    let effects = Effects::of(&p).unwrap();
    let aside = effects.moves_out[0].aside.clone().expect("set aside");
    let placed: Vec<_> = effects
        .placements
        .iter()
        .map(|p| (p.path.to_str().unwrap(), p.parent.clone()))
        .collect();
    let staged = |rel: PathBuf| Location::Staged {
        top: "/w/a".into(),
        rel,
    };
    assert_eq!(
        placed,
        [
            ("/w/a", Location::Real("/w".into())),
            ("/w/a/x", staged(PathBuf::new())),
            ("/w/d/f", staged(PathBuf::from(&aside))),
        ]
    );
    // The archive's f is dropped where the directory is once set aside.
    assert_eq!(paths(&effects.drops), at(&[("/w/a", "x/f")]));
}
