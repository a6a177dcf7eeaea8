/**
 * The browser's follow connection: one SSE stream per followed thread, as an explicit machine.
 *
 *   connecting ──OPENED──▶ open ──FAILED | (silent too long)──▶ backingOff ──(backoff delay | RETRY)──▶ connecting
 *        │ FAILED ──────────────────────────────────────────▲                                       │
 *        └──────────────────────────────── CLOSE (from any state) ──▶ closed ◀──────────────────────┘
 *
 * Pure: no EventSource in here. The side effects arrive through `machine.provide(...)`:
 *  - `connect` opens a stream that resumes after `context.lastSeq` (0 = from a snapshot),
 *  - `disconnect` closes whatever stream is open.
 * The driver (src/ui/follow-client.ts) turns EventSource callbacks into OPENED / FRAME / FAILED.
 *
 * The native EventSource would reconnect on its own with Last-Event-ID; the driver closes it on
 * every error instead, so the backoff and the visible "reconnecting" state live here and the
 * resume point is always the seq of the last frame the store took.
 *
 * A connection can also die without an error: a laptop that slept, a Wi-Fi switch, a NAT that
 * forgot it, a server frozen mid-stream (a stopped cluster node). The server names its heartbeat
 * interval in a `heartbeat` event when the stream opens and repeats the event at that interval
 * (ALIVE); a stream silent for 2.5 intervals is taken as failed and resumed like any other. Frames
 * do not re-arm the watchdog — the heartbeats come whatever else is sent — so a streamed delta
 * costs it nothing.
 */
import { assign, setup } from 'xstate'

export interface FollowContext {
  /** The seq of the last frame (or snapshot) received; the next stream resumes after it. */
  lastSeq: number
  /** Consecutive failures since the last frame; drives the backoff delay. */
  attempt: number
  /** How long the open stream may stay silent (no heartbeat) before it counts as failed; 0: not known yet. */
  silenceMs: number
}

export type FollowEvent =
  | { type: 'OPENED' }
  | { type: 'FRAME'; seq: number }
  /** A heartbeat: the server sends one every `everyMs`. */
  | { type: 'ALIVE'; everyMs: number }
  | { type: 'FAILED' }
  | { type: 'RETRY' }
  | { type: 'CLOSE' }

export interface FollowInput {
  lastSeq?: number
}

/** Attempts at the quick pace: about the first 40 s of an outage (a restart, a network blip). */
export const QUICK_ATTEMPTS = 40

/** Heartbeat intervals a stream may stay silent before it is taken as dead. */
export const SILENT_BEATS = 2.5

/**
 * How long to wait before the attempt after `attempt` consecutive failures: 250 ms, 500 ms, then
 * every second for about 40 s — so a tab is back within about a second of a restarted server —
 * then doubling to 15 s for a long outage, so a server that stays down (or comes back loaded)
 * is not asked every second by every tab. `jitter` (0…1, 0.5 = none) spreads the tabs ±20 % so
 * they do not all arrive in the same instant; the driver passes a random one, the machine stays pure.
 */
export function backoffDelay(attempt: number, jitter = 0.5): number {
  const n = Math.max(1, attempt)
  const base = n === 1 ? 250 : n === 2 ? 500 : n <= QUICK_ATTEMPTS ? 1000 : Math.min(15_000, 1000 * 2 ** (n - QUICK_ATTEMPTS))
  return Math.round(base * (0.8 + 0.4 * Math.min(1, Math.max(0, jitter))))
}

export const followConnectionMachine = setup({
  types: {
    context: {} as FollowContext,
    events: {} as FollowEvent,
    input: {} as FollowInput,
  },
  actions: {
    // Provided by the driver; no-ops here keep the machine pure and testable.
    connect: (_, _params: { after: number }) => {},
    disconnect: () => {},
    recordFrame: assign(({ event }: { event: FollowEvent }) =>
      event.type === 'FRAME' ? { lastSeq: event.seq, attempt: 0 } : {},
    ),
    recordAlive: assign(({ event }: { event: FollowEvent }) =>
      event.type === 'ALIVE' && event.everyMs > 0 ? { silenceMs: Math.round(event.everyMs * SILENT_BEATS) } : {},
    ),
  },
  guards: {
    watched: ({ context }) => context.silenceMs > 0,
  },
  delays: {
    backoff: ({ context }) => backoffDelay(context.attempt),
    // Unwatched (no heartbeat named yet): the guard refuses; the delay only has to be a valid timer.
    silence: ({ context }) => context.silenceMs || 2 ** 31 - 1,
  },
}).createMachine({
  id: 'followConnection',
  initial: 'connecting',
  context: ({ input }) => ({ lastSeq: input?.lastSeq ?? 0, attempt: 0, silenceMs: 0 }),
  on: {
    CLOSE: { target: '.closed' },
  },
  states: {
    connecting: {
      entry: { type: 'connect', params: ({ context }) => ({ after: context.lastSeq }) },
      on: {
        OPENED: { target: 'open' },
        // A frame or a heartbeat can beat `open` on some transports; either proves the stream works.
        FRAME: { target: 'open', actions: 'recordFrame' },
        ALIVE: { target: 'open', actions: 'recordAlive' },
        FAILED: { target: 'backingOff' },
      },
    },
    open: {
      after: { silence: { guard: 'watched', target: 'backingOff' } },
      on: {
        FRAME: { actions: 'recordFrame' },
        // Re-entered: the silence watchdog starts again.
        ALIVE: { target: 'open', reenter: true, actions: 'recordAlive' },
        FAILED: { target: 'backingOff' },
      },
    },
    backingOff: {
      entry: ['disconnect', assign({ attempt: ({ context }) => context.attempt + 1 })],
      after: { backoff: { target: 'connecting' } },
      on: { RETRY: { target: 'connecting' } },
    },
    closed: {
      entry: 'disconnect',
      on: { RETRY: { target: 'connecting', actions: assign({ attempt: 0 }) } },
    },
  },
})

export type FollowState = 'connecting' | 'open' | 'backingOff' | 'closed'
