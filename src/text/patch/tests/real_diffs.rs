//! Real patches over real-looking code (`testdata/`): one change to four files (a Python
//! module with four hunks, a TypeScript file renamed and changed, a CRLF README, a file
//! without a final newline), printed by `git diff -M`, `git diff -M -U0` and `diff -ru`, and
//! written in Codex's format the way a model writes it (with `@@` anchors and bare empty
//! context lines). Each must turn the `before` tree into the `after` tree, byte for byte.

use std::collections::BTreeMap;

use super::super::*;
use crate::cancel::CancelToken;

type Tree = BTreeMap<String, String>;

macro_rules! tree {
    ($dir:literal: $($path:literal),*) => {{
        let mut tree = Tree::new();
        $(tree.insert($path.to_owned(), include_str!(concat!("../testdata/", $dir, "/", $path)).to_owned());)*
        tree
    }};
}

fn before() -> Tree {
    tree!("before": "src/inventory.py", "web/api.ts", "README.md", "settings.env")
}

fn after() -> Tree {
    tree!("after": "src/inventory.py", "web/routes.ts", "README.md", "settings.env")
}

/// Applies every file of `patch` to `tree` as the tool will: add, delete, update, move.
fn apply_to_tree(patch: &str, mut tree: Tree) -> Result<Tree, PatchError> {
    let patch = parse(patch)?;
    for file in &patch.files {
        match &file.change {
            PatchChange::Add { path, text } => {
                tree.insert(path.clone(), text.clone());
            }
            PatchChange::Delete { path } => {
                tree.remove(path).expect("deleted file exists");
            }
            PatchChange::Update {
                path,
                move_to,
                chunks,
            } => {
                let text = tree.remove(path).expect("updated file exists");
                let applied = apply(path, &text, chunks, &CancelToken::new())?;
                assert!(applied.fuzzy.is_empty(), "{path}: {:?}", applied.fuzzy);
                tree.insert(
                    move_to.clone().unwrap_or_else(|| path.clone()),
                    applied.text,
                );
            }
        }
    }
    Ok(tree)
}

fn assert_same(actual: &Tree, expected: &Tree) {
    assert_eq!(
        actual.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (path, text) in expected {
        assert_eq!(&actual[path], text, "{path}");
    }
}

/// Every update of `patch` is seen as applied on `tree`, none on `before`.
fn assert_applied_only_after(patch: &str, before: &Tree, after: &Tree) {
    let patch = parse(patch).unwrap();
    for file in &patch.files {
        if let PatchChange::Update {
            path,
            move_to,
            chunks,
        } = &file.change
        {
            let target = move_to.as_ref().unwrap_or(path);
            assert!(
                !is_applied(&before[path], chunks, &CancelToken::new()),
                "{path} before"
            );
            assert!(
                is_applied(&after[target], chunks, &CancelToken::new()),
                "{target} after"
            );
        }
    }
}

#[test]
fn git_diff_with_rename_crlf_and_missing_newline() {
    let patch = include_str!("../testdata/git_diff_m.patch");
    assert!(patch.contains("\r\n"), "the README's lines carry their CR");
    assert_same(&apply_to_tree(patch, before()).unwrap(), &after());
    assert_applied_only_after(patch, &before(), &after());
}

#[test]
fn git_diff_without_context() {
    let patch = include_str!("../testdata/git_diff_u0.patch");
    assert_same(&apply_to_tree(patch, before()).unwrap(), &after());
}

#[test]
fn diff_ru_with_timestamps() {
    let patch = include_str!("../testdata/diff_ru.patch");
    let mut expected = after();
    let routes = expected.remove("web/routes.ts").unwrap();
    expected.insert("web/api.ts".into(), routes);
    assert_same(&apply_to_tree(patch, before()).unwrap(), &expected);
}

#[test]
fn codex_patch_written_as_a_model_writes_it() {
    let patch = include_str!("../testdata/codex.patch");
    let mut expected = after();
    // Codex's format cannot add the final newline the unified diff adds: the file keeps its state.
    expected.insert(
        "settings.env".into(),
        "NEW_SETTING=1\nKEEP=2\nLAST=4".into(),
    );
    assert_same(&apply_to_tree(patch, before()).unwrap(), &expected);
    assert_applied_only_after(patch, &before(), &expected);
}

#[test]
fn unified_diffs_still_apply_after_the_files_gained_lines_at_the_top() {
    let py_prefix = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# Copyright the authors\n\n";
    let md_prefix = "<!-- generated -->\r\n\r\n";
    let shift = |mut tree: Tree| {
        for (path, prefix) in [("src/inventory.py", py_prefix), ("README.md", md_prefix)] {
            let text = tree.get_mut(path).unwrap();
            text.insert_str(0, prefix);
        }
        tree
    };
    for patch in [
        include_str!("../testdata/git_diff_m.patch"),
        include_str!("../testdata/git_diff_u0.patch"),
    ] {
        assert_same(
            &apply_to_tree(patch, shift(before())).unwrap(),
            &shift(after()),
        );
    }
}
