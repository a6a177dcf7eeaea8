/**
 * One ticking source for the page: every element that shows a time that moves (a question's
 * countdown, a thread's "3 min ago") re-renders on the shared interval of its period, which runs
 * only while some connected element listens, instead of each keeping a timer of its own.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit'

interface Ticker {
  listeners: Set<() => void>
  timer: ReturnType<typeof setInterval>
}

/** One interval per period, shared by every listener of that period. */
const tickers = new Map<number, Ticker>()

function listen(periodMs: number, fn: () => void): () => void {
  let ticker = tickers.get(periodMs)
  if (!ticker) {
    const listeners = new Set<() => void>()
    ticker = { listeners, timer: setInterval(() => listeners.forEach((l) => l()), periodMs) }
    tickers.set(periodMs, ticker)
  }
  ticker.listeners.add(fn)
  const own = ticker
  return () => {
    own.listeners.delete(fn)
    if (own.listeners.size > 0) return
    clearInterval(own.timer)
    tickers.delete(periodMs)
  }
}

export interface ClockOptions {
  /** How often the host re-renders; 1 s by default. */
  periodMs?: number
  /** Whether the host shows a moving time at all just now (a tick re-renders it only then). */
  when?: () => boolean
}

export class ClockController implements ReactiveController {
  #off: (() => void) | undefined

  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly options: ClockOptions = {},
  ) {
    host.addController(this)
  }

  hostConnected(): void {
    this.#off ??= listen(this.options.periodMs ?? 1000, () => {
      if (this.options.when?.() ?? true) this.host.requestUpdate()
    })
  }

  hostDisconnected(): void {
    this.#off?.()
    this.#off = undefined
  }
}
