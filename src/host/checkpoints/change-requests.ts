/**
 * The requests about what the agent changed, once the registry found the thread: a run's diff, the
 * thread's, a revert and a redo. Reverts and redos are the user's actions (the token holder's), never
 * a tool the model is offered; each is refused while a run is in flight, announced to every follower
 * (`workspace-restored`), and told to the model as a message in its conversation.
 */
import type { ChangesOutcome, RestoreRouteOutcome } from '../../schemas/outcomes.js'
import type { Feed } from '../feed.js'
import type { ThreadSlot } from '../thread-slot.js'
import type { Checkpoints, RestoreOutcome } from './checkpoints.js'

export const REVERT_ENTRY = 'threadhost.revert'

export interface ChangeRequestHost {
  checkpoints: Checkpoints
  present(threadId: string): ThreadSlot | undefined
  feed(slot: ThreadSlot): Promise<Feed>
  defaultCwd: string
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void
}

export class ChangeRequests {
  constructor(private readonly host: ChangeRequestHost) {}

  #cwd(slot: ThreadSlot): string {
    return slot.record.cwd ?? this.host.defaultCwd
  }

  async changes(threadId: string, run?: number): Promise<ChangesOutcome> {
    const slot = this.host.present(threadId)
    if (!slot) return { kind: 'unknown' }
    const report = await this.host.checkpoints.report(threadId, this.#cwd(slot), run)
    return report ? { kind: 'changes', report } : { kind: 'no-checkpoint' }
  }

  revert(threadId: string, toRun: number): Promise<RestoreRouteOutcome> {
    return this.#restore(threadId, (cwd) => this.host.checkpoints.revert(threadId, cwd, toRun))
  }

  redo(threadId: string): Promise<RestoreRouteOutcome> {
    return this.#restore(threadId, (cwd) => this.host.checkpoints.redo(threadId, cwd))
  }

  async #restore(threadId: string, work: (cwd: string) => Promise<RestoreOutcome>): Promise<RestoreRouteOutcome> {
    const slot = this.host.present(threadId)
    if (!slot) return { kind: 'unknown' }
    // A run that starts meanwhile waits at its first file change (the checkpoints' queue) until this is done.
    if (slot.live?.busy) return { kind: 'busy' }
    const outcome = await work(this.#cwd(slot))
    if (outcome.kind !== 'restored') return outcome
    const feed = await this.host.feed(slot)
    feed.append(outcome.observation)
    await this.#tellModel(slot, outcome)
    return { kind: 'restored', action: outcome.action, files: outcome.files, runs: outcome.runs }
  }

  /** The conversation says what happened to the files, so the model does not build on what is gone. */
  async #tellModel(slot: ThreadSlot, outcome: Extract<RestoreOutcome, { kind: 'restored' }>): Promise<void> {
    if (slot.damage !== undefined) return
    const live = await slot.ensureLive().catch((error: unknown) => {
      this.host.log?.('warn', `[${slot.threadId}] the ${outcome.action} could not be told to the model: ${String(error)}`)
      return undefined
    })
    live?.note({ customType: REVERT_ENTRY, text: noteText(outcome) })
  }
}

export function noteText(outcome: { action: 'revert' | 'redo'; files: string[]; runs: number[] }): string {
  const runs = outcome.runs.length === 1 ? `run ${outcome.runs[0]}` : `runs ${outcome.runs.join(', ')}`
  const files = outcome.files.length > 0 ? outcome.files.join(', ') : 'no files'
  return outcome.action === 'revert'
    ? `The user reverted the workspace changes of ${runs}: ${files} are back to how they were before. Those changes are gone; do not assume them.`
    : `The user redid the workspace changes of ${runs} that had been reverted: ${files} are as ${runs} left them.`
}
