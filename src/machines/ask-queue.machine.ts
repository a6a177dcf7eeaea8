/**
 * The ask-queue of a thread: `ask_user_question` calls shown one at a time, in FIFO order.
 *
 * pi may run one batch's tool calls concurrently, but a human answers one card at a time, and a
 * question must never steal another's answer. So each call waits its turn here. Skip resolves only
 * the question shown; Cancel (Escape) resolves it as cancelled and drains every waiting one as
 * cancelled without showing it; a waiter whose signal was aborted is checked again when it reaches
 * the head and is never shown; the batch-cancel flag resets only once the queue is idle. (A tool
 * with no UI bound never asks: it answers `unavailable` itself, before the queue.)
 *
 * Pure: showing a question and resolving a tool call arrive as provided actions.
 */
import { assign, setup } from 'xstate'

export type AskStatus = 'answered' | 'skipped' | 'cancelled' | 'unavailable'

export interface AskWaiter {
  askId: string
  aborted: boolean
}

export interface AskQueueContext {
  current?: string
  waiting: AskWaiter[]
  batchCancelled: boolean
}

export type AskQueueEvent =
  | { type: 'ASK'; askId: string }
  /** The tool call's abort signal fired. */
  | { type: 'SIGNAL'; askId: string }
  /** The shown question's dialog settled. `cancelled` is the human's Escape: it cancels the batch. */
  | { type: 'ANSWERED'; askId: string }
  | { type: 'SKIPPED'; askId: string }
  | { type: 'CANCELLED'; askId: string }

export type AskResolution = { askId: string; status: AskStatus }

const isCurrent = ({ context, event }: { context: AskQueueContext; event: AskQueueEvent }) =>
  event.askId === context.current

export const askQueueMachine = setup({
  types: {
    context: {} as AskQueueContext,
    events: {} as AskQueueEvent,
  },
  actions: {
    /** Open the one-question dialog of this ask. */
    show: (_, _params: { askId: string }) => {},
    /** Resolve the tool call waiting on this ask. */
    resolve: (_, _params: AskResolution) => {},
  },
  guards: {
    isCurrent,
    nothingWaiting: ({ context }) => context.waiting.length === 0,
    headWithdrawn: ({ context }) => context.batchCancelled || context.waiting[0].aborted,
  },
}).createMachine({
  id: 'askQueue',
  context: { waiting: [], batchCancelled: false },
  initial: 'idle',
  states: {
    idle: {
      entry: assign({ batchCancelled: false, current: undefined }),
      on: {
        ASK: {
          target: 'showing',
          actions: [
            assign({ current: ({ event }) => event.askId }),
            { type: 'show', params: ({ event }) => ({ askId: event.askId }) },
          ],
        },
      },
    },
    showing: {
      on: {
        ASK: { actions: assign({ waiting: ({ context, event }) => [...context.waiting, { askId: event.askId, aborted: false }] }) },
        SIGNAL: {
          // The shown question's own dialog hears the signal and settles `aborted`; a waiter is marked
          // and checked again when it reaches the head.
          actions: assign({
            waiting: ({ context, event }) =>
              context.waiting.map((w) => (w.askId === event.askId ? { ...w, aborted: true } : w)),
          }),
        },
        ANSWERED: {
          guard: 'isCurrent',
          target: 'advancing',
          actions: { type: 'resolve', params: ({ event }) => ({ askId: event.askId, status: 'answered' }) },
        },
        SKIPPED: {
          guard: 'isCurrent',
          target: 'advancing',
          actions: { type: 'resolve', params: ({ event }) => ({ askId: event.askId, status: 'skipped' }) },
        },
        CANCELLED: {
          guard: 'isCurrent',
          target: 'advancing',
          actions: [
            { type: 'resolve', params: ({ event }) => ({ askId: event.askId, status: 'cancelled' }) },
            assign({ batchCancelled: true }),
          ],
        },
      },
    },
    advancing: {
      always: [
        { guard: 'nothingWaiting', target: 'idle' },
        {
          guard: 'headWithdrawn',
          target: 'advancing',
          reenter: true,
          actions: [
            { type: 'resolve', params: ({ context }) => ({ askId: context.waiting[0].askId, status: 'cancelled' }) },
            assign({ waiting: ({ context }) => context.waiting.slice(1) }),
          ],
        },
        {
          target: 'showing',
          actions: [
            assign({ current: ({ context }) => context.waiting[0].askId, waiting: ({ context }) => context.waiting.slice(1) }),
            { type: 'show', params: ({ context }) => ({ askId: context.current! }) },
          ],
        },
      ],
    },
  },
})

export type AskQueueMachine = typeof askQueueMachine
