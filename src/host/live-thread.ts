/**
 * One thread's actor, wired to its runtime and its feed.
 *
 * The thread machine decides; this file only carries its decisions out (provided actions) and
 * turns runtime events into observations. Requests are sent as events and answered by the events
 * the machine emits, so a route never second-guesses the machine.
 */
import { randomUUID } from 'node:crypto'
import { createActor, type Subscription } from 'xstate'
import type { CommandInfo, DialogOutcome, ObservationInput, ThinkingLevel } from '../schemas/index.js'
import { askQueueMachine, type AskStatus } from '../machines/ask-queue.machine.js'
import { dialogMachine, type DialogEmitted } from '../machines/dialog.machine.js'
import { threadMachine, type PromptRequest, type ThreadActor, type ThreadEmitted, type ThreadEvent } from '../machines/thread.machine.js'
import type { AgentRuntime, AskUserResult, DialogRequest, DialogResolution, RuntimeEvent, UiBridge } from '../runtime/port.js'
import { errorText } from '../runtime/extension-ui.js'
import type { Feed } from './feed.js'

export type PromptOutcome =
  | { kind: 'admitted'; messageId: string; run: number; queued: boolean }
  | { kind: 'busy' }
  | { kind: 'not-live' }
  | { kind: 'rejected'; reason: string }

export type AbortOutcome =
  | { kind: 'stopped'; restored: string[] }
  | { kind: 'idle' }
  | { kind: 'stale-run' }
  | { kind: 'not-live' }

/** What an answer (or a cancel) to a question came to, as the question's dialog machine decided. */
export type AnswerOutcome = { kind: 'answered' } | { kind: 'unknown' } | { kind: 'refused'; refusal: string }

/** Every reply a request can get: the thread's, or the dialog's an answer named. */
type Reply = ThreadEmitted | DialogEmitted

interface PendingReply {
  deliver: (reply: Reply) => void
  /** The thread went away before it replied. */
  gone: () => void
}

export interface LiveThreadOptions {
  threadId: string
  feed: Feed
  /** The run counter to continue from (kept in the thread index). */
  run: number
  idleMs: number
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void
  /** Called once the thread has gone cold (idle timeout) or been disposed; the registry lets go of it. */
  onRetired: (thread: LiveThread) => void
}

interface ParkedDialog {
  request: DialogRequest
  resolve: (resolution: DialogResolution) => void
  timer?: NodeJS.Timeout
  unhook?: () => void
}

interface WaitingAsk {
  question: Parameters<UiBridge['askUser']>[0]
  options: Parameters<UiBridge['askUser']>[1]
  resolve: (result: AskUserResult) => void
  unhook: () => void
  answer?: AskUserResult
}

/** A thread title is at most this long (as a rename's). */
const MAX_TITLE = 200

/** The map already holds exactly this value for the key (undefined: the key is absent). */
function sameEntry<V>(map: Record<string, V>, key: string, value: V | undefined): boolean {
  if (!Object.hasOwn(map, key)) return value === undefined
  return value !== undefined && JSON.stringify(map[key]) === JSON.stringify(value)
}

/** Dialog timeouts beyond what a timer can hold (about 24.8 days) mean "no timeout". */
const MAX_TIMER_MS = 2 ** 31 - 1

export class LiveThread {
  readonly actor: ThreadActor
  readonly threadId: string
  readonly #feed: Feed
  readonly #parked = new Map<string, ParkedDialog>()
  readonly #asks = new Map<string, WaitingAsk>()
  /** Requests waiting for their one reply, by correlation id (a prompt's messageId, else a fresh id). */
  readonly #replies = new Map<string, PendingReply>()
  readonly #options: LiveThreadOptions
  #runtime?: AgentRuntime
  #unsubscribe?: () => void
  #idleTimer?: NodeJS.Timeout
  #disposing: Promise<void> = Promise.resolve()
  #subscription?: Subscription
  #retired = false
  #wasLive = false
  #releasing = false
  /** The editor's text as pi's getEditorText() sees it: the latest a tab reported or an extension set. */
  #editorText = ''

