/**
 * Requests to a live thread (live-thread.ts) and their replies: what each request comes to, and the
 * requests waiting for their one reply. A request is an event carrying a correlation id, answered by
 * the event its thread's machine — or the dialog an answer names — emits with that id.
 */
import type { Subscription } from 'xstate'
import type { DialogEmitted } from '../machines/dialog.machine.js'
import type { ThreadActor, ThreadEmitted, ThreadEvent, WaitingPrompt } from '../machines/thread.machine.js'

export type PromptOutcome =
  | { kind: 'admitted'; messageId: string; run: number; queued: boolean }
  | { kind: 'busy' }
  /** The prompt named a run (a steer or follow-up meant for it) that is not the current one. */
  | { kind: 'stale-run' }
  | { kind: 'rejected'; reason: string }

/** A stop refused: nothing in flight, another run is current, or no runtime. */
type StopRefused = { kind: 'idle' } | { kind: 'stale-run' } | { kind: 'not-live' }

/**
 * What a stop came to, as `stop()` answers it: `restored` is the prompts the stop took off the
 * runtime's queue, with the ids they were admitted under (their journal entries), steering first.
 */
export type StopOutcome = { kind: 'stopped'; restored: WaitingPrompt[] } | StopRefused

/** What a take-back came to, as `takeQueue()` answers it: the prompts taken off the queue (as a stop's), or why it was refused. */
export type TakeOutcome = { kind: 'taken'; restored: WaitingPrompt[] } | StopRefused

/** `stop()`'s answer with only the texts, as the abort receipt carries them. */
export type AbortOutcome = { kind: 'stopped'; restored: string[] } | StopRefused

/** What an answer (or a cancel) to a question came to, as the question's dialog machine decided. */
export type AnswerOutcome = { kind: 'answered' } | { kind: 'unknown' } | { kind: 'refused'; refusal: string }

/** Every reply a request can get: the thread's, or the dialog's an answer named. */
export type Reply = ThreadEmitted | DialogEmitted

interface PendingReply {
  deliver: (reply: Reply) => void
  /** The thread went away before it replied. */
  gone: () => void
}

/**
 * The requests waiting for their one reply, by correlation id (a prompt's messageId, else a fresh id).
 * Made as the first waits and let go of as the last is answered (`over`): the thread's replies are
 * listened to only meanwhile — no reply is anybody's otherwise, and an idle thread would hold the
 * map and the listener for nothing.
 */
export class PendingReplies {
  readonly #waiting = new Map<string, PendingReply>()
  readonly #listening: Subscription

  constructor(
    private readonly actor: ThreadActor,
    private readonly over: () => void,
  ) {
    this.#listening = actor.on('*', (e) => this.answer(e as ThreadEmitted))
  }

  /** Sends the request's `event` (carrying `replyTo`); resolves with what `read` makes of its reply, or `ifGone`. */
  request<R>(replyTo: string, event: ThreadEvent, ifGone: R, read: (reply: Reply) => R): Promise<R> {
    return new Promise((resolve) => {
      this.#waiting.set(replyTo, { deliver: (reply) => resolve(read(reply)), gone: () => resolve(ifGone) })
      this.actor.send(event)
    })
  }

  /** A reply, to the request waiting for it if any. */
  answer(reply: Reply): void {
    const id = 'messageId' in reply ? reply.messageId : reply.replyTo
    const pending = this.#waiting.get(id)
    if (!pending) return
    this.#waiting.delete(id)
    // Let go between requests: an idle thread waits on none.
    if (this.#waiting.size === 0) this.#end()
    pending.deliver(reply)
  }

  /** The thread went away: every request still waiting hears so. */
  gone(): void {
    for (const [id, pending] of [...this.#waiting]) {
      this.#waiting.delete(id)
      pending.gone()
    }
    this.#end()
  }

  #end(): void {
    this.#listening.unsubscribe()
    this.over()
  }
}
