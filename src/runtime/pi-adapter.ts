/**
 * The AgentRuntime port implemented on pi 1.x's AgentSession, one session per thread.
 *
 * What this file adds to pi:
 * - ids: pi's queues hold bare texts, so a FIFO mirror of {messageId, text} recovers the host's
 *   id when pi delivers a queued message (matched by text, oldest first — pi's own rule);
 * - one `settled` per prompt: pi's `agent_settled` when the prompt started a run (pi delivers it to
 *   subscribers after the run's last event and before `prompt()` resolves), else `prompt()`'s own
 *   end — a refusal, or an extension that handled the input.
 */
import { randomUUID } from 'node:crypto'
import type { AgentSession, AgentSessionEvent } from '@earendil-works/pi-coding-agent'
import type { CommandInfo, ThinkingLevel, TranscriptEntry } from '../schemas/index.js'
import type { AgentRuntime, ClearedQueue, QueuedPrompt, RuntimeEvent, RuntimeListener } from './port.js'
import type { PiModels } from './pi-models.js'
import { errorText, type RuntimeLogger } from './extension-ui.js'
import { EventMapper } from './map-events.js'
import { skipUnheardEvents } from './unheard-events.js'
import { foldTranscript, IDS_ENTRY, lastRun, RUN_ENTRY, type IdsMarker } from './transcript.js'

type QueuedInputDisposition = Awaited<ReturnType<AgentSession['steer']>>

/**
 * Takes the prompts whose texts pi handed back out of the mirror, oldest match first. A text the
 * mirror does not know (it should not happen) still comes back, with a fresh id, so nothing is lost.
 */
export function takeQueued(mirror: QueuedPrompt[], texts: readonly string[]): QueuedPrompt[] {
  return texts.map((text) => {
    const i = mirror.findIndex((p) => p.text === text)
    return i === -1 ? { messageId: randomUUID(), text } : mirror.splice(i, 1)[0]
  })
}

interface Run {
  number: number
  prompt: QueuedPrompt
  promptDelivered: boolean
  aborted: boolean
}

export class PiRuntime implements AgentRuntime {
  private readonly listeners = new Set<RuntimeListener>()
  private readonly steering: QueuedPrompt[] = []
  private readonly followUps: QueuedPrompt[] = []
  /** Sent to pi but not yet in its queue: pi 1.x runs extensions' input handlers before it queues. */
  private readonly sending = new Set<QueuedPrompt>()
  /** Handed back by a clearQueue while still being sent; if pi queues one after all, it is taken out again. */
  private readonly withdrawn = new Set<QueuedPrompt>()
  private readonly mapper: EventMapper
  private readonly unsubscribe: Array<() => void> = []
  private run: Run | undefined
  private disposed = false

  constructor(
    private readonly session: AgentSession,
    private readonly log: RuntimeLogger,
    private readonly models?: PiModels,
    /** Asked before the first run when pi needs a human to decide project trust (see project-trust.ts). */
    private pendingTrust?: () => Promise<void>,
  ) {
    this.mapper = new EventMapper({ userMessageId: (text) => this.userMessageId(text) })
    this.unsubscribe.push(session.subscribe((event) => this.onSessionEvent(event)))
  }

  lastRun(): number {
    return lastRun(this.session.sessionManager.getBranch())
  }

