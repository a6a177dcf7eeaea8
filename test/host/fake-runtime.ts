/**
 * A scripted runtime for host tests: it records what the host told it and lets the test decide
 * when a run settles. Tests of the real pi runtime live in test/runtime and test/server.
 */
import type { RegistryOptions } from '../../src/host/thread-registry.js'
import { Workspaces } from '../../src/host/workspaces.js'
import {
  SessionDamaged,
  type AgentRuntime,
  type ClearedQueue,
  type ForkRequest,
  type ForkResult,
  type ModelCatalog,
  type PersistedFacts,
  type ModelCheck,
  type QueuedPrompt,
  type RuntimeEvent,
  type RuntimeFactory,
  type RuntimeListener,
  type RuntimeOptions,
  type UiBridge,
} from '../../src/runtime/port.js'
import type { CommandInfo, ModelInfo, ThinkingLevel, TranscriptEntry } from '../../src/schemas/index.js'

export class FakeRuntime implements AgentRuntime {
  readonly calls: string[] = []
  readonly listeners = new Set<RuntimeListener>()
  steering: QueuedPrompt[] = []
  followUps: QueuedPrompt[] = []
  running = false
  aborted = false
  /** clearQueue() throws, as a runtime whose queue cannot be read might: a stop must still stop. */
  clearThrows = false
  /** Runs inside abort(), synchronously, as the listeners of pi's abort signal do (a tool's code). */
  onAbort?: () => void
  /** When set, abort() waits for settle() instead of settling by itself (a tool blocked on something). */
  holdAbort = false
  disposed = false
  #abortWaiters: (() => void)[] = []

  constructor(readonly ui: UiBridge) {}

  /** The run numbers the host started, in order. */
  readonly runs: number[] = []
  /** What the "persisted session" says the last run was. */
  persistedRun = 0

  lastRun(): number {
    return this.persistedRun
  }

  prompt(p: QueuedPrompt, run: number): void {
    this.calls.push(`prompt:${p.text}`)
    this.runs.push(run)
    this.running = true
    this.aborted = false
    this.emit({ type: 'user-message', messageId: p.messageId, text: p.text })
  }
  /** A run the runtime starts of its own accord, as an extension's sendUserMessage does in pi. */
  startOwnRun(text: string): void {
    this.running = true
    this.aborted = false
    this.emit({ type: 'run-started' })
    this.emit({ type: 'user-message', messageId: `own-${this.runs.length}`, text })
  }
  adoptRun(run: number): void {
    this.calls.push(`adopt:${run}`)
    this.runs.push(run)
  }
  steer(p: QueuedPrompt): void {
    this.calls.push(`steer:${p.text}`)
    this.steering.push(p)
    this.#emitQueue()
  }
  followUp(p: QueuedPrompt): void {
    this.calls.push(`followUp:${p.text}`)
    this.followUps.push(p)
    this.#emitQueue()
  }
  clearQueue(): ClearedQueue {
    this.calls.push('clearQueue')
    if (this.clearThrows) throw new Error('queue mirror corrupted')
    const cleared = { steering: this.steering, followUp: this.followUps }
    this.steering = []
    this.followUps = []
    this.#emitQueue()
    return cleared
  }
  abort(): Promise<void> {
    this.calls.push('abort')
    this.aborted = true
    this.onAbort?.()
    if (!this.running) return Promise.resolve()
    return new Promise((resolve) => {
      this.#abortWaiters.push(resolve)
      if (!this.holdAbort) setTimeout(() => this.settle(), 5)
    })
  }
  subscribe(listener: RuntimeListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
  transcript(): TranscriptEntry[] {
    return []
  }
  commands(): CommandInfo[] {
    return [{ name: 'deploy', description: 'an extension command', kind: 'extension' }]
  }
  async compact(instructions?: string): Promise<void> {
    this.calls.push(`compact:${instructions ?? ''}`)
  }
  async configure(change: { model?: string; thinkingLevel?: ThinkingLevel }): Promise<void> {
    this.calls.push(`configure:${change.model ?? ''}:${change.thinkingLevel ?? ''}`)
  }
  async dispose(): Promise<void> {
    this.calls.push('dispose')
    this.disposed = true
  }

  /** The run ends by its own settle, as pi's would. */
  settle(unclaimed: QueuedPrompt[] = []): void {
    if (!this.running) return
    this.running = false
    this.emit({ type: 'settled', aborted: this.aborted, unclaimed })
    for (const resolve of this.#abortWaiters.splice(0)) resolve()
  }

  emit(event: RuntimeEvent): void {
    for (const listener of this.listeners) listener(event)
  }

  #emitQueue(): void {
    this.emit({ type: 'queue', steering: this.steering.map((p) => p.text), followUp: this.followUps.map((p) => p.text) })
  }
}

export class FakeRuntimeFactory implements RuntimeFactory {
  readonly runtimes = new Map<string, FakeRuntime>()
  readonly built: string[] = []
  readonly options: RuntimeOptions[] = []
  transcripts = new Map<string, TranscriptEntry[]>()
  /** The last run each thread's "session file" records, e.g. ahead of the index after a crash. */
  persistedRuns = new Map<string, number>()

