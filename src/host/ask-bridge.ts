/**
 * What waits its turn in the thread's ask-queue — `ask_user_question` calls and terminal components
 * (`ctx.ui.custom()`, terminal-bridge.ts): the queue machine decides the order and the outcome; this
 * file holds each turn's card (how it is shown, resolving with how it ended) and its resolver, and
 * runs the card when the queue's invoked `card` actor asks for it.
 */
import { randomUUID } from 'node:crypto'
import type { AskAnswer, AskStatus, CardOutcome } from '../machines/ask-queue.machine.js'
import type { AskUserResult, DialogRequest, DialogResolution, UiBridge } from '../runtime/port.js'

type Question = Parameters<UiBridge['askUser']>[0]
type Options = Parameters<UiBridge['askUser']>[1]
type QueueEvent = { type: 'ASK' | 'SIGNAL'; askId: string }

/** One turn in the queue: shown by `card` when it reaches the head; `settle` hears the queue's decision. */
export interface Turn {
  card(): Promise<CardOutcome>
  settle(status: AskStatus, answer?: AskAnswer): void
  /** Aborted while waiting: the queue drains it without showing it. */
  signal?: AbortSignal
}

interface WaitingTurn extends Turn {
  unhook: () => void
}

export class AskBridge {
  readonly #turns = new Map<string, WaitingTurn>()

  constructor(
    /** Sends to the thread's ask-queue, when it exists and the thread is active. */
    private readonly toQueue: () => ((event: QueueEvent) => void) | undefined,
    /** Shows a question as a dialog (the dialog bridge's ask). */
    private readonly ask: (request: DialogRequest) => Promise<DialogResolution>,
  ) {}

  /** Queues a turn; false when there is no queue (the thread takes no questions now). */
  enqueue(turn: Turn): boolean {
    const send = this.toQueue()
    if (!send) return false
    const askId = randomUUID()
    const onAbort = () => this.toQueue()?.({ type: 'SIGNAL', askId })
    turn.signal?.addEventListener('abort', onAbort, { once: true })
    this.#turns.set(askId, { ...turn, unhook: () => turn.signal?.removeEventListener('abort', onAbort) })
    send({ type: 'ASK', askId })
    return true
  }

  askUser(question: Question, options: Options): Promise<AskUserResult> {
    return new Promise((resolve) => {
      const queued = this.enqueue({
        signal: options.signal,
        card: () => this.#questionCard(question, options),
        settle: (status, answer) => resolve(status === 'answered' && answer ? { status, ...answer } : { status }),
      })
      if (!queued) resolve({ status: 'unavailable' })
    })
  }

  /** The queue's turn for this ask: its card; resolves with how the card ended. */
  card(askId: string): Promise<CardOutcome> {
    const turn = this.#turns.get(askId)
    return turn ? turn.card() : Promise.resolve({ status: 'cancelled' })
  }

  /** An ask_user_question card, shown as a one-question questionnaire dialog. */
  async #questionCard(question: Question, options: Options): Promise<CardOutcome> {
    const resolution = await this.ask({
      spec: { method: 'questionnaire', title: question.prompt, questions: [question] },
      origin: { kind: 'tool', name: 'ask_user_question', ...(options.toolCallId ? { toolCallId: options.toolCallId } : {}) },
      signal: options.signal,
    })
    const answer = resolution.answer && 'answers' in resolution.answer ? resolution.answer.answers[0] : undefined
    if (resolution.outcome === 'answered' && answer && !answer.skipped) return { status: 'answered', answer: pick(answer) }
    return resolution.outcome === 'answered' ? { status: 'skipped' } : { status: 'cancelled' }
  }

  /** The queue's decision reaches the turn. */
  resolve(askId: string, status: AskStatus, answer?: AskAnswer): void {
    const turn = this.#turns.get(askId)
    this.#turns.delete(askId)
    if (!turn) return
    turn.unhook()
    turn.settle(status, answer)
  }

  /** The thread is going away with its ask-queue: every waiting turn hears `cancelled`. */
  cancelAll(): void {
    for (const askId of [...this.#turns.keys()]) this.resolve(askId, 'cancelled')
  }
}

function pick(answer: { value?: string; values?: string[]; other?: string }): AskAnswer {
  return {
    ...(answer.value !== undefined ? { value: answer.value } : {}),
    ...(answer.values !== undefined ? { values: answer.values } : {}),
    ...(answer.other !== undefined ? { other: answer.other } : {}),
  }
}