  constructor(options: LiveThreadOptions) {
    this.#options = options
    this.threadId = options.threadId
    this.#feed = options.feed
    this.actor = createActor(this.#machine(), {
      id: `thread:${options.threadId}`,
      systemId: `thread:${options.threadId}`,
      input: { threadId: options.threadId, run: options.run },
    })
    this.actor.on('*', (e) => this.#onReply(e as ThreadEmitted))
    this.#subscription = this.actor.subscribe({
      next: (snapshot) => {
        if (snapshot.status === 'done' || (snapshot.value === 'cold' && this.#runtime === undefined && this.#wasLive)) {
          this.#retire()
        }
      },
      error: (error) => this.#log('error', `thread machine failed: ${String(error)}`),
    })
    this.actor.start()
  }

  /** The UI bridge the runtime is built with; it must exist before the runtime does. */
  readonly ui: UiBridge = {
    ask: (request) => this.#ask(request),
    askUser: (question, options) => this.#askUser(question, options),
    // pi's fire-and-forget calls: facts on the feed. Extensions set them from session_start too, so
    // they are taken before the runtime is attached — and dropped once its release has begun.
    notify: (message, level) => this.#show({ type: 'notify', message, level }),
    setStatus: (key, text) => {
      if (!sameEntry(this.#feed.view.statusItems, key, text)) this.#show({ type: 'status-item', key, ...(text !== undefined ? { text } : {}) })
    },
    setWidget: (key, lines) => {
      if (!sameEntry(this.#feed.view.widgets, key, lines)) this.#show({ type: 'widget', key, ...(lines !== undefined ? { lines } : {}) })
    },
    setWorking: (working) => {
      if (JSON.stringify(this.#feed.view.working) !== JSON.stringify(working)) this.#show({ type: 'working', ...working })
    },
    setTitle: (title) => {
      const clean = title.replace(/\s+/g, ' ').trim().slice(0, MAX_TITLE)
      if (clean) this.#show({ type: 'title', title: clean })
    },
    setEditorText: (text) => {
      this.#editorText = text
      this.#show({ type: 'editor-text', text })
    },
    editorText: () => this.#editorText,
  }

  #show(observation: ObservationInput): void {
    if (this.#releasing) return
    this.#feed.append(observation)
  }

  /** Attaches the built runtime: the thread is live from here on. */
  attach(runtime: AgentRuntime): void {
    this.#runtime = runtime
    this.#wasLive = true
    this.#unsubscribe = runtime.subscribe((event) => this.#onRuntimeEvent(event))
    this.actor.send({ type: 'LIVE', run: runtime.lastRun() })
  }

  get live(): boolean {
    const value = this.actor.getSnapshot().value
    return this.actor.getSnapshot().status === 'active' && value !== 'cold'
  }

  /** Resolves once the runtime is fully released (after an idle timeout or a dispose). */
  get released(): Promise<void> {
    return this.#disposing
  }

  get run(): number {
    return this.actor.getSnapshot().context.run
  }

  /** A run is in flight (running or stopping): the machine's state, not a flag of ours. */
  get busy(): boolean {
    const snapshot = this.actor.getSnapshot()
    return snapshot.status === 'active' && snapshot.value !== 'idle' && snapshot.value !== 'cold'
  }

  /** A tab's draft as the user types it; the next getEditorText() of an extension reads it. */
  reportDraft(text: string): void {
    this.#editorText = text
  }

  /** What pi handles itself in a prompt (none before the runtime is attached). */
  commands(): CommandInfo[] {
    return this.#runtime?.commands() ?? []
  }

  /** pi's compaction; the registry calls it only while idle. */
  async compact(instructions?: string): Promise<void> {
    await this.#runtime?.compact(instructions)
  }

  /** A model or thinking level for the runs to come; the registry calls it only while idle. */
  async configure(change: { model?: string; thinkingLevel?: ThinkingLevel }): Promise<void> {
    await this.#runtime?.configure(change)
  }

  /** Resolves with the machine's answer: admitted now, admitted once a pending stop settles, or refused. */
  prompt(request: Omit<PromptRequest, 'messageId'>): Promise<PromptOutcome> {
    const messageId = randomUUID()
    return this.#request(messageId, { type: 'PROMPT', messageId, ...request }, { kind: 'rejected', reason: 'disposed' }, (reply) => {
      if (reply.type === 'prompt.admitted') return { kind: 'admitted', messageId, run: reply.run, queued: reply.queued }
      if (reply.type === 'prompt.refused' && reply.reason !== 'disposed') return { kind: reply.reason }
      return { kind: 'rejected', reason: (reply.type === 'prompt.refused' && reply.closing) || 'disposed' }
    })
  }

  abort(run?: number): Promise<AbortOutcome> {
    const replyTo = randomUUID()
    return this.#request(replyTo, { type: 'ABORT', run, replyTo }, { kind: 'not-live' }, (reply) => {
      if (reply.type === 'abort.answered') return { kind: 'stopped', restored: reply.restored }
      return reply.type === 'abort.refused' ? { kind: reply.reason } : { kind: 'not-live' }
    })
  }

  /** An answer as it arrived (`cancelled: true` withdraws the question); the question's own dialog machine decides. */
  answer(dialogId: string, payload: Record<string, unknown>): Promise<AnswerOutcome> {
    const replyTo = randomUUID()
    const { cancelled, ...answer } = payload
    const event =
      cancelled === true
        ? ({ type: 'DIALOG.CANCEL', dialogId, replyTo } as const)
        : ({ type: 'DIALOG.ANSWER', dialogId, answer: cancelled === undefined ? answer : payload, replyTo } as const)
    return this.#request(replyTo, event, { kind: 'unknown' }, (reply) => {
      if (reply.type === 'dialog.answered') return { kind: 'answered' }
      return reply.type === 'dialog.refused' ? { kind: 'refused', refusal: reply.refusal } : { kind: 'unknown' }
    })
  }

  /** The one way a request gets the machine's answer: send it with a correlation id, wait for the reply carrying it. */
  #request<R>(replyTo: string, event: ThreadEvent, ifGone: R, read: (reply: Reply) => R): Promise<R> {
    if (this.actor.getSnapshot().status !== 'active') return Promise.resolve(ifGone)
    return new Promise((resolve) => {
      this.#replies.set(replyTo, { deliver: (reply) => resolve(read(reply)), gone: () => resolve(ifGone) })
      this.actor.send(event)
    })
  }

  #onReply(reply: Reply): void {
    const id = 'messageId' in reply ? reply.messageId : reply.replyTo
    const pending = this.#replies.get(id)
    if (!pending) return
    this.#replies.delete(id)
    pending.deliver(reply)
  }

  /** Stops the run, settles every open dialog with `dialogOutcome`, reports queued prompts rejected, releases the runtime. */
  async dispose(reason: string, dialogOutcome: 'cancelled' | 'aborted'): Promise<void> {
    if (this.actor.getSnapshot().status === 'active') this.actor.send({ type: 'DISPOSE', reason, dialogOutcome })
    await this.#disposing
  }

  #machine() {
    const feed = this.#feed
    return threadMachine.provide({
      actions: {
        publishStatus: (_, status) => void feed.append({ type: 'status', ...status }),
        startRun: (_, { prompt, run }) => this.#runtime?.prompt({ messageId: prompt.messageId, text: prompt.text }, run),
        queuePrompt: (_, { prompt }) => {
          const queued = { messageId: prompt.messageId, text: prompt.text }
          if (prompt.deliverAs === 'followUp') this.#runtime?.followUp(queued)
          else this.#runtime?.steer(queued)
        },
        clearQueue: ({ self }) => {
          try {
            const cleared = this.#runtime?.clearQueue() ?? { steering: [], followUp: [] }
            self.send({
              type: 'QUEUE_CLEARED',
              steering: cleared.steering.map((p) => p.text),
              followUp: cleared.followUp.map((p) => p.text),
            })
          } catch (error) {
            self.send({ type: 'QUEUE_CLEAR_FAILED', message: errorText(error) })
          }
        },
        recordError: (_, { message }) => {
          this.#log('error', message)
          feed.append({ type: 'error', message })
        },
        tellRuntimeAbort: () => {
          this.#runtime?.abort().catch((error) => this.#log('error', `abort failed: ${errorText(error)}`))
        },
        recordSettled: (_, settled) => void feed.append({ type: 'settled', ...settled }),
        armIdleTimer: ({ self }) => {
          clearTimeout(this.#idleTimer)
          this.#idleTimer = setTimeout(() => self.send({ type: 'IDLE_TIMEOUT' }), this.#options.idleMs)
          this.#idleTimer.unref()
        },
        disarmIdleTimer: () => clearTimeout(this.#idleTimer),
        disposeRuntime: (_, { reason }) => {
          this.#disposing = this.#releaseRuntime(reason)
        },
        rejectPrompt: (_, { messageId, reason }) => {
          feed.append({ type: 'prompt-rejected', messageId, reason })
        },
      },
      actors: {
        dialog: dialogMachine.provide({
          actions: {
            showRequest: ({ context, self }) => {
              // An open question replies to the answers that name it (answered or refused) itself.
              self.on('*', (reply) => this.#onReply(reply as DialogEmitted))
              feed.append({
                type: 'extension-ui-request',
                id: context.id,
                blocking: true,
                dialog: context.spec,
                origin: context.origin,
                ...(context.expiresAt !== undefined ? { expiresAt: context.expiresAt } : {}),
              })
            },
            watch: ({ context }) => this.#watch(context.id, context.expiresAt),
            unwatch: ({ context }) => this.#unwatch(context.id),
            recordSettle: ({ context }) => {
              feed.append({ type: 'dialog-settled', id: context.id, outcome: context.outcome as DialogOutcome })
            },
            resolveExtension: ({ context }) => this.#resolveParked(context.id, { outcome: context.outcome!, answer: context.answer }),
            resolveWithdrawn: ({ context }) => this.#resolveParked(context.id, { outcome: 'refused' }),
          },
        }),
        askQueue: askQueueMachine.provide({
          actions: {
            // Opening the card sends ASK to the thread; do it after this action, not inside it.
            show: ({ self }, { askId }) => queueMicrotask(() => void this.#showAsk(askId, (event) => self.send(event))),
            resolve: (_, { askId, status }) => this.#resolveAsk(askId, status),
          },
        }),
      },
    })
  }

  #onRuntimeEvent(event: RuntimeEvent): void {
    switch (event.type) {
      case 'settled':
        this.actor.send({ type: 'SETTLED', aborted: event.aborted, unclaimed: event.unclaimed })
        return
      case 'user-message':
        this.#feed.append({ ...event, run: this.run })
        return
      default:
        this.#feed.append(event)
    }
  }

  // ——— dialogs: parked here, decided by the dialog machines ———

  #ask(request: DialogRequest): Promise<DialogResolution> {
    if (this.actor.getSnapshot().status !== 'active') return Promise.resolve({ outcome: 'refused' })
    const dialogId = randomUUID()
    return new Promise((resolve) => {
      this.#parked.set(dialogId, { request, resolve })
      const { timeoutMs } = request
      const expiresAt = timeoutMs !== undefined && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS ? Date.now() + timeoutMs : undefined
      this.actor.send({
        type: 'ASK',
        dialogId,
        spec: request.spec,
        origin: request.origin,
        expiresAt,
        signalAborted: request.signal?.aborted ?? false,
      })
    })
  }

  #watch(dialogId: string, expiresAt: number | undefined): void {
    const parked = this.#parked.get(dialogId)
    if (!parked) return
    if (expiresAt !== undefined) {
      parked.timer = setTimeout(() => this.actor.send({ type: 'DIALOG.TIMEOUT', dialogId }), Math.max(0, expiresAt - Date.now()))
    }
    const signal = parked.request.signal
    if (signal) {
      const onAbort = () => this.actor.send({ type: 'DIALOG.SIGNAL', dialogId })
      signal.addEventListener('abort', onAbort, { once: true })
      parked.unhook = () => signal.removeEventListener('abort', onAbort)
    }
  }

  #unwatch(dialogId: string): void {
    const parked = this.#parked.get(dialogId)
    clearTimeout(parked?.timer)
    parked?.unhook?.()
  }

  #resolveParked(dialogId: string, resolution: DialogResolution): void {
    const parked = this.#parked.get(dialogId)
    this.#parked.delete(dialogId)
    parked?.resolve(resolution)
  }

  // ——— ask_user_question: one question at a time, through the ask-queue ———

  #askQueue() {
    return this.actor.getSnapshot().children.askQueue
  }

  #askUser(question: WaitingAsk['question'], options: WaitingAsk['options']): Promise<AskUserResult> {
    const queue = this.#askQueue()
    if (!queue || this.actor.getSnapshot().status !== 'active') return Promise.resolve({ status: 'unavailable' })
    const askId = randomUUID()
    return new Promise((resolve) => {
      const onAbort = () => this.#askQueue()?.send({ type: 'SIGNAL', askId })
      options.signal?.addEventListener('abort', onAbort, { once: true })
      this.#asks.set(askId, { question, options, resolve, unhook: () => options.signal?.removeEventListener('abort', onAbort) })
      queue.send({ type: 'ASK', askId })
    })
  }

  async #showAsk(askId: string, send: (event: { type: 'ANSWERED' | 'SKIPPED' | 'CANCELLED'; askId: string }) => void): Promise<void> {
    const ask = this.#asks.get(askId)
    if (!ask) return send({ type: 'CANCELLED', askId })
    const resolution = await this.#ask({
      spec: { method: 'questionnaire', title: ask.question.prompt, questions: [ask.question] },
      origin: { kind: 'tool', name: 'ask_user_question', ...(ask.options.toolCallId ? { toolCallId: ask.options.toolCallId } : {}) },
      signal: ask.options.signal,
    })
    // Disposed while the card was open: the ask was already resolved and its queue is gone.
    if (!this.#asks.has(askId)) return
    const answer = resolution.answer && 'answers' in resolution.answer ? resolution.answer.answers[0] : undefined
    if (resolution.outcome === 'answered' && answer && !answer.skipped) {
      ask.answer = { status: 'answered', ...pick(answer) }
      send({ type: 'ANSWERED', askId })
    } else if (resolution.outcome === 'answered') {
      send({ type: 'SKIPPED', askId })
    } else {
      send({ type: 'CANCELLED', askId })
    }
  }

  #resolveAsk(askId: string, status: AskStatus): void {
    const ask = this.#asks.get(askId)
    this.#asks.delete(askId)
    if (!ask) return
    ask.unhook()
    ask.resolve(status === 'answered' && ask.answer ? ask.answer : { status })
  }

  /** The thread is going away with its ask-queue: every waiting ask_user_question call hears `cancelled`. */
  #cancelAsks(): void {
    for (const askId of [...this.#asks.keys()]) this.#resolveAsk(askId, 'cancelled')
  }

  // ——— release ———

  async #releaseRuntime(reason: string): Promise<void> {
    const runtime = this.#runtime
    this.#runtime = undefined
    this.#releasing = true
    clearTimeout(this.#idleTimer)
    this.#cancelAsks()
    if (!runtime) return
    try {
      // Queued prompts never ride into a later run and are never dropped silently.
      const cleared = runtime.clearQueue()
      for (const p of [...cleared.steering, ...cleared.followUp]) {
        this.#feed.append({ type: 'prompt-rejected', messageId: p.messageId, reason })
      }
    } catch (error) {
      this.#feed.append({ type: 'error', message: `the queue could not be cleared: ${errorText(error)}` })
    }
    // Nothing the released runtime says afterwards belongs on the feed: the thread has moved on.
    this.#unsubscribe?.()
    this.#unsubscribe = undefined
    try {
      const stopped = runtime.abort()
      // Open dialogs settle and asks are cancelled, so a tool's wait ends and the abort resolves;
      // a tool that ignores its signal must still not hold the release for ever.
      await Promise.race([stopped, delay(5000)])
      await runtime.dispose()
    } catch (error) {
      this.#log('warn', `runtime release: ${errorText(error)}`)
    }
  }

  #retire(): void {
    if (this.#retired) return
    this.#retired = true
    // The machine replied to every request it took; one that reached it in the same instant as the
    // thread went away still hears back.
    for (const [id, pending] of [...this.#replies]) {
      this.#replies.delete(id)
      pending.gone()
    }
    queueMicrotask(() => {
      this.#subscription?.unsubscribe()
      this.#options.onRetired(this)
    })
  }

  #log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void {
    this.#options.log?.(level, `[${this.threadId}] ${message}`)
  }
}

function pick(answer: { value?: string; values?: string[]; other?: string }) {
  return {
    ...(answer.value !== undefined ? { value: answer.value } : {}),
    ...(answer.values !== undefined ? { values: answer.values } : {}),
    ...(answer.other !== undefined ? { other: answer.other } : {}),
  }
}


function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
