/**
 * The AgentRuntime port implemented on pi's AgentSession (pi 0.73.1), one session per thread.
 *
 * Two things pi does not give us and this file adds:
 * - ids: pi's queues hold bare texts, so a FIFO mirror of {messageId, text} recovers the host's
 *   id when pi delivers a queued message (matched by text, oldest first — pi's own rule);
 * - the end of a run: pi 0.73.1 has no settle event, and `prompt()` may resolve before the
 *   subscriber sees `agent_end` (pi-runtime.md §2.3). `settled` is emitted only when prompt() has
 *   resolved AND every `agent_end` the agent emitted (counted on the agent itself, synchronously)
 *   has also reached the session subscriber.
 */
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Model } from '@mariozechner/pi-ai'
import {
  AuthStorage,
  createAgentSession,
  DefaultResourceLoader,
  ModelRegistry,
  SessionManager,
  SettingsManager,
  type AgentSession,
  type AgentSessionEvent,
  type ExtensionFactory,
} from '@mariozechner/pi-coding-agent'
import type { TranscriptEntry } from '../schemas/index.js'
import type {
  AgentRuntime,
  ClearedQueue,
  QueuedPrompt,
  RuntimeEvent,
  RuntimeFactory,
  RuntimeListener,
  RuntimeOptions,
  UiBridge,
} from './port.js'
import { createDemoModel, DEMO_PROVIDER } from './demo-model.js'
import { consoleLogger, createExtensionUi, errorText, type RuntimeLogger } from './extension-ui.js'
import { EventMapper } from './map-events.js'
import { foldTranscript, IDS_ENTRY, lastRun, readSessionFile, RUN_ENTRY, type IdsMarker } from './transcript.js'
import { askUserQuestionExtension } from './tools/ask-user-question.js'
import { bashPermissionExtension } from './tools/bash-permission.js'
import { uiDialogExtension } from './tools/ui-dialog.js'

/** A model ready for a session, with what it needs to pass pi's auth gate and to clean up. */
export interface ResolvedModel {
  model: Model<any>
  /** A key set on the session's in-memory auth storage (the demo's faux provider needs one). */
  runtimeKey?: { provider: string; key: string }
  thinkingLevel?: 'off'
  dispose?(): void
}

export interface PiRuntimeFactoryOptions {
  dataDir: string
  /** The demo model's pause between streamed chunks (ms). */
  demoDelayMs?: number
  /** Where pi's file tools and bash run. Defaults to the process's working directory. */
  cwd?: string
  log?: RuntimeLogger
  /** Test seam: resolve a model name yourself (return undefined to fall back to the built-in rules). */
  resolveModel?: (name: string) => ResolvedModel | undefined
  /** Test seam: extra extensions for every session, built per session with its bridge. */
  extraExtensions?: (ui: UiBridge) => ExtensionFactory[]
}

const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/

/** Where a thread's pi session file lives: one directory per thread, one fixed file name. */
export function sessionPaths(dataDir: string, threadId: string): { dir: string; file: string } {
  const key = SAFE_ID.test(threadId) ? threadId : `x-${Buffer.from(threadId).toString('base64url')}`
  const dir = join(dataDir, 'sessions', key)
  return { dir, file: join(dir, 'session.jsonl') }
}

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
  promptDone: boolean
  endsEmitted: number
  endsDelivered: number
  aborted: boolean
}

export class PiRuntime implements AgentRuntime {
  private readonly listeners = new Set<RuntimeListener>()
  private readonly steering: QueuedPrompt[] = []
  private readonly followUps: QueuedPrompt[] = []
  private readonly mapper: EventMapper
  private readonly unsubscribe: Array<() => void> = []
  private run: Run | undefined
  private runNumber: number
  private disposed = false

  constructor(
    private readonly session: AgentSession,
    private readonly log: RuntimeLogger,
    private readonly cleanup: () => void = () => {},
  ) {
    this.runNumber = lastRun(session.sessionManager.getBranch())
    this.mapper = new EventMapper({ userMessageId: (text) => this.userMessageId(text) })
    // Counted on the agent itself: its listeners run synchronously when the event happens,
    // unlike session subscribers, which are fed through pi's event queue later.
    this.unsubscribe.push(
      session.agent.subscribe((event) => {
        if (event.type === 'agent_end' && this.run) this.run.endsEmitted++
      }),
    )
    this.unsubscribe.push(session.subscribe((event) => this.onSessionEvent(event)))
  }

