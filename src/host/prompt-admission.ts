/**
 * A prompt's way into a live thread, durable first: it is journaled before the thread machine sees
 * it, so once it may run, a crash or a failed write can no longer lose it (recovery gives every
 * journaled prompt its fate), and a write that fails refuses it before anything ran. The machine's
 * answer then lands on the journaled row: admitted (with the thread's row, in one commit) or
 * withdrawn (a refused prompt was never accepted).
 */
import { randomUUID } from 'node:crypto'
import type { PromptImage } from '../schemas/index.js'
import type { Log } from './store/journal.js'
import { writeFault, type IdempotencyClaim, type ThreadStore, type WriteFault } from './store/port.js'
import type { LiveThread, PromptOutcome } from './live-thread.js'
import { factsOf } from './thread-display.js'
import type { ThreadSlot } from './thread-slot.js'

/** A prompt as the route passes it: `run` is the run a steer or follow-up was meant for. */
export interface PromptRequestBody {
  message: string
  admission: 'enqueue' | 'reject'
  deliverAs: 'steer' | 'followUp'
  run?: number
  /** Images for the model: journaled with the text, so a prompt handed back after a crash comes back whole. */
  images?: PromptImage[]
}

export type AdmissionOutcome = PromptOutcome | { kind: 'not-durable'; fault: WriteFault } | { kind: 'owner-changed'; threadId: string }

export class PromptAdmission {
  constructor(
    private readonly store: ThreadStore,
    /** The slot's row as it is written (with the live run and the reserved seq ceiling). */
    private readonly rowOf: (slot: ThreadSlot) => Parameters<ThreadStore['putThread']>[0],
    private readonly log?: Log,
  ) {}

  /** `claim`: the request's `Idempotency-Key`, claimed for this prompt in the commit that journals it. */
  async admit(slot: ThreadSlot, live: LiveThread, request: PromptRequestBody, claim?: IdempotencyClaim): Promise<AdmissionOutcome> {
    const { message: text, admission, deliverAs, run, images } = request
    const threadId = slot.threadId
    const messageId = randomUUID()
    try {
      const row = { threadId, messageId, text, admission, deliverAs, queued: false, run: slot.run, acceptedAt: Date.now(), ...(images?.length ? { images } : {}) }
      this.store.admitPrompt(row, this.rowOf(slot), claim)
    } catch (error) {
      return { kind: 'not-durable', fault: writeFault(error) ?? { kind: 'read-only', code: 'EIO', message: String(error) } }
    }
    // Cluster mode: in the thread's log before the machine sees it. A node that lost the thread before
    // the record was in (fenced, its lease gone) hands the prompt to no machine: the caller retries.
    if (this.store.promptLogged && !(await this.store.promptLogged(threadId, messageId))) {
      this.#withdraw(threadId, messageId)
      return { kind: 'owner-changed', threadId }
    }
    const outcome = await live.prompt({ messageId, text, admission, deliverAs, ...(run !== undefined ? { run } : {}) }, images)
    if (outcome.kind === 'admitted') this.#admitted(slot, text, outcome)
    else this.#withdraw(threadId, messageId)
    return outcome
  }

  /** The machine's answer on the journaled prompt, and the thread's row, in one commit; if it fails, recovery still settles the prompt by its id. */
  #admitted(slot: ThreadSlot, text: string, outcome: Extract<PromptOutcome, { kind: 'admitted' }>): void {
    const facts = factsOf(slot.feed?.view.transcript ?? [], slot.record.facts)
    slot.record = { ...slot.record, updatedAt: Date.now(), facts: { ...facts, firstPrompt: facts.firstPrompt ?? text } }
    try {
      this.store.promptAdmitted(slot.threadId, outcome.messageId, { run: outcome.run, queued: outcome.queued }, this.rowOf(slot))
    } catch (error) {
      this.log?.('error', `store write failed after prompt ${outcome.messageId} was journaled: ${String(error)}`)
    }
  }

  /** A refused prompt's journal row goes (a failure only leaves a row recovery settles). */
  #withdraw(threadId: string, messageId: string): void {
    try {
      this.store.withdrawPrompt(threadId, messageId)
    } catch (error) {
      this.log?.('warn', `store write failed: ${String(error)}`)
    }
  }
}
