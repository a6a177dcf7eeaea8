/**
 * Where a question waits: the extension's promise, parked by dialog id while the thread's dialog
 * machine decides how the wait ends. This file holds resolvers and the extension's own timer and
 * signal; it decides nothing — the timer and the signal come back to the machine as events.
 */
import { randomUUID } from 'node:crypto'
import type { DialogRequest, DialogResolution } from '../runtime/port.js'
import type { ThreadEvent } from '../machines/thread.machine.js'

/** Dialog timeouts beyond what a timer can hold (about 24.8 days) mean "no timeout". */
const MAX_TIMER_MS = 2 ** 31 - 1

interface ParkedDialog {
  request: DialogRequest
  resolve: (resolution: DialogResolution) => void
  timer?: NodeJS.Timeout
  unhook?: () => void
}

export class DialogBridge {
  readonly #parked = new Map<string, ParkedDialog>()

  constructor(
    /** Sends to the thread machine. */
    private readonly send: (event: ThreadEvent) => void,
    /** Whether the thread machine still takes questions. */
    private readonly active: () => boolean,
  ) {}

  /** Parks the question and hands it to the thread machine; resolves once its dialog has settled (or was refused). */
  ask(request: DialogRequest): Promise<DialogResolution> {
    if (!this.active()) return Promise.resolve({ outcome: 'refused' })
    const dialogId = randomUUID()
    return new Promise((resolve) => {
      this.#parked.set(dialogId, { request, resolve })
      const { timeoutMs } = request
      const expiresAt = timeoutMs !== undefined && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS ? Date.now() + timeoutMs : undefined
      this.send({
        type: 'ASK',
        dialogId,
        spec: request.spec,
        origin: request.origin,
        expiresAt,
        signalAborted: request.signal?.aborted ?? false,
      })
    })
  }

  /** The dialog is open: its expiry and the extension's signal become events of the machine. */
  watch(dialogId: string, expiresAt: number | undefined): void {
    const parked = this.#parked.get(dialogId)
    if (!parked) return
    if (expiresAt !== undefined) {
      parked.timer = setTimeout(() => this.send({ type: 'DIALOG.TIMEOUT', dialogId }), Math.max(0, expiresAt - Date.now()))
    }
    const signal = parked.request.signal
    if (signal) {
      const onAbort = () => this.send({ type: 'DIALOG.SIGNAL', dialogId })
      signal.addEventListener('abort', onAbort, { once: true })
      parked.unhook = () => signal.removeEventListener('abort', onAbort)
    }
  }

  unwatch(dialogId: string): void {
    const parked = this.#parked.get(dialogId)
    clearTimeout(parked?.timer)
    parked?.unhook?.()
  }

  /**
   * The thread machine has ended: a question still parked never reached a state that decides (one
   * asked re-entrantly as the machine finished), and nothing will decide it now: refused.
   */
  refuseAll(): void {
    for (const dialogId of [...this.#parked.keys()]) {
      this.unwatch(dialogId)
      this.resolve(dialogId, { outcome: 'refused' })
    }
  }

  /** The machine's decision reaches the extension. */
  resolve(dialogId: string, resolution: DialogResolution): void {
    const parked = this.#parked.get(dialogId)
    this.#parked.delete(dialogId)
    parked?.resolve(resolution)
  }
}
