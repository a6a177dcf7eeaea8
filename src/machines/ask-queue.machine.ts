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
 * The card shown is an invoked promise actor (`card`, provided by the host: it opens the question's
 * dialog and resolves with how it ended); its `onDone` carries the outcome and the answer, so the
 * queue resolves the tool call with the answer itself and moves on. Resolving a tool call arrives as
 * a provided action.
 */
import { assign, fromPromise, setup } from 'xstate'

export type AskStatus = 'answered' | 'skipped' | 'cancelled' | 'unavailable'

/** What the human chose on an answered card. */
export interface AskAnswer {
  value?: string
  values?: string[]
  other?: string
}

/** How a card ended: answered (with the answer), skipped, or cancelled (Escape, a signal, a stop: it cancels the batch). */
export type CardOutcome = { status: 'answered'; answer: AskAnswer } | { status: 'skipped' } | { status: 'cancelled' }

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

/** The queue's decision for one tool call: its status, and the answer when answered. */
export type AskResolution = { askId: string; status: AskStatus; answer?: AskAnswer }

type CardDone = { output: CardOutcome }
const ended = (status: CardOutcome['status']) => ({ event }: { event: unknown }) => (event as CardDone).output.status === status

export const askQueueMachine = setup({
  types: {
    context: {} as AskQueueContext,
    events: {} as AskQueueEvent,
  },
  actors: {
    /** The card of this ask: shows its one-question dialog, resolves with how it ended. */
    card: fromPromise<CardOutcome, { askId: string }>(() => new Promise<CardOutcome>(() => {})),
  },
  actions: {
    /** Resolve the tool call waiting on this ask. */
    resolve: (_, _params: AskResolution) => {},
  },
  guards: {
    answered: ended('answered'),
    skipped: ended('skipped'),
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
        ASK: { target: 'showing', actions: assign({ current: ({ event }) => event.askId }) },
      },
    },
    showing: {
      invoke: {
        id: 'card',
        src: 'card',
        input: ({ context }) => ({ askId: context.current! }),
        onDone: [
          {
            guard: 'answered',
            target: 'advancing',
            actions: {
              type: 'resolve',
              params: ({ context, event }) => ({ askId: context.current!, status: 'answered', answer: answerOf(event.output) }),
            },
          },
          {
            guard: 'skipped',
            target: 'advancing',
            actions: { type: 'resolve', params: ({ context }) => ({ askId: context.current!, status: 'skipped' }) },
          },
          {
            // Escape, or the card's own signal: this one is cancelled, and so is the rest of the batch
            target: 'advancing',
            actions: [
              { type: 'resolve', params: ({ context }) => ({ askId: context.current!, status: 'cancelled' }) },
              assign({ batchCancelled: true }),
            ],
          },
        ],
      },
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
          actions: assign({ current: ({ context }) => context.waiting[0].askId, waiting: ({ context }) => context.waiting.slice(1) }),
        },
      ],
    },
  },
})

function answerOf(output: CardOutcome): AskAnswer | undefined {
  return output.status === 'answered' ? output.answer : undefined
}

export type AskQueueMachine = typeof askQueueMachine
