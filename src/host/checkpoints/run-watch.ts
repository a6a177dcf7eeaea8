/**
 * Ties a live thread's runs to its checkpoints: its runtime's `beforeFileChange` takes the run's
 * checkpoint, and each `settled` on its feed records what the run left and appends `run-changes`.
 */
import type { FileChangeIntent } from '../../runtime/port.js'
import type { Feed } from '../feed.js'
import type { Checkpoints } from './checkpoints.js'

export interface RunWatch {
  beforeFileChange: (change: FileChangeIntent) => Promise<void>
  /** Stops watching the feed (the live thread retired). */
  stop: () => void
}

export function watchRuns(checkpoints: Checkpoints, threadId: string, cwd: string, feed: Feed, currentRun: () => number): RunWatch {
  const stop = feed.observe((o) => {
    if (o.type !== 'settled') return
    void checkpoints
      .settled(threadId, cwd, o.run)
      .then((changes) => {
        if (changes) feed.append(changes)
      })
      // The feed may have gone (the thread deleted meanwhile): its changes stay recorded for the next view.
      .catch(() => undefined)
  })
  return {
    beforeFileChange: (change) => checkpoints.beforeChange(threadId, cwd, currentRun(), change),
    stop,
  }
}
