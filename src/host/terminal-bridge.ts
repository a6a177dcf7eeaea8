/**
 * Terminal components on a thread (`ctx.ui.custom()`): each waits its turn in the thread's
 * ask-queue (one on screen at a time, FIFO with ask_user_question; a stop drains the waiting ones
 * unbuilt), then is a question like any other — a dialog machine with a `terminal` spec, open for
 * every follower until it settles. This file carries what only a component has: its screen (each
 * render becomes a `terminal-frame` of the lines that changed), its keys (from the tab holding the
 * input lease), and its `done` (DONE to its dialog machine). It decides nothing about the question.
 */
import {
  TERMINAL_LEASE_MS,
  terminalInputRefusal,
  type ObservationInput,
  type TerminalScreen,
  type TerminalTypist,
} from '../schemas/index.js'
import type { DialogResolution, TerminalControl, TerminalRequest } from '../runtime/port.js'
import { diffScreen, isEmptyFrame } from '../shared/terminal-screen.js'
import type { AskBridge } from './ask-bridge.js'
import type { DialogBridge } from './dialog-bridge.js'

/** What a key sent to a component came to. */
export type TerminalInputOutcome =
  | { kind: 'taken' }
  /** No open component has that id (never asked, or already settled). */
  | { kind: 'unknown' }
  /** Not a string of terminal bytes of bounded length. */
  | { kind: 'refused'; refusal: string }
  /** Another tab is typing into it until `until`. */
  | { kind: 'leased'; until: number }

interface OnScreen {
  request: TerminalRequest
  control?: TerminalControl
  /** Keys that came before the component was opened (it opens just after its question is shown). */
  early: string[]
  screen?: TerminalScreen
  typist?: TerminalTypist
}

export interface TerminalBridgeDeps {
  asks: AskBridge
  dialogs: DialogBridge
  /** Onto the thread's feed. */
  append: (observation: ObservationInput) => void
  /** The component called done: DONE to its dialog machine. */
  done: (dialogId: string) => void
  /** The component could not be built: its question is cancelled. */
  cancel: (dialogId: string) => void
  now?: () => number
}

export class TerminalBridge {
  readonly #open = new Map<string, OnScreen>()
  readonly #deps: TerminalBridgeDeps

  constructor(deps: TerminalBridgeDeps) {
    this.#deps = deps
  }

  /** Queues the component; resolves once its question settled, or at once `refused` when the thread takes none. */
  show(request: TerminalRequest): Promise<DialogResolution> {
    return new Promise((resolve) => {
      let resolution: DialogResolution = { outcome: 'cancelled' }
      const queued = this.#deps.asks.enqueue({
        card: async () => {
          let shownAs: string | undefined
          const spec = { method: 'terminal' as const, cols: request.cols, rows: request.rows, ...(request.title ? { title: request.title } : {}) }
          resolution = await this.#deps.dialogs.ask({ spec, origin: request.origin }, (dialogId) => {
            shownAs = dialogId
            this.#shown(dialogId, request)
          })
          if (shownAs) this.#close(shownAs)
          return resolution.outcome === 'answered' ? { status: 'answered', answer: {} } : { status: 'cancelled' }
        },
        // Drained unshown (a stop, a cancelled batch, the thread going away): pi's cancel value.
        settle: (status) => resolve(status === 'answered' ? resolution : resolution.outcome === 'answered' ? { outcome: 'cancelled' } : resolution),
      })
      if (!queued) resolve({ outcome: 'refused' })
    })
  }

  /** A key from tab `tab`: taken unless the component is gone, the data is not terminal bytes, or another tab holds the lease. */
  input(dialogId: string, data: unknown, tab: string): TerminalInputOutcome {
    const entry = this.#open.get(dialogId)
    if (!entry) return { kind: 'unknown' }
    const refusal = terminalInputRefusal(data)
    if (refusal) return { kind: 'refused', refusal }
    const now = (this.#deps.now ?? Date.now)()
    const typist = entry.typist
    if (typist && typist.tab !== tab && typist.until > now) return { kind: 'leased', until: typist.until }
    // The lease is said again only when another tab takes it or half of it has run, so the
    // watchers' note is exact and a fast typist costs one small frame per half lease.
    if (!typist || typist.tab !== tab || typist.until - now < TERMINAL_LEASE_MS / 2) {
      entry.typist = { tab, until: now + TERMINAL_LEASE_MS }
      this.#deps.append({ type: 'terminal-typist', id: dialogId, ...entry.typist })
    }
    if (entry.control) entry.control.input(data as string)
    else entry.early.push(data as string)
    return { kind: 'taken' }
  }

  /**
   * Its question is on the feed (called from within the dialog machine's entry): the component is
   * built just after, outside the machine's step, so the extension's code never runs inside it.
   */
  #shown(dialogId: string, request: TerminalRequest): void {
    const entry: OnScreen = { request, early: [] }
    this.#open.set(dialogId, entry)
    queueMicrotask(() => {
      if (this.#open.get(dialogId) !== entry) return
      entry.control = request.open({
        frame: (screen) => this.#frame(dialogId, entry, screen),
        done: () => this.#deps.done(dialogId),
        cancel: () => this.#deps.cancel(dialogId),
      })
      for (const data of entry.early.splice(0)) entry.control.input(data)
    })
  }

  #frame(dialogId: string, entry: OnScreen, screen: TerminalScreen): void {
    if (this.#open.get(dialogId) !== entry) return
    const frame = diffScreen(entry.screen, screen)
    if (isEmptyFrame(entry.screen, frame)) return
    entry.screen = screen
    this.#deps.append({ type: 'terminal-frame', id: dialogId, ...frame })
  }

  /** Its question settled: the component is disposed and hears nothing more. */
  #close(dialogId: string): void {
    const entry = this.#open.get(dialogId)
    this.#open.delete(dialogId)
    entry?.control?.close()
  }
}
