/**
 * Drives the follow-connection machine with a real EventSource and feeds the frames into the
 * thread store. One instance per followed thread; `stop()` closes everything.
 */
import { createActor, type Actor } from 'xstate'
import { backoffDelay, followConnectionMachine, type FollowState } from '../machines/follow-connection.js'
import type { Observation as ObservationT, ObservationType, Snapshot } from '../schemas/index.js'
import type { ThreadStore } from './thread-store.js'

/**
 * Every `event:` name the server can send; EventSource only delivers named events we listen for.
 * A record over ObservationType, so a new observation type fails the type check until it is listed
 * (and the bundle does not need TypeBox at run time).
 */
const FRAME_EVENT_SET: Record<ObservationType, true> = {
  status: true,
  'user-message': true,
  'assistant-start': true,
  'assistant-delta': true,
  'assistant-thinking': true,
  'assistant-end': true,
  'tool-start': true,
  'tool-update': true,
  'tool-end': true,
  queue: true,
  'prompt-rejected': true,
  'prompt-handled': true,
  'extension-ui-request': true,
  'dialog-settled': true,
  'terminal-frame': true,
  'terminal-typist': true,
  notify: true,
  'status-item': true,
  widget: true,
  working: true,
  title: true,
  'editor-text': true,
  'custom-message': true,
  settled: true,
  failure: true,
  branch: true,
  'run-changes': true,
  'workspace-restored': true,
  retry: true,
  'retry-end': true,
}
export const FRAME_EVENTS: string[] = Object.keys(FRAME_EVENT_SET)

export type EventSourceFactory = (url: string) => EventSource
export const followConfig: { eventSource: EventSourceFactory } = {
  eventSource: (url) => new EventSource(url),
}

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'closed'

export class FollowClient {
  readonly actor: Actor<typeof followConnectionMachine>
  #es: EventSource | undefined
  #listeners = new Set<(s: ConnectionState) => void>()

  constructor(
    readonly store: ThreadStore,
    private readonly urlFor: (after: number) => string,
    private readonly factory: EventSourceFactory = followConfig.eventSource,
  ) {
    const machine = followConnectionMachine.provide({
      actions: {
        connect: (_, params) => this.#open(params.after),
        disconnect: () => this.#close(),
      },
      // Each tab its own spread, so tabs that lost the server together do not return in step.
      delays: { backoff: ({ context }) => backoffDelay(context.attempt, Math.random()) },
    })
    // Resume after what the store already holds (0 before the first snapshot).
    const synced = store.getSnapshot().context.synced
    this.actor = createActor(machine, { input: { lastSeq: synced ? store.getSnapshot().context.view.seq : 0 } })
    this.actor.subscribe(() => this.#emit())
  }

  start(): this {
    this.actor.start()
    // The network is back, or the tab is looked at again: try now rather than at the next backoff.
    globalThis.addEventListener?.('online', this.#wake)
    globalThis.document?.addEventListener('visibilitychange', this.#wake)
    return this
  }

  stop(): void {
    globalThis.removeEventListener?.('online', this.#wake)
    globalThis.document?.removeEventListener('visibilitychange', this.#wake)
    this.actor.send({ type: 'CLOSE' })
    this.actor.stop()
    this.#close()
  }

  /** Reconnect now (e.g. after the first prompt created the thread the follow could not find). */
  retryNow(): void {
    const s = this.actor.getSnapshot().value
    if (s === 'backingOff' || s === 'closed') this.actor.send({ type: 'RETRY' })
  }

  #wake = () => {
    if (globalThis.document?.visibilityState !== 'hidden' && this.actor.getSnapshot().value === 'backingOff') this.actor.send({ type: 'RETRY' })
  }

  get state(): ConnectionState {
    return connectionState(this.actor.getSnapshot().value as FollowState, this.store.getSnapshot().context.synced)
  }

  onState(fn: (s: ConnectionState) => void): () => void {
    this.#listeners.add(fn)
    return () => this.#listeners.delete(fn)
  }

  #emit() {
    const s = this.state
    for (const fn of this.#listeners) fn(s)
  }

  #open(after: number) {
    this.#close()
    const es = this.factory(this.urlFor(after))
    this.#es = es
    es.onopen = () => {
      if (this.#es === es) this.actor.send({ type: 'OPENED' })
    }
    es.onerror = () => {
      if (this.#es !== es) return
      // Close at once: the machine owns the backoff and resumes from the store's seq.
      es.close()
      this.actor.send({ type: 'FAILED' })
    }
    // The server's heartbeat (its interval in ms): what tells a silent stream from a dead one.
    es.addEventListener('heartbeat', (ev) => {
      if (this.#es === es) this.actor.send({ type: 'ALIVE', everyMs: Number((ev as MessageEvent<string>).data) || 0 })
    })
    es.addEventListener('snapshot', (ev) => {
      if (this.#es !== es) return
      const snapshot = parse<Snapshot>(ev)
      if (!snapshot) return
      this.store.trigger.snapshot({ snapshot })
      this.actor.send({ type: 'FRAME', seq: snapshot.seq })
    })
    const onFrame = (ev: Event) => {
      if (this.#es !== es) return
      const observation = parse<ObservationT>(ev)
      if (!observation || typeof observation.seq !== 'number') return
      this.store.trigger.frame({ observation })
      this.actor.send({ type: 'FRAME', seq: this.store.getSnapshot().context.view.seq })
    }
    for (const type of FRAME_EVENTS) es.addEventListener(type, onFrame)
  }

  #close() {
    const es = this.#es
    this.#es = undefined
    es?.close()
  }
}

export function connectionState(state: FollowState, synced: boolean): ConnectionState {
  switch (state) {
    case 'open':
      return 'live'
    case 'connecting':
      return synced ? 'reconnecting' : 'connecting'
    case 'backingOff':
      // Never connected yet (e.g. a thread its first message has not created): not a *re*connect.
      return synced ? 'reconnecting' : 'connecting'
    case 'closed':
      return 'closed'
  }
}

function parse<T>(ev: Event): T | undefined {
  try {
    return JSON.parse((ev as MessageEvent<string>).data) as T
  } catch {
    return undefined
  }
}
