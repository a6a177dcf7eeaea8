/**
 * The host's ids for the prompts in pi's queues. pi's queues hold bare texts, so this FIFO mirror of
 * {messageId, text} recovers the id when pi delivers a queued message (matched by text, oldest first
 * — pi's own rule), and says which prompts a cleared queue held.
 *
 * pi 1.x runs extensions' input handlers before it queues, so a prompt is first *sending* (given to
 * pi, not yet in its queue). A clear hands those back too, as *withdrawn*: should pi queue one
 * after all, it is taken out again rather than run twice.
 */
import { randomUUID } from 'node:crypto'
import type { ClearedQueue, QueuedPrompt, RuntimeEvent } from './port.js'
import { errorText } from './extension-ui.js'

export type QueuedInputDisposition = 'handled' | 'queued'

/** What the mirror needs of pi's session. */
export interface PiQueue {
  clearQueue(): { steering: readonly string[]; followUp: readonly string[] }
}

/**
 * Takes the prompts whose texts pi handed back out of the mirror, oldest match first. A text the
 * mirror does not know (it should not happen) still comes back, with a fresh id, so nothing is lost.
 */
export function takeQueued(mirror: QueuedPrompt[], texts: readonly string[]): QueuedPrompt[] {
  return texts.map((text) => {
    const i = mirror.findIndex((p) => p.text === text)
    return i === -1 ? { messageId: randomUUID(), text } : mirror.splice(i, 1)[0]
  })
}

export class QueueMirror {
  private readonly steering: QueuedPrompt[] = []
  private readonly followUps: QueuedPrompt[] = []
  /** Sent to pi but not yet in its queue. */
  private readonly sending = new Set<QueuedPrompt>()
  /** Handed back by a clear while still being sent; if pi queues one after all, it is taken out again. */
  private readonly withdrawn = new Set<QueuedPrompt>()

  constructor(
    private readonly pi: PiQueue,
    private readonly emit: (event: RuntimeEvent) => void,
  ) {}

  /** Whether a prompt is still on its way into pi's queue. */
  get isSending(): boolean {
    return this.sending.size > 0
  }

  /** Gives a prompt to pi (`send`) and mirrors it until pi delivers, handles or refuses it. */
  enqueue(kind: 'steer' | 'followUp', prompt: QueuedPrompt, send: (text: string) => Promise<QueuedInputDisposition>): void {
    const mirror = kind === 'steer' ? this.steering : this.followUps
    mirror.push(prompt)
    this.sending.add(prompt)
    const unmirror = () => {
      const i = mirror.indexOf(prompt)
      if (i !== -1) mirror.splice(i, 1)
    }
    send(prompt.text).then(
      (disposition) => {
        this.sending.delete(prompt)
        if (this.withdrawn.delete(prompt)) {
          if (disposition === 'queued') this.dropStray()
          return
        }
        if (disposition !== 'handled') return
        unmirror()
        this.emit({ type: 'prompt-handled', messageId: prompt.messageId, text: prompt.text })
      },
      (error: unknown) => {
        this.sending.delete(prompt)
        unmirror()
        if (this.withdrawn.delete(prompt)) return
        this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: errorText(error) })
      },
    )
  }

  /** Empties pi's queue and returns what was waiting, with the host's ids. */
  clear(): ClearedQueue {
    const cleared = this.pi.clearQueue()
    const taken = { steering: takeQueued(this.steering, cleared.steering), followUp: takeQueued(this.followUps, cleared.followUp) }
    // Accepted but still on their way into pi's queue: they are the caller's too.
    for (const [mirror, out] of [
      [this.steering, taken.steering],
      [this.followUps, taken.followUp],
    ] as const) {
      for (const p of mirror) {
        if (!this.sending.has(p)) continue
        out.push(p)
        this.withdrawn.add(p)
      }
    }
    this.forget()
    return taken
  }

  /** pi's queue is empty now; whatever the mirror still holds is stale and must not lend its id to a later prompt. */
  forget(): void {
    this.steering.length = 0
    this.followUps.length = 0
    this.sending.clear()
  }

  /** The id of the queued prompt pi is delivering with this text, oldest first; undefined if none. */
  claim(text: string): string | undefined {
    for (const mirror of [this.steering, this.followUps]) {
      const i = mirror.findIndex((p) => p.text === text)
      if (i !== -1) return mirror.splice(i, 1)[0].messageId
    }
    return undefined
  }

  /**
   * A prompt already handed back reached pi's queue after all. pi cannot drop one entry, so the
   * queue is cleared; anything else that was in it (queued since, rarely) is refused out loud, never
   * left to run twice or vanish.
   */
  private dropStray(): void {
    this.pi.clearQueue()
    for (const p of [...this.steering, ...this.followUps]) {
      if (this.sending.has(p)) continue
      this.emit({ type: 'prompt-rejected', messageId: p.messageId, reason: 'Withdrawn while the queue was cleared; send it again.' })
    }
    for (const mirror of [this.steering, this.followUps]) {
      const keep = mirror.filter((p) => this.sending.has(p))
      mirror.length = 0
      mirror.push(...keep)
    }
  }
}
