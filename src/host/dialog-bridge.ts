/**
 * Where a question waits: the extension's promise, parked by dialog id while the thread's dialog
 * machine decides how the wait ends. This file holds resolvers only; it decides nothing — the
 * extension's timeout and signal go to the dialog machine with the question, which keeps them.
 */
import { randomUUID } from 'node:crypto'
import type { DialogRequest, DialogResolution } from '../runtime/port.js'
import type { ThreadEvent } from '../machines/thread.machine.js'

export class DialogBridge {
  readonly #parked = new Map<string, (resolution: DialogResolution) => void>()
  /** Decided and not delivered yet (`resolveAfter`): what the extension hears, whenever it hears it. */
  readonly #decided = new Map<string, DialogResolution>()
  /** Who waits to hear that a question is on screen (a terminal component, to start drawing). */
  readonly #onShown = new Map<string, (dialogId: string) => void>()

  constructor(
    /** Sends to the thread machine. */
    private readonly send: (event: ThreadEvent) => void,
    /** Whether the thread machine still takes questions. */
    private readonly active: () => boolean,
  ) {}

  /**
   * Parks the question and hands it to the thread machine; resolves once its dialog has settled (or
   * was refused). `onShown` hears its id once the question is on every follower's screen.
   */
  ask(request: DialogRequest, onShown?: (dialogId: string) => void): Promise<DialogResolution> {
    if (!this.active()) return Promise.resolve({ outcome: 'refused' })
    const dialogId = randomUUID()
    return new Promise((resolve) => {
      this.#parked.set(dialogId, resolve)
      if (onShown) this.#onShown.set(dialogId, onShown)
      this.send({
        type: 'ASK',
        dialogId,
        spec: request.spec,
        origin: request.origin,
        ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
      })
    })
  }

  /**
   * The thread machine has ended: a question still parked never reached a state that decides (one
   * asked re-entrantly as the machine finished), and nothing will decide it now: refused.
   */
  refuseAll(): void {
    // One already decided is delivered as decided: the extension hears the outcome every follower saw.
    for (const dialogId of [...this.#parked.keys()]) this.resolve(dialogId, this.#decided.get(dialogId) ?? { outcome: 'refused' })
  }

  /** The question's request is on the feed. */
  shown(dialogId: string): void {
    const onShown = this.#onShown.get(dialogId)
    this.#onShown.delete(dialogId)
    onShown?.(dialogId)
  }

  /** The machine's decision reaches the extension. */
  resolve(dialogId: string, resolution: DialogResolution): void {
    const resolve = this.#parked.get(dialogId)
    this.#parked.delete(dialogId)
    this.#onShown.delete(dialogId)
    this.#decided.delete(dialogId)
    resolve?.(resolution)
  }

  /** The machine's decision reaches the extension once `after` settles, on the event loop's next turn. */
  resolveAfter(dialogId: string, resolution: DialogResolution, after: Promise<unknown>): void {
    if (!this.#parked.has(dialogId)) return
    this.#decided.set(dialogId, resolution)
    const deliver = () => void setImmediate(() => this.resolve(dialogId, resolution))
    after.then(deliver, deliver)
  }
}
