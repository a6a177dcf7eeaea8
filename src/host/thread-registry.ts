/**
 * The thread registry: every known thread, its feed, and the live thread actor when it has one.
 *
 * It builds a runtime only for a prompt. Abort, dialog answers and follows *peek*: they never build
 * one, so a cold thread answers 404 there (and a follow shows its persisted transcript). It knows
 * nothing of HTTP; the server maps the outcomes below to status codes.
 */
import { randomUUID } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import {
  THINKING_LEVELS,
  type CommandInfo,
  type ModelList,
  type ThinkingLevel,
  type ThreadSummary,
} from '../schemas/index.js'
import { HOST_COMMANDS, parseCommand, type HostCommand } from './commands.js'
import { SessionDamaged, type ModelCatalog, type RuntimeFactory } from '../runtime/port.js'
import { Feed } from './feed.js'
import { forkThread, type ForkOutcome } from './fork.js'
import { displayOf, factsOf } from './thread-display.js'
import { LiveThread, type AbortOutcome, type PromptOutcome } from './live-thread.js'
import { canEnter, threadIn, type Phase } from './thread-phase.js'
import { initialView } from '../shared/projection.js'
import { writeFault, type PromptFate, type StoreOrigin, type ThreadFacts, type ThreadRow, type ThreadStore, type WriteFault } from './store/port.js'
import { SqliteThreadStore } from './store/sqlite.js'
import { lostCeiling, reconcile, ThreadJournal, withReports } from './store/journal.js'
import type { Workspaces } from './workspaces.js'

/** A thread as the registry keeps it: its row in the store. */
export type ThreadRecord = ThreadRow

export interface RegistryOptions {
  dataDir: string
  runtimes: RuntimeFactory
  models: ModelCatalog
  workspaces: Workspaces
  defaultModel: string
  idleMs: number
  ringSize?: number
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void
  /**
   * The host's durable state. Default: the SQLite store in `dataDir` (threadhost.db), opened and
   * recovered by `open`; host tests pass the in-memory one.
   */
  store?: ThreadStore
}

export type CreateOutcome = { kind: 'created'; threadId: string } | { kind: 'taken' } | { kind: 'invalid'; reason: string }

export type UpdateOutcome =
  | { kind: 'updated'; summary: ThreadSummary }
  | { kind: 'unknown' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'busy' }
  | { kind: 'unavailable'; reason: string }

export type CommandOutcome =
  | { kind: 'command-done'; command: string; summary: ThreadSummary }
  | { kind: 'unknown-command'; name: string; suggestions: string[] }
  | Exclude<UpdateOutcome, { kind: 'updated' }>

export interface CreateRequest {
  id?: string
  title?: string
  model?: string
  thinkingLevel?: ThinkingLevel
  cwd?: string
}

export type DialogOutcomeForRoute =
  | { kind: 'answered' }
  | { kind: 'not-live' }
  | { kind: 'unknown' }
  | { kind: 'refused'; refusal: string }

/** What a prompt came to; `not-durable`: it could not be journaled, so it was never sent. */
export type PromptRouteOutcome =
  | PromptOutcome
  | CommandOutcome
  | { kind: 'closing' }
  | { kind: 'build-failed'; reason: string }
  | { kind: 'not-durable'; fault: WriteFault }

/** A prompt as the route passes it: `run` is the run a steer or follow-up was meant for. */
export interface PromptRequestBody {
  message: string
  admission: 'enqueue' | 'reject'
  deliverAs: 'steer' | 'followUp'
  run?: number
}

export type ThreadChange = { title?: string; model?: string; thinkingLevel?: ThinkingLevel }

export type DialogBody = { id: string; [field: string]: unknown }

interface Entry {
  record: ThreadRecord
  /** Writes the thread's journal and reserves its seq ceiling, from every feed it gets. */
  journal: ThreadJournal
  phase: Phase
  /** The feed is kept apart from the phase: a cold thread keeps one while anybody follows it. */
  feed?: Feed
  feedLoading?: Promise<Feed>
}

/**
 * The thread's LiveThread while its machine is live. The phase says `live` until the retired
 * thread is handed back (a microtask after its machine went cold), so the machine has the last word.
 */
function liveIn(phase: Phase): LiveThread | undefined {
  return phase.kind === 'live' && phase.thread.live ? phase.thread : undefined
}

/** A thread that may be named by a request (a deleting one is already gone for callers). */
function present(entry: Entry | undefined): entry is Entry {
  return entry !== undefined && entry.phase.kind !== 'deleting'
}