  prompt(prompt: QueuedPrompt, runNumber: number): void {
    if (this.run) {
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'A run is already in progress.' })
      return
    }
    const run: Run = { number: runNumber, prompt, promptDelivered: false, aborted: false }
    this.run = run
    this.append(RUN_ENTRY, { run: run.number })
    const trust = this.pendingTrust
    if (!trust) return this.start(run)
    // The trust question is part of the first run: the thread is busy, and Stop settles it like any question.
    this.pendingTrust = undefined
    trust().then(
      () => (run.aborted ? this.settle(run, true) : this.start(run)),
      (error: unknown) => {
        this.log.error(`project trust failed: ${errorText(error)}`)
        this.start(run)
      },
    )
  }

  private start(run: Run): void {
    // pi tells subscribers `agent_settled` before its agent is idle, and the host may start the next
    // run from inside that callback (a prompt that waited on a stop): sent then, pi would take it as a
    // message of the finishing run and resolve at once. So a run starts once pi is idle.
    void Promise.all([this.session.agent.waitForIdle(), this.session.waitForIdle()]).then(() =>
      setImmediate(() => (this.run === run ? this.send(run) : undefined)),
    )
  }

  private send(run: Run): void {
    const { prompt } = run
    // Before each run: a reload may have given the session a new runner.
    skipUnheardEvents(this.session.extensionRunner)
    // pi's own input path: extension commands, skills and prompt templates are handled as in its CLI.
    this.session
      .prompt(prompt.text, {
        preflightResult: (disposition) => {
          if (disposition === 'handled') this.emit({ type: 'prompt-handled', messageId: prompt.messageId, text: prompt.text })
        },
      })
      .then(
        () => this.settle(run, false),
        (error: unknown) => {
          this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: errorText(error) })
          this.settle(run, false)
        },
      )
  }

  steer(prompt: QueuedPrompt): void {
    this.enqueue(prompt, this.steering, (text) => this.session.steer(text))
  }

  followUp(prompt: QueuedPrompt): void {
    this.enqueue(prompt, this.followUps, (text) => this.session.followUp(text))
  }

  clearQueue(): ClearedQueue {
    const cleared = this.session.clearQueue()
    const taken = { steering: takeQueued(this.steering, cleared.steering), followUp: takeQueued(this.followUps, cleared.followUp) }
    // Accepted but still on their way into pi's queue: they are the caller's too.
    for (const [mirror, out] of [
      [this.steering, taken.steering],
      [this.followUps, taken.followUp],
    ] as const) {
      for (const p of mirror) {
        if (!this.sending.has(p)) continue
        out.push(p)
        this.withdrawn.add(p)
      }
    }
    this.forgetQueued()
    return taken
  }

  /** pi's queue is empty now; whatever the mirrors still hold is stale and must not lend its id to a later prompt. */
  private forgetQueued(): void {
    this.steering.length = 0
    this.followUps.length = 0
    this.sending.clear()
  }

  abort(): Promise<void> {
    if (this.run) this.run.aborted = true
    // Deliberately no clearQueue here: the host clears (and restores) the queue before it aborts.
    return this.session.abort()
  }

  subscribe(listener: RuntimeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  transcript(): TranscriptEntry[] {
    return foldTranscript(this.session.sessionManager.getBranch())
  }

  commands(): CommandInfo[] {
    const extension = this.session.extensionRunner
      .getRegisteredCommands()
      .map((c): CommandInfo => ({ name: c.invocationName, description: c.description ?? '', kind: 'extension' }))
    const templates = this.session.promptTemplates.map((t): CommandInfo => ({ name: t.name, description: t.description, kind: 'template' }))
    const skills = this.session.resourceLoader
      .getSkills()
      .skills.map((s): CommandInfo => ({ name: `skill:${s.name}`, description: s.description, kind: 'skill' }))
    return [...extension, ...templates, ...skills]
  }

  async compact(instructions?: string): Promise<void> {
    await this.session.compact(instructions || undefined)
  }

  async configure(change: { model?: string; thinkingLevel?: ThinkingLevel }): Promise<void> {
    if (change.model !== undefined) {
      const model = this.models?.find(change.model)
      if (!model) throw new Error(`Unknown model '${change.model}'.`)
      // Session-only, as pi's /model without persistence: the user's global default is untouched.
      await this.session.setModel(model)
    }
    if (change.thinkingLevel !== undefined) this.session.setThinkingLevel(change.thinkingLevel)
  }

  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    // Raise the signal but do not wait: a tool parked on a dialog nobody will answer must not hang shutdown.
    if (this.session.isStreaming) this.session.agent.abort()
    for (const off of this.unsubscribe) off()
    this.listeners.clear()
    this.session.dispose()
  }

  /** For failures pi reports outside the event stream (extension errors). */
  reportError(message: string): void {
    this.emit({ type: 'error', message })
  }

  private enqueue(prompt: QueuedPrompt, mirror: QueuedPrompt[], send: (text: string) => Promise<QueuedInputDisposition>): void {
    if (!this.run) {
      // Between runs a queued text would silently ride into the next one; refuse it instead.
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'No run is in progress to queue into.' })
      return
    }
    if (this.run.aborted) {
      // pi would still deliver a steer into the stopping run (pi-runtime.md §2.2); refuse it instead.
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'The run is stopping.' })
      return
    }
    mirror.push(prompt)
    this.sending.add(prompt)
    const unmirror = () => {
      const i = mirror.indexOf(prompt)
      if (i !== -1) mirror.splice(i, 1)
    }
    send(prompt.text).then(
      (disposition) => {
        this.sending.delete(prompt)
        if (this.withdrawn.delete(prompt)) {
          if (disposition === 'queued') this.dropStray()
          return
        }
        if (disposition !== 'handled') return
        unmirror()
        this.emit({ type: 'prompt-handled', messageId: prompt.messageId, text: prompt.text })
      },
      (error: unknown) => {
        this.sending.delete(prompt)
        unmirror()
        if (this.withdrawn.delete(prompt)) return
        this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: errorText(error) })
      },
    )
  }

  /**
   * A prompt already handed back reached pi's queue after all. pi cannot drop one entry, so the
   * queue is cleared; anything else that was in it (queued since, rarely) is refused out loud, never
   * left to run twice or vanish.
   */
  private dropStray(): void {
    this.session.clearQueue()
    for (const p of [...this.steering, ...this.followUps]) {
      if (this.sending.has(p)) continue
      this.emit({ type: 'prompt-rejected', messageId: p.messageId, reason: 'Withdrawn while the queue was cleared; send it again.' })
    }
    for (const mirror of [this.steering, this.followUps]) {
      const keep = mirror.filter((p) => this.sending.has(p))
      mirror.length = 0
      mirror.push(...keep)
    }
  }

  /** pi is delivering a user message: the run's own prompt first, then queued ones by text, oldest first. */
  private userMessageId(text: string): string {
    const run = this.run
    if (run && !run.promptDelivered && text === run.prompt.text) {
      run.promptDelivered = true
      return run.prompt.messageId
    }
    for (const mirror of [this.steering, this.followUps]) {
      const i = mirror.findIndex((p) => p.text === text)
      if (i !== -1) return mirror.splice(i, 1)[0].messageId
    }
    if (run && !run.promptDelivered) {
      // An input handler rewrote the prompt's text; it is still this run's prompt.
      run.promptDelivered = true
      return run.prompt.messageId
    }
    return randomUUID()
  }

  private onSessionEvent(event: AgentSessionEvent): void {
    for (const mapped of this.mapper.map(event)) {
      // A user message outside a run (an extension's own sendUserMessage) keeps no run number.
      if (mapped.type === 'user-message') this.mark({ messageId: mapped.messageId, ...(this.run ? { run: this.run.number } : {}) })
      // Written before pi appends the message (subscribers run first), so the marker precedes it.
      if (mapped.type === 'assistant-end') this.mark({ messageId: mapped.messageId })
      this.emit(mapped)
    }
    if (event.type === 'agent_settled' && this.run) this.settle(this.run, event.aborted)
  }

  private mark(marker: IdsMarker): void {
    this.append(IDS_ENTRY, marker)
  }

  private append(customType: string, data: object): void {
    try {
      this.session.sessionManager.appendCustomEntry(customType, data)
    } catch (error) {
      this.log.warn(`could not record ${customType}: ${errorText(error)}`)
    }
  }

  /** Once per run: whichever of pi's `agent_settled` and `prompt()`'s end comes first (see the header). */
  private settle(run: Run, aborted: boolean): void {
    if (this.run !== run) return
    this.run = undefined
    this.emit({ type: 'settled', aborted: run.aborted || aborted, unclaimed: this.takeUnclaimed() })
  }

  /** Whatever is still queued when the run is over never ran; it leaves pi's queue with the settle. */
  private takeUnclaimed(): QueuedPrompt[] {
    if (this.sending.size === 0 && this.session.pendingMessageCount === 0 && !this.session.agent.hasQueuedMessages()) {
      this.forgetQueued()
      return []
    }
    const cleared = this.clearQueue()
    return [...cleared.steering, ...cleared.followUp]
  }

  private emit(event: RuntimeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (error) {
        this.log.error(`runtime listener failed on ${event.type}: ${errorText(error)}`)
      }
    }
  }
}
