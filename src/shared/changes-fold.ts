/**
 * The projection's part for what the agent changed (`run-changes`, `workspace-restored`): a new
 * `ThreadChanges` per observation, never one written in place (the projection's rule).
 */
import type { ObservationOf, RunChangeSummary, ThreadChanges } from '../schemas/index.js'

export function foldChanges(changes: ThreadChanges | undefined, o: ObservationOf<'run-changes'> | ObservationOf<'workspace-restored'>): ThreadChanges {
  const runs: Record<string, RunChangeSummary> = { ...(changes?.runs ?? {}) }
  if (o.type === 'run-changes') {
    runs[o.run] = { files: o.files, ...(o.untracked !== undefined ? { untracked: o.untracked } : {}) }
    // A run that changed the workspace after a revert: what was reverted can no longer be redone.
    return { runs, canRedo: false }
  }
  for (const run of o.reverted) if (runs[run]) runs[run] = { ...runs[run], reverted: true }
  for (const run of o.restored) {
    if (!runs[run]) continue
    const { reverted: _was, ...back } = runs[run]
    runs[run] = back
  }
  return { runs, canRedo: o.canRedo }
}
