/**
 * `ask_user_question` calls waiting their turn: the thread's ask-queue machine decides the order and
 * the outcome; this file holds each call's resolver and signal, and opens its one-question card
 * through the dialog bridge when the queue's invoked `card` actor asks for it, resolving with how
 * the card ended (the answer travels back to the queue with it, and from the queue to the call).
 */
import { randomUUID } from 'node:crypto'
import type { AskAnswer, AskStatus, CardOutcome } from '../machines/ask-queue.machine.js'
import type { AskUserResult, DialogRequest, DialogResolution, UiBridge } from '../runtime/port.js'

type Question = Parameters<UiBridge['askUser']>[0]
type Options = Parameters<UiBridge['askUser']>[1]
type QueueEvent = { type: 'ASK' | 'SIGNAL'; askId: string }

interface WaitingAsk {
  question: Question
  options: Options
  resolve: (result: AskUserResult) => void
  unhook: () => void
}

export class AskBridge {
  readonly #asks = new Map<string, WaitingAsk>()

  constructor(
    /** Sends to the thread's ask-queue, when it exists and the thread is active. */
    private readonly toQueue: () => ((event: QueueEvent) => void) | undefined,
    /** Shows a question as a dialog (the dialog bridge's ask). */
    private readonly ask: (request: DialogRequest) => Promise<DialogResolution>,
  ) {}

  askUser(question: Question, options: Options): Promise<AskUserResult> {
    const send = this.toQueue()
    if (!send) return Promise.resolve({ status: 'unavailable' })
    const askId = randomUUID()
    return new Promise((resolve) => {
      const onAbort = () => this.toQueue()?.({ type: 'SIGNAL', askId })
      options.signal?.addEventListener('abort', onAbort, { once: true })
      this.#asks.set(askId, { question, options, resolve, unhook: () => options.signal?.removeEventListener('abort', onAbort) })
      send({ type: 'ASK', askId })
    })
  }

  /** The queue's turn for this ask: its card, shown as a dialog; resolves with how the card ended. */
  async card(askId: string): Promise<CardOutcome> {
    const ask = this.#asks.get(askId)
    if (!ask) return { status: 'cancelled' }
    const resolution = await this.ask({
      spec: { method: 'questionnaire', title: ask.question.prompt, questions: [ask.question] },
      origin: { kind: 'tool', name: 'ask_user_question', ...(ask.options.toolCallId ? { toolCallId: ask.options.toolCallId } : {}) },
      signal: ask.options.signal,
    })
    const answer = resolution.answer && 'answers' in resolution.answer ? resolution.answer.answers[0] : undefined
    if (resolution.outcome === 'answered' && answer && !answer.skipped) return { status: 'answered', answer: pick(answer) }
    return resolution.outcome === 'answered' ? { status: 'skipped' } : { status: 'cancelled' }
  }

  /** The queue's decision reaches the tool call. */
  resolve(askId: string, status: AskStatus, answer?: AskAnswer): void {
    const ask = this.#asks.get(askId)
    this.#asks.delete(askId)
    if (!ask) return
    ask.unhook()
    ask.resolve(status === 'answered' && answer ? { status, ...answer } : { status })
  }

  /** The thread is going away with its ask-queue: every waiting call hears `cancelled`. */
  cancelAll(): void {
    for (const askId of [...this.#asks.keys()]) this.resolve(askId, 'cancelled')
  }
}

function pick(answer: { value?: string; values?: string[]; other?: string }): AskAnswer {
  return {
    ...(answer.value !== undefined ? { value: answer.value } : {}),
    ...(answer.values !== undefined ? { values: answer.values } : {}),
    ...(answer.other !== undefined ? { other: answer.other } : {}),
  }
}
