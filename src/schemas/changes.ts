/**
 * What the agent changed in a thread's workspace: per run (between the checkpoint taken before the
 * run's first file change and the state it settled in) and for the whole thread; and the bodies and
 * receipts of reverting and redoing them. The host's checkpoints (src/host/checkpoints/) are the one
 * owner of these facts; followers learn them from `run-changes` and `workspace-restored` observations.
 */
import { Type, type Static } from 'typebox'

export const FileStatus = Type.Union([Type.Literal('added'), Type.Literal('modified'), Type.Literal('deleted')])
export type FileStatus = Static<typeof FileStatus>

/** One changed file: its line counts (none for a binary file, which is named, never dumped). */
export const FileChange = Type.Object({
  path: Type.String(),
  status: FileStatus,
  added: Type.Integer({ minimum: 0 }),
  removed: Type.Integer({ minimum: 0 }),
  binary: Type.Optional(Type.Literal(true)),
})
export type FileChange = Static<typeof FileChange>

/** A run's change as every follower's view holds it: the files, and whether it is reverted. */
export const RunChangeSummary = Type.Object({
  files: Type.Array(FileChange),
  /** Why some of the run's changes are not in the files (bash outside a git repository, a checkpoint over its bound). */
  untracked: Type.Optional(Type.String()),
  /** A revert took the workspace back to before this run (a redo brings it back). */
  reverted: Type.Optional(Type.Literal(true)),
})
export type RunChangeSummary = Static<typeof RunChangeSummary>

/** The thread's changes in its view: one summary per run that took a checkpoint, and whether a redo is possible. */
export const ThreadChanges = Type.Object({
  runs: Type.Record(Type.String(), RunChangeSummary),
  canRedo: Type.Boolean(),
})
export type ThreadChanges = Static<typeof ThreadChanges>

/** A changed file with its unified diff (`patch`; absent for a binary file, cut short past the bound). */
export const FileDiff = Type.Object({
  ...FileChange.properties,
  patch: Type.Optional(Type.String()),
  /** The diff was longer than the bound and is cut. */
  truncated: Type.Optional(Type.Literal(true)),
})
export type FileDiff = Static<typeof FileDiff>

/** `GET …/runs/:run/changes` and `GET …/changes` (the thread's cumulative change, `run` absent). */
export const ChangesReport = Type.Object({
  threadId: Type.String(),
  run: Type.Optional(Type.Integer({ minimum: 1 })),
  files: Type.Array(FileDiff),
  untracked: Type.Optional(Type.String()),
  reverted: Type.Optional(Type.Literal(true)),
})
export type ChangesReport = Static<typeof ChangesReport>

export const RunParams = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$' }),
  /** A run number (path parameters arrive as text). */
  run: Type.String({ pattern: '^[1-9][0-9]{0,8}$' }),
})

export const RevertBody = Type.Object({ toRun: Type.Integer({ minimum: 1 }) }, { additionalProperties: false })
export type RevertBody = Static<typeof RevertBody>

/** What a revert or a redo did: the files it restored and the runs it reverted (or brought back). */
export const RestoreReceipt = Type.Object({
  threadId: Type.String(),
  action: Type.Union([Type.Literal('revert'), Type.Literal('redo')]),
  files: Type.Array(Type.String()),
  runs: Type.Array(Type.Integer()),
})
export type RestoreReceipt = Static<typeof RestoreReceipt>