/** Why a runtime that was being built will not be used. */
class ThreadGone extends Error {
  constructor(readonly reason: 'deleted' | 'closing') {
    super(reason === 'deleted' ? 'the thread was deleted' : 'threadhost is shutting down')
  }
}

export class ThreadRegistry {
  readonly #entries = new Map<string, Entry>()
  readonly #options: RegistryOptions
  readonly #store: ThreadStore
  #closing = false
  #shutdown?: Promise<void>
  #surveyed: Promise<void> = Promise.resolve()
  /** Commands under way: a shutdown closes the store only after each has written what it answers. */
  readonly #inflight = new Set<Promise<unknown>>()
  readonly #liveListeners = new Set<(thread: LiveThread, event: 'started' | 'retired') => void>()
  readonly #feedWatchers = new Set<(threadId: string, feed: Feed) => void>()

  private constructor(options: RegistryOptions, store: ThreadStore) {
    this.#options = options
    this.#store = store
  }

  /**
   * Opens the store and recovers before anything is accepted: a lost or unusable database is rebuilt
   * from the runtime's persisted threads (one warning line), and the journal is reconciled with the
   * transcripts (docs/flows/durability.md). threadhost never refuses to start because of its own data.
   */
  static async open(options: RegistryOptions): Promise<ThreadRegistry> {
    let store = options.store
    let origin: StoreOrigin = 'kept'
    let reason: string | undefined
    if (!store) {
      const opened = SqliteThreadStore.open(options.dataDir, { floorSeq: () => lostCeiling() })
      ;({ store, origin, reason } = opened)
    }
    const registry = new ThreadRegistry(options, store)
    await registry.#recover(origin, reason)
    registry.#surveyed = registry.#survey()
    return registry
  }

  /**
   * Resolves once every session file was checked after the start. The check runs behind the start
   * (it reads every file) so threadhost answers at once; until it is done, a damaged thread is
   * found unavailable when it is first followed or prompted, never written.
   */
  get surveyed(): Promise<void> {
    return this.#surveyed
  }

  async #survey(): Promise<void> {
    const persisted = (await this.#options.runtimes.listPersisted?.().catch(() => [])) ?? []
    for (const p of persisted) {
      const entry = this.#entries.get(p.threadId)
      if (!entry) continue
      if (p.damaged !== undefined) this.#unavailable(entry, new SessionDamaged(p.threadId, p.damaged))
      // Threads from before the store kept these (schema 1) learn them once.
      if (!entry.record.facts && p.facts) this.#keepFacts(entry, p.facts)
    }
  }

  /** The durable state (tests and the inspector read the journal). */
  get store(): ThreadStore {
    return this.#store
  }