  prompt(prompt: QueuedPrompt): void {
    if (this.run) {
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: 'A run is already in progress.' })
      return
    }
    const run: Run = {
      number: ++this.runNumber,
      prompt,
      promptDelivered: false,
      promptDone: false,
      endsEmitted: 0,
      endsDelivered: 0,
      aborted: false,
    }
    this.run = run
    this.append(RUN_ENTRY, { run: run.number })
    this.session.prompt(prompt.text, { expandPromptTemplates: false }).then(
      () => this.promptDone(run),
      (error: unknown) => {
        this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: errorText(error) })
        this.promptDone(run)
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
    this.forgetQueued()
    return taken
  }

  /** pi's queue is empty now; whatever the mirrors still hold is stale and must not lend its id to a later prompt. */
  private forgetQueued(): void {
    this.steering.length = 0
    this.followUps.length = 0
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

  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    // Raise the signal but do not wait: a tool parked on a dialog nobody will answer must not hang shutdown.
    if (this.session.isStreaming) this.session.agent.abort()
    for (const off of this.unsubscribe) off()
    this.listeners.clear()
    this.session.dispose()
    this.cleanup()
  }

  /** For failures pi reports outside the event stream (extension errors). */
  reportError(message: string): void {
    this.emit({ type: 'error', message })
  }

  private enqueue(prompt: QueuedPrompt, mirror: QueuedPrompt[], send: (text: string) => Promise<void>): void {
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
    send(prompt.text).catch((error: unknown) => {
      const i = mirror.indexOf(prompt)
      if (i !== -1) mirror.splice(i, 1)
      this.emit({ type: 'prompt-rejected', messageId: prompt.messageId, reason: errorText(error) })
    })
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
      if (mapped.type === 'user-message') this.mark({ messageId: mapped.messageId, run: this.run?.number ?? this.runNumber })
      // Written before pi appends the message (subscribers run first), so the marker precedes it.
      if (mapped.type === 'assistant-end') this.mark({ messageId: mapped.messageId })
      this.emit(mapped)
    }
    if (event.type === 'agent_end' && this.run) {
      this.run.endsDelivered++
      this.maybeSettle(this.run)
    }
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

  private promptDone(run: Run): void {
    run.promptDone = true
    this.maybeSettle(run)
  }

  private maybeSettle(run: Run): void {
    if (this.run !== run || !run.promptDone || run.endsDelivered < run.endsEmitted) return
    this.run = undefined
    this.emit({ type: 'settled', aborted: run.aborted, unclaimed: this.takeUnclaimed() })
  }

  /** Whatever is still queued when the run is over never ran; it leaves pi's queue with the settle. */
  private takeUnclaimed(): QueuedPrompt[] {
    if (this.session.pendingMessageCount === 0 && !this.session.agent.hasQueuedMessages()) {
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

/** `demo`, or `<provider>/<model-id>` from pi-ai's catalogue with its key from the environment. */
function resolveModel(
  name: string,
  options: PiRuntimeFactoryOptions,
  modelRegistry: ModelRegistry,
): ResolvedModel {
  const custom = options.resolveModel?.(name)
  if (custom) return custom
  if (name === 'demo') {
    const demo = createDemoModel({ delayMs: options.demoDelayMs ?? 20 })
    return {
      model: demo.model,
      runtimeKey: { provider: DEMO_PROVIDER, key: 'demo' },
      thinkingLevel: 'off',
      dispose: demo.dispose,
    }
  }
  const slash = name.indexOf('/')
  const model = slash > 0 ? modelRegistry.find(name.slice(0, slash), name.slice(slash + 1)) : undefined
  if (!model) {
    throw new Error(`Unknown model '${name}': use 'demo' or '<provider>/<model-id>' of a model pi knows.`)
  }
  if (!modelRegistry.hasConfiguredAuth(model)) {
    throw new Error(`Model '${name}' needs an API key for provider '${model.provider}' in the environment.`)
  }
  return { model }
}

export function createPiRuntimeFactory(options: PiRuntimeFactoryOptions): RuntimeFactory {
  const log = options.log ?? consoleLogger
  const cwd = options.cwd ?? process.cwd()
  const agentDir = join(options.dataDir, 'agent')

  return {
    async create({ threadId, model: modelName, ui }: RuntimeOptions): Promise<AgentRuntime> {
      const authStorage = AuthStorage.inMemory()
      const modelRegistry = ModelRegistry.inMemory(authStorage)
      const resolved = resolveModel(modelName, options, modelRegistry)
      try {
        if (resolved.runtimeKey) authStorage.setRuntimeApiKey(resolved.runtimeKey.provider, resolved.runtimeKey.key)
        const settingsManager = SettingsManager.inMemory()
        // Built per session: each tool closes over this thread's bridge.
        const extensionFactories: ExtensionFactory[] = [
          askUserQuestionExtension(ui, log),
          uiDialogExtension(ui, log),
          bashPermissionExtension(),
          ...(options.extraExtensions?.(ui) ?? []),
        ]
        const resourceLoader = new DefaultResourceLoader({
          cwd,
          agentDir,
          settingsManager,
          noExtensions: true,
          noSkills: true,
          noPromptTemplates: true,
          noThemes: true,
          noContextFiles: true,
          extensionFactories,
        })
        await resourceLoader.reload()
        const paths = sessionPaths(options.dataDir, threadId)
        mkdirSync(paths.dir, { recursive: true })
        // open() on a missing file starts a new session that will be written to exactly this path.
        const sessionManager = SessionManager.open(paths.file, paths.dir, cwd)
        const { session } = await createAgentSession({
          cwd,
          agentDir,
          model: resolved.model,
          ...(resolved.thinkingLevel ? { thinkingLevel: resolved.thinkingLevel } : {}),
          authStorage,
          modelRegistry,
          settingsManager,
          resourceLoader,
          sessionManager,
        })
        const runtime = new PiRuntime(session, log, () => resolved.dispose?.())
        await session.bindExtensions({
          uiContext: createExtensionUi(ui, log),
          onError: (e) => {
            const message = `extension ${e.extensionPath} failed on ${e.event}: ${e.error}`
            log.error(message)
            runtime.reportError(message)
          },
        })
        return runtime
      } catch (error) {
        resolved.dispose?.()
        throw error
      }
    },

    async readTranscript(threadId: string): Promise<TranscriptEntry[]> {
      return foldTranscript(await readSessionFile(sessionPaths(options.dataDir, threadId).file))
    },

    async remove(threadId: string): Promise<void> {
      await rm(sessionPaths(options.dataDir, threadId).dir, { recursive: true, force: true })
    },
  }
}