  /** Threads whose "session file" is damaged, with the reason: create and readTranscript reject, nothing is built. */
  readonly damaged = new Map<string, string>()

  /** Simulates a session file damaged beyond a torn last line, as the pi runtime finds one. */
  damage(threadId: string, reason = 'its header line is not a session header'): void {
    this.damaged.set(threadId, reason)
  }

  async create(options: RuntimeOptions): Promise<FakeRuntime> {
    const damaged = this.damaged.get(options.threadId)
    if (damaged !== undefined) throw new SessionDamaged(options.threadId, damaged)
    this.built.push(options.threadId)
    this.options.push(options)
    const runtime = new FakeRuntime(options.ui)
    runtime.persistedRun = this.persistedRuns.get(options.threadId) ?? 0
    this.runtimes.set(options.threadId, runtime)
    return runtime
  }
  async readTranscript(threadId: string): Promise<TranscriptEntry[]> {
    const damaged = this.damaged.get(threadId)
    if (damaged !== undefined) throw new SessionDamaged(threadId, damaged)
    return this.transcripts.get(threadId) ?? []
  }
  async remove(threadId: string): Promise<void> {
    this.damaged.delete(threadId)
    this.transcripts.delete(threadId)
    this.forks.delete(threadId)
  }
  /** Each forked thread's source, as pi's session header would keep it. */
  readonly forks = new Map<string, string>()
  async fork(request: ForkRequest): Promise<ForkResult> {
    const { sourceThreadId, threadId } = request
    if (!('beforeMessageId' in request)) return { kind: 'unknown-message' }
    const source = this.transcripts.get(sourceThreadId) ?? []
    const at = source.findIndex((e) => e.kind === 'user' && e.messageId === request.beforeMessageId)
    if (at === -1) return { kind: 'unknown-message' }
    const kept = source.slice(0, at)
    this.transcripts.set(threadId, kept)
    this.forks.set(threadId, sourceThreadId)
    return { kind: 'forked', lastRun: Math.max(0, ...kept.map((e) => (e.kind === 'user' ? e.run : 0))) }
  }
  async describe(threadId: string): Promise<PersistedFacts | undefined> {
    const parent = this.forks.get(threadId)
    return parent ? { forkedFrom: parent } : undefined
  }
  get(threadId: string): FakeRuntime {
    const runtime = this.runtimes.get(threadId)
    if (!runtime) throw new Error(`no runtime for ${threadId}`)
    return runtime
  }
}

/** A catalog of named models, every one usable unless listed in `locked` (no credentials). */
export class FakeModelCatalog implements ModelCatalog {
  constructor(
    readonly names: string[] = ['demo', 'lab/fast', 'lab/deep'],
    readonly locked: string[] = ['lab/locked'],
  ) {}

  async list(): Promise<ModelInfo[]> {
    return this.names.map((name) => this.#info(name))
  }

  async check(name: string): Promise<ModelCheck> {
    if (this.locked.includes(name)) return { ok: false, reason: `Model '${name}' has no credentials` }
    if (!this.names.includes(name)) return { ok: false, reason: `Unknown model '${name}'` }
    return { ok: true, model: this.#info(name) }
  }

  #info(name: string): ModelInfo {
    const [provider, id] = name.includes('/') ? name.split('/') : ['threadhost', name]
    return { name, provider, id, label: name, reasoning: name.endsWith('deep'), contextWindow: 8192 }
  }
}

/** Registry options for host tests: the fake runtime and catalog, `dir` as the one workspace root. */
export function hostOptions(dir: string, runtimes: RuntimeFactory, extra: Partial<RegistryOptions> = {}): RegistryOptions {
  return {
    dataDir: dir,
    runtimes,
    models: new FakeModelCatalog(),
    workspaces: new Workspaces([dir]),
    defaultModel: 'demo',
    idleMs: 60_000,
    ...extra,
  }
}