  async #recover(origin: StoreOrigin, reason: string | undefined): Promise<void> {
    const log = this.#options.log
    const store = this.#store
    if (origin !== 'kept') {
      const known = new Set(store.threads().map((t) => t.threadId))
      const persisted = (await this.#options.runtimes.listPersisted?.().catch(() => [])) ?? []
      const missing = persisted.filter((p) => !known.has(p.threadId))
      for (const p of missing) {
        const model = p.model && (await this.#options.models.check(p.model).catch(() => ({ ok: false }))).ok ? p.model : this.#options.defaultModel
        const workspace = this.#options.workspaces.check(p.cwd)
        store.putThread({
          threadId: p.threadId,
          title: p.threadId,
          model,
          ...(p.thinkingLevel ? { thinkingLevel: p.thinkingLevel } : {}),
          cwd: workspace.ok ? workspace.cwd : this.#options.workspaces.default,
          createdAt: p.createdAt,
          updatedAt: p.updatedAt,
          run: p.lastRun,
          seq: lostCeiling(),
          ...(p.facts ? { facts: p.facts } : {}),
        })
      }
      if (origin === 'rebuilt' || missing.length > 0) {
        const why = origin === 'rebuilt' ? `the database was unusable (${reason ?? 'unknown'}; kept aside)` : 'the database was missing'
        log?.('warn', `thread index rebuilt: ${why}; ${missing.length} thread(s) recovered from the session directories`)
      } else if (origin === 'migrated') {
        log?.('info', 'thread index migrated from threads.json to threadhost.db')
      }
    }
    for (const record of store.threads()) {
      const runs = store.openRuns(record.threadId)
      const run = Math.max(record.run, ...runs.map((r) => r.run))
      const entry: Entry = {
        record: { ...record, run },
        journal: new ThreadJournal(record.threadId, store, { ceiling: record.seq, run }, log),
        phase: { kind: 'cold' },
      }
      this.#entries.set(record.threadId, entry)
    }
    // Reconcile what was in flight at a crash (after a clean shutdown nothing is open).
    let rejected = 0
    let interrupted = 0
    const threads = new Set([...store.openPrompts(), ...store.openRuns(), ...store.openDialogs()].map((r) => r.threadId))
    for (const threadId of threads) {
      const entry = this.#entries.get(threadId)
      if (!entry) continue
      const transcript = await this.#options.runtimes.readTranscript(threadId).catch((error: unknown) => {
        if (!(error instanceof SessionDamaged)) return []
        // What the damaged file holds is unknown: its journal stays open until it is repaired.
        this.#unavailable(entry, error)
        return undefined
      })
      if (!transcript) continue
      const done = reconcile(store, threadId, entry.record.run, transcript)
      rejected += done?.rejected.length ?? 0
      interrupted += done?.interruptedRuns.length ?? 0
    }
    if (rejected || interrupted) {
      log?.('warn', `recovered from an unclean stop: ${interrupted} run(s) ended aborted, ${rejected} accepted prompt(s) reported rejected (restart)`)
    }
  }

  get closing(): boolean {
    return this.#closing
  }

  /** Live threads, for the inspector. */
  liveThreads(): LiveThread[] {
    return [...this.#entries.values()].flatMap((e) => (e.phase.kind === 'live' ? [e.phase.thread] : []))
  }

  onLiveChange(listener: (thread: LiveThread, event: 'started' | 'retired') => void): () => void {
    this.#liveListeners.add(listener)
    return () => this.#liveListeners.delete(listener)
  }

  /**
   * Every feed as it is loaded, and at once those loaded now: for watchers outside the host
   * (metrics) that read observations and follower counts. A feed is dropped when its thread goes
   * cold with nobody following, so a watcher must not be what keeps one alive.
   */
  watchFeeds(watcher: (threadId: string, feed: Feed) => void): () => void {
    this.#feedWatchers.add(watcher)
    for (const entry of this.#entries.values()) if (entry.feed) watcher(entry.record.threadId, entry.feed)
    return () => this.#feedWatchers.delete(watcher)
  }

  /** What a new thread may run on, and what it gets when it names nothing. */
  async models(): Promise<ModelList> {
    return { models: await this.#options.models.list(), default: this.#options.defaultModel }
  }

  /** An unknown model, one without credentials, or a cwd outside the workspaces is refused before anything is written. */
  create(request: CreateRequest): Promise<CreateOutcome> {
    return this.#tracked(() => this.#create(request))
  }

  async #create(request: CreateRequest): Promise<CreateOutcome> {
    const threadId = request.id ?? randomUUID().slice(0, 8)
    if (this.#entries.has(threadId)) return { kind: 'taken' }
    const workspace = this.#options.workspaces.check(request.cwd)
    if (!workspace.ok) return { kind: 'invalid', reason: workspace.reason }
    const model = request.model ?? this.#options.defaultModel
    const check = await this.#options.models.check(model)
    if (!check.ok) return { kind: 'invalid', reason: check.reason }
    // The id may have been taken while the model was checked.
    if (this.#entries.has(threadId)) return { kind: 'taken' }
    await this.#remember(threadId, { ...request, model, cwd: workspace.cwd })
    return { kind: 'created', threadId }
  }

  /** A new thread holding this one's history before a prompt, linked to it (fork.ts: edit and resend, regenerate). */
  fork(threadId: string, fromMessageId: string): Promise<ForkOutcome> {
    return this.#tracked(() => this.#fork(threadId, fromMessageId))
  }

  async #fork(threadId: string, fromMessageId: string): Promise<ForkOutcome> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return { kind: 'unknown' }
    const create = async (request: CreateRequest, run: number) => {
      const created = await this.create(request)
      const forked = created.kind === 'created' ? this.#entries.get(created.threadId) : undefined
      if (forked) {
        forked.record = { ...forked.record, run }
        this.#persist(forked)
        // The new thread's link to its source is in its session file (written before it was created).
        await this.#describe(forked.record.threadId)
      }
      return created
    }
    return forkThread({ runtimes: this.#options.runtimes, create, summary: (id) => this.get(id) }, entry.record, fromMessageId)
  }

  list(): ThreadSummary[] {
    return [...this.#entries.values()]
      .filter(present)
      .map((e) => this.#summary(e))
      .sort((a, b) => b.updatedAt - a.updatedAt)
  }

  get(threadId: string): ThreadSummary | undefined {
    const entry = this.#entries.get(threadId)
    return present(entry) ? this.#summary(entry) : undefined
  }

  /**
   * A rename takes effect at once; a model or thinking level applies from the next run, so it is
   * refused (busy) while one is in flight, and an unusable model is refused before anything changes.
   */
  update(threadId: string, change: ThreadChange): Promise<UpdateOutcome> {
    return this.#tracked(() => this.#update(threadId, change))
  }

  async #update(threadId: string, change: ThreadChange): Promise<UpdateOutcome> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return { kind: 'unknown' }
    const configures = change.model !== undefined || change.thinkingLevel !== undefined
    if (configures && entry.phase.kind === 'unavailable') return { kind: 'unavailable', reason: entry.phase.reason }
    if (change.model !== undefined) {
      const check = await this.#options.models.check(change.model)
      if (!check.ok) return { kind: 'invalid', reason: check.reason }
    }
    if (configures) {
      const live = await this.#currentLive(entry)
      if (live) {
        if (live.busy) return { kind: 'busy' }
        await live.configure({ model: change.model, thinkingLevel: change.thinkingLevel })
      }
    }
    entry.record = {
      ...entry.record,
      ...(change.title !== undefined ? { title: change.title } : {}),
      ...(change.model !== undefined ? { model: change.model } : {}),
      ...(change.thinkingLevel !== undefined ? { thinkingLevel: change.thinkingLevel } : {}),
      updatedAt: Date.now(),
    }
    this.#persist(entry)
    return { kind: 'updated', summary: this.#summary(entry) }
  }

  /**
   * A live thread is disposed first: its run stops and its open dialogs settle `cancelled`. The
   * entry stays (hidden, its id not reusable) until its files are gone, so a new thread with the
   * same id can never lose its own files to the old one's removal.
   */
  delete(threadId: string): Promise<boolean> {
    return this.#tracked(() => this.#delete(threadId))
  }

  async #delete(threadId: string): Promise<boolean> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return false
    // A runtime still being built is disposed by its build, which finds the thread deleting.
    const before = entry.phase
    const done = (async () => {
      const live = before.kind === 'building' ? await before.built.catch(() => undefined) : threadIn(before)
      await live?.dispose('deleted', 'cancelled')
      const feed = entry.feed ?? (await entry.feedLoading?.catch(() => undefined))
      feed?.close()
      this.#store.deleteThread(threadId)
      await this.#options.runtimes.remove(threadId)
    })()
    this.#enter(entry, { kind: 'deleting', done })
    try {
      await done
    } finally {
      if (this.#entries.get(threadId) === entry) this.#entries.delete(threadId)
    }
    return true
  }

  /** What the composer can run on this thread: threadhost's commands and pi's (the thread is built to know them). */
  async commands(threadId: string): Promise<CommandInfo[] | undefined> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return undefined
    const live = entry.phase.kind === 'unavailable' ? undefined : await this.#ensureLive(entry).catch(() => undefined)
    return [...HOST_COMMANDS, ...(live?.commands() ?? [])]
  }

  /**
   * The first prompt to an unknown id creates the thread. A `/command` is threadhost's (applied
   * to the thread, never queued), pi's (prompted as any text: pi runs it), or unknown (refused).
   */
  prompt(threadId: string, request: PromptRequestBody): Promise<PromptRouteOutcome> {
    return this.#tracked(() => this.#prompt(threadId, request))
  }

  async #prompt(threadId: string, request: PromptRequestBody): Promise<PromptRouteOutcome> {
    if (this.#closing) return { kind: 'closing' }
    const entry = this.#entries.get(threadId) ?? (await this.#remember(threadId, { model: this.#options.defaultModel, cwd: this.#options.workspaces.default }))
    if (entry.phase.kind === 'deleting') return { kind: 'rejected', reason: 'deleted' }
    if (entry.phase.kind === 'unavailable') return { kind: 'rejected', reason: 'unavailable' }
    let live: LiveThread
    try {
      live = await this.#ensureLive(entry)
    } catch (error) {
      if (error instanceof ThreadGone) return error.reason === 'closing' ? { kind: 'closing' } : { kind: 'rejected', reason: 'deleted' }
      if (error instanceof SessionDamaged) return { kind: 'rejected', reason: 'unavailable' }
      return { kind: 'build-failed', reason: error instanceof Error ? error.message : String(error) }
    }
    const command = parseCommand(request.message, live.commands())
    if (command.kind === 'unknown') return { kind: 'unknown-command', name: command.name, suggestions: command.suggestions }
    if (command.kind === 'host') return this.#hostCommand(threadId, command.name, command.args)
    const { message: text, admission, deliverAs, run } = request
    // Journaled before the machine sees it: once it may run, a crash or a failed write can no
    // longer lose it (recovery gives every journaled prompt its fate), and a write that fails here
    // refuses it before anything ran.
    const messageId = randomUUID()
    try {
      this.#store.admitPrompt(
        { threadId, messageId, text, admission, deliverAs, queued: false, run: entry.record.run, acceptedAt: Date.now() },
        { ...entry.record, seq: entry.journal.ceiling },
      )
    } catch (error) {
      return { kind: 'not-durable', fault: writeFault(error) ?? { kind: 'read-only', code: 'EIO', message: String(error) } }
    }
    const outcome = await live.prompt({ messageId, text, admission, deliverAs, ...(run !== undefined ? { run } : {}) })
    if (outcome.kind === 'admitted') this.#admitted(entry, request, outcome)
    else this.#withdraw(entry, messageId)
    return outcome
  }

  /** A prompt the machine refused was never accepted: its journal row goes (a failure only leaves a row recovery settles). */
  #withdraw(entry: Entry, messageId: string): void {
    try {
      this.#store.withdrawPrompt(entry.record.threadId, messageId)
    } catch (error) {
      this.#options.log?.('warn', `store write failed: ${String(error)}`)
    }
  }

  /** A tab's composer draft, for extensions that read the editor. It never builds a runtime. */
  reportDraft(threadId: string, text: string): boolean {
    const phase = this.#entries.get(threadId)?.phase
    const live = phase && liveIn(phase)
    if (!live) return false
    live.reportDraft(text)
    return true
  }

  abort(threadId: string, run?: number): Promise<AbortOutcome> {
    return this.#tracked(() => this.#abort(threadId, run))
  }

  async #abort(threadId: string, run?: number): Promise<AbortOutcome> {
    const entry = this.#entries.get(threadId)
    const live = entry && threadIn(entry.phase)
    if (!entry || !live) return { kind: 'not-live' }
    const outcome = await live.abort(run)
    if (outcome.kind === 'stopped' && outcome.restored.length > 0) this.#restored(entry, outcome.restored)
    return outcome
  }

  /** Finds the thread; the question's own dialog machine decides whether the payload answers it. */
  async answer(threadId: string, body: DialogBody): Promise<DialogOutcomeForRoute> {
    const phase = this.#entries.get(threadId)?.phase
    const live = phase && liveIn(phase)
    if (!live) return { kind: 'not-live' }
    const { id, ...payload } = body
    return live.answer(id, payload)
  }

  /** The thread's feed, loading a cold thread's persisted transcript without building a runtime. */
  async feed(threadId: string): Promise<Feed | undefined> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return undefined
    return this.#feedOf(entry)
  }

  /** Refuse new work, stop every run (queued prompts reported), settle open dialogs `aborted`, close the store. */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#drain()
    return this.#shutdown
  }

  #tracked<T>(work: () => Promise<T>): Promise<T> {
    const done = work()
    this.#inflight.add(done)
    const forget = () => void this.#inflight.delete(done)
    done.then(forget, forget)
    return done
  }

  async #drain(): Promise<void> {
    this.#closing = true
    const entries = [...this.#entries.values()]
    await Promise.all(
      entries.map(async (entry) => {
        const live = await this.#currentLive(entry)
        await live?.dispose('shutdown', 'aborted')
        entry.feed?.close()
      }),
    )
    // What was answered (or is about to be) is written before the store closes: a delete's removal,
    // a rename, a fork's new row. New requests are refused by now; these finish against stopped threads.
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight])
    // Every frame sent is at or below its thread's reserved ceiling already; nothing is left to flush.
    this.#store.close()
  }

  /**
   * The machine's answer on the journaled prompt, and the thread's row, in one commit. It is durable
   * already: if this write fails, recovery still settles the prompt by its id.
   */
  #admitted(entry: Entry, request: PromptRequestBody, outcome: Extract<PromptOutcome, { kind: 'admitted' }>): void {
    const threadId = entry.record.threadId
    const facts = factsOf(entry.feed?.view.transcript ?? [], entry.record.facts)
    entry.record = {
      ...entry.record,
      updatedAt: Date.now(),
      run: Math.max(entry.record.run, threadIn(entry.phase)?.run ?? 0, outcome.run),
      facts: { ...facts, firstPrompt: facts.firstPrompt ?? request.message },
    }
    try {
      this.#store.promptAdmitted(threadId, outcome.messageId, { run: outcome.run, queued: outcome.queued }, { ...entry.record, seq: entry.journal.ceiling })
    } catch (error) {
      this.#options.log?.('error', `store write failed after prompt ${outcome.messageId} was journaled: ${String(error)}`)
    }
  }

  /** A stop handed these texts back: their prompts' fate (oldest queued prompt with the text first). */
  #restored(entry: Entry, texts: string[]): void {
    const open = this.#store.openPrompts(entry.record.threadId).filter((p) => p.queued && !p.fate)
    for (const text of texts) {
      const i = open.findIndex((p) => p.text === text)
      if (i === -1) continue
      const [p] = open.splice(i, 1)
      entry.journal.fate(p.messageId, { kind: 'restored' } satisfies PromptFate)
    }
  }

  // ——— internals ———

  async #hostCommand(threadId: string, name: HostCommand, args: string): Promise<CommandOutcome> {
    if (name === 'new') return this.#newLike(threadId, args)
    if (name === 'compact') return this.#compact(threadId, args)
    if (!args) return { kind: 'invalid', reason: `/${name} needs an argument` }
    if (name === 'thinking' && !(THINKING_LEVELS as readonly string[]).includes(args)) {
      return { kind: 'invalid', reason: `/thinking takes one of ${THINKING_LEVELS.join(', ')}` }
    }
    const change = name === 'name' ? { title: args } : name === 'model' ? { model: args } : { thinkingLevel: args as ThinkingLevel }
    const outcome = await this.update(threadId, change)
    return outcome.kind === 'updated' ? { kind: 'command-done', command: name, summary: outcome.summary } : outcome
  }

  /** `/new`: a fresh thread with this one's model, thinking level and workspace. */
  async #newLike(threadId: string, title: string): Promise<CommandOutcome> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return { kind: 'unknown' }
    const { model, thinkingLevel, cwd } = entry.record
    const created = await this.create({ model, ...(thinkingLevel ? { thinkingLevel } : {}), ...(cwd ? { cwd } : {}), ...(title ? { title } : {}) })
    if (created.kind !== 'created') return { kind: 'invalid', reason: created.kind === 'invalid' ? created.reason : 'no new thread id was free' }
    return { kind: 'command-done', command: 'new', summary: this.get(created.threadId)! }
  }

  /** `/compact`: between runs, like a model change. */
  async #compact(threadId: string, instructions: string): Promise<CommandOutcome> {
    const entry = this.#entries.get(threadId)
    if (!present(entry)) return { kind: 'unknown' }
    const live = await this.#currentLive(entry)
    if (!live) return { kind: 'invalid', reason: 'nothing to compact yet' }
    if (live.busy) return { kind: 'busy' }
    try {
      await live.compact(instructions)
    } catch (error) {
      return { kind: 'invalid', reason: `compaction failed: ${error instanceof Error ? error.message : String(error)}` }
    }
    await this.#touch(threadId)
    return { kind: 'command-done', command: 'compact', summary: this.#summary(entry) }
  }

  async #remember(threadId: string, request: CreateRequest & { model: string; cwd: string }): Promise<Entry> {
    const now = Date.now()
    const record: ThreadRecord = {
      threadId,
      title: request.title?.trim() || threadId,
      model: request.model,
      ...(request.thinkingLevel ? { thinkingLevel: request.thinkingLevel } : {}),
      cwd: request.cwd,
      createdAt: now,
      updatedAt: now,
      run: 0,
      seq: 0,
    }
    this.#store.putThread(record)
    const entry: Entry = {
      record,
      journal: new ThreadJournal(threadId, this.#store, { ceiling: 0, run: 0 }, this.#options.log),
      phase: { kind: 'cold' },
    }
    this.#entries.set(threadId, entry)
    return entry
  }

  async #touch(threadId: string): Promise<void> {
    const entry = this.#entries.get(threadId)
    if (!entry) return
    entry.record = { ...entry.record, updatedAt: Date.now(), run: Math.max(entry.record.run, threadIn(entry.phase)?.run ?? 0) }
    this.#persist(entry)
  }

  #feedOf(entry: Entry): Promise<Feed> {
    if (entry.feed) return Promise.resolve(entry.feed)
    const make = (transcript: Awaited<ReturnType<RuntimeFactory['readTranscript']>>) => {
      if (entry.feed) return entry.feed
      const threadId = entry.record.threadId
      const reports = this.#store.reports(threadId)
      // Reports an earlier feed delivered are part of the transcript; the ones still owed are appended below.
      const view = initialView(threadId, withReports(transcript, reports.filter((r) => r.delivered)), entry.record.seq)
      const feed = new Feed({ ...view, status: { live: false, busy: false, run: entry.record.run } }, {
        ringSize: this.#options.ringSize,
        onUnfollowed: () => this.#releaseFeed(entry),
      })
      // First observer: the seq ceiling is reserved (and the journal written) before any follower gets a frame.
      feed.observe((o) => entry.journal.observe(o))
      // An extension's ctx.ui.setTitle reaches the feed as a `title` observation; it is a rename.
      feed.observe((o) => {
        if (o.type !== 'title') return
        this.update(entry.record.threadId, { title: o.title }).catch((error) =>
          this.#options.log?.('error', `title write failed: ${String(error)}`),
        )
      })
      entry.feed = feed
      for (const watcher of this.#feedWatchers) watcher(entry.record.threadId, feed)
      const owed = reports.filter((r) => !r.delivered)
      if (owed.length > 0) {
        for (const report of owed) feed.append(report.body)
        this.#store.markDelivered(threadId, owed.map((r) => r.id))
      }
      return feed
    }
    entry.feedLoading ??= this.#options.runtimes.readTranscript(entry.record.threadId).then(make, (error) => {
      if (error instanceof SessionDamaged) this.#unavailable(entry, error)
      return make([])
    })
    return entry.feedLoading
  }

  /**
   * A cold thread nobody follows keeps no feed: its transcript is on disk and its seq in the entry
   * (the store holds the ceiling above it), so memory stays with the threads people are using.
   */
  #releaseFeed(entry: Entry): void {
    const feed = entry.feed
    const keep = entry.phase.kind === 'building' || entry.phase.kind === 'live' || entry.phase.kind === 'deleting'
    if (!feed || feed.followerCount > 0 || keep) return
    entry.record = { ...entry.record, seq: feed.seq, facts: factsOf(feed.view.transcript, entry.record.facts) }
    // pi's session name is in the file alone (an extension's pi.setSessionName).
    void this.#describe(entry.record.threadId)
    entry.feed = undefined
    entry.feedLoading = undefined
  }

  /** Refreshes what a thread's persisted conversation says (its pi session name, its fork link), off the summary's path. */
  async #describe(threadId: string): Promise<void> {
    const facts = await this.#options.runtimes.describe?.(threadId).catch(() => undefined)
    const entry = this.#entries.get(threadId)
    if (facts && entry) this.#keepFacts(entry, { ...entry.record.facts, ...facts })
  }

  #keepFacts(entry: Entry, facts: ThreadFacts): void {
    if (isDeepStrictEqual(facts, entry.record.facts)) return
    entry.record = { ...entry.record, facts }
    try {
      this.#persist(entry)
    } catch (error) {
      // A summary's preview is not worth a refusal: the next write of the row carries it.
      this.#options.log?.('warn', `store write failed: ${String(error)}`)
    }
  }

  /**
   * Writes the thread's row — unless the thread is being deleted or already replaced: a write that
   * lands after a delete would bring the thread back at the next start.
   */
  #persist(entry: Entry): void {
    if (entry.phase.kind === 'deleting' || this.#entries.get(entry.record.threadId) !== entry) return
    this.#store.putThread({ ...entry.record, seq: entry.journal.ceiling })
  }

  /** The one way a thread's phase changes; an edge `PHASE_EDGES` does not list is a bug in the registry. */
  #enter(entry: Entry, phase: Phase): void {
    if (!canEnter(entry.phase.kind, phase.kind)) {
      throw new Error(`thread ${entry.record.threadId}: no way from ${entry.phase.kind} to ${phase.kind}`)
    }
    entry.phase = phase
  }

  #unavailable(entry: Entry, damage: SessionDamaged): void {
    if (entry.phase.kind !== 'cold') return
    this.#options.log?.('error', `${damage.message}; the thread is unavailable until the file is repaired or the thread deleted`)
    this.#enter(entry, { kind: 'unavailable', reason: damage.reason })
  }

  /** The thread's live thread, waiting for one that is being built. */
  async #currentLive(entry: Entry): Promise<LiveThread | undefined> {
    if (entry.phase.kind === 'building') await entry.phase.built.catch(() => undefined)
    return liveIn(entry.phase)
  }

  #ensureLive(entry: Entry): Promise<LiveThread> {
    const phase = entry.phase
    switch (phase.kind) {
      case 'live':
        // Gone cold an instant ago: build once it is handed back and released.
        return phase.thread.live ? Promise.resolve(phase.thread) : phase.thread.released.then(() => this.#ensureLive(entry))
      case 'building':
        return phase.built
      case 'deleting':
        return Promise.reject(new ThreadGone('deleted'))
      case 'unavailable':
        return Promise.reject(new SessionDamaged(entry.record.threadId, phase.reason))
      case 'cold':
      case 'releasing': {
        // A thread going cold lets its runtime go first: never build a second one beside it.
        const released = phase.kind === 'releasing' ? phase.thread.released : Promise.resolve()
        const built: Promise<LiveThread> = released.then(() => this.#build(entry, built))
        this.#enter(entry, { kind: 'building', built })
        return built
      }
    }
  }

  /** Builds the runtime; `built` is this build's own promise, to know whether the phase is still ours. */
  async #build(entry: Entry, built: Promise<LiveThread>): Promise<LiveThread> {
    const ours = () => entry.phase.kind === 'building' && entry.phase.built === built
    const abandon = (next: Phase) => {
      if (ours()) this.#enter(entry, next)
    }
    let live: LiveThread | undefined
    try {
      const feed = await this.#feedOf(entry)
      live = new LiveThread({
        threadId: entry.record.threadId,
        feed,
        run: entry.record.run,
        idleMs: this.#options.idleMs,
        log: this.#options.log,
        onRetired: (thread) => this.#retired(entry, thread),
      })
      for (const listener of this.#liveListeners) listener(live, 'started')
      const { threadId, model, thinkingLevel, cwd } = entry.record
      const runtime = await this.#options.runtimes.create({
        threadId,
        model,
        ...(thinkingLevel ? { thinkingLevel } : {}),
        cwd: cwd ?? this.#options.workspaces.default,
        ui: live.ui,
      })
      if (!ours() || this.#closing) {
        await runtime.dispose()
        throw new ThreadGone(this.#closing ? 'closing' : 'deleted')
      }
      this.#enter(entry, { kind: 'live', thread: live })
      live.attach(runtime)
      return live
    } catch (error) {
      if (live) {
        live.actor.stop()
        for (const listener of this.#liveListeners) listener(live, 'retired')
      }
      if (error instanceof SessionDamaged) abandon({ kind: 'unavailable', reason: error.reason })
      else abandon({ kind: 'cold' })
      if (entry.phase.kind === 'cold' || entry.phase.kind === 'unavailable') this.#releaseFeed(entry)
      throw error
    }
  }

  #retired(entry: Entry, thread: LiveThread): void {
    if (entry.phase.kind === 'live' && entry.phase.thread === thread) {
      entry.record = {
        ...entry.record,
        run: Math.max(entry.record.run, thread.run),
        seq: entry.feed?.seq ?? entry.record.seq,
        facts: factsOf(entry.feed?.view.transcript ?? [], entry.record.facts),
      }
      // Also at a shutdown: the store closes only once every thread has retired.
      try {
        this.#persist(entry)
      } catch (error) {
        this.#options.log?.('error', `store write failed: ${String(error)}`)
      }
      this.#enter(entry, { kind: 'releasing', thread })
      void thread.released.then(() => {
        if (entry.phase.kind !== 'releasing' || entry.phase.thread !== thread) return
        this.#enter(entry, { kind: 'cold' })
        this.#releaseFeed(entry)
      })
    }
    thread.actor.stop()
    for (const listener of this.#liveListeners) listener(thread, 'retired')
  }

  #summary(entry: Entry): ThreadSummary {
    const view = entry.feed?.view
    const status = view?.status ?? { live: false, busy: false, run: entry.record.run }
    return {
      threadId: entry.record.threadId,
      ...displayOf(entry.record, view?.transcript, entry.record.facts),
      model: entry.record.model,
      ...(entry.record.thinkingLevel ? { thinkingLevel: entry.record.thinkingLevel } : {}),
      cwd: entry.record.cwd ?? this.#options.workspaces.default,
      live: status.live,
      busy: status.busy,
      run: status.run,
      openDialogs: view?.openDialogs.length ?? 0,
      createdAt: entry.record.createdAt,
      updatedAt: entry.record.updatedAt,
      ...(entry.phase.kind === 'unavailable' ? { unavailable: entry.phase.reason } : {}),
    }
  }
}
