/**
 * The thread registry: every known thread, its feed, and the live thread actor when it has one.
 *
 * It builds a runtime only for a prompt. Abort, dialog answers and follows *peek*: they never build
 * one, so a cold thread answers 404 there (and a follow shows its persisted transcript). It knows
 * nothing of HTTP; the server maps the outcomes below to status codes.
 */
import { randomUUID } from 'node:crypto'
import {
  THINKING_LEVELS,
  type CommandInfo,
  type ModelList,
  type ThinkingLevel,
  type ThreadSummary,
} from '../schemas/index.js'
import { HOST_COMMANDS, parseCommand, type HostCommand } from './commands.js'
import type { ModelCatalog, RuntimeFactory } from '../runtime/port.js'
import { Feed } from './feed.js'
import { LiveThread, type AbortOutcome, type PromptOutcome } from './live-thread.js'
import { initialView } from '../shared/projection.js'
import type { PromptFate, StoreOrigin, ThreadRow, ThreadStore } from './store/port.js'
import { SqliteThreadStore } from './store/sqlite.js'
import { EarlyFates, lostCeiling, reconcile, ThreadJournal, withReports } from './store/journal.js'
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

export type DialogBody = { id: string; [field: string]: unknown }

interface Entry {
  record: ThreadRecord
  /** Writes the thread's journal and reserves its seq ceiling, from every feed it gets. */
  journal: ThreadJournal
  feed?: Feed
  feedLoading?: Promise<Feed>
  live?: LiveThread
  building?: Promise<LiveThread>
  /** Set from the first moment of a delete until its files are gone; the id is not reusable meanwhile. */
  deleting?: Promise<void>
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
  readonly #early = new EarlyFates()
  #closing = false
  #shutdown?: Promise<void>
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
    return registry
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
        journal: new ThreadJournal(record.threadId, store, { ceiling: record.seq, run }, this.#early, log),
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
      const transcript = await this.#options.runtimes.readTranscript(threadId).catch(() => [])
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
    return [...this.#entries.values()].flatMap((e) => (e.live ? [e.live] : []))
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
  async create(request: CreateRequest): Promise<CreateOutcome> {
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

  list(): ThreadSummary[] {
    return [...this.#entries.values()]
      .filter((e) => !e.deleting)
      .map((e) => this.#summary(e))
      .sort((a, b) => b.updatedAt - a.updatedAt)
  }

  get(threadId: string): ThreadSummary | undefined {
    const entry = this.#entries.get(threadId)
    return entry && !entry.deleting ? this.#summary(entry) : undefined
  }

  /**
   * A rename takes effect at once; a model or thinking level applies from the next run, so it is
   * refused (busy) while one is in flight, and an unusable model is refused before anything changes.
   */
  async update(threadId: string, change: { title?: string; model?: string; thinkingLevel?: ThinkingLevel }): Promise<UpdateOutcome> {
    const entry = this.#entries.get(threadId)
    if (!entry || entry.deleting) return { kind: 'unknown' }
    const configures = change.model !== undefined || change.thinkingLevel !== undefined
    if (change.model !== undefined) {
      const check = await this.#options.models.check(change.model)
      if (!check.ok) return { kind: 'invalid', reason: check.reason }
    }
    if (configures) {
      const live = await this.#currentLive(entry)
      if (live?.live) {
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
    this.#store.putThread(entry.record)
    return { kind: 'updated', summary: this.#summary(entry) }
  }

  /**
   * A live thread is disposed first: its run stops and its open dialogs settle `cancelled`. The
   * entry stays (hidden, its id not reusable) until its files are gone, so a new thread with the
   * same id can never lose its own files to the old one's removal.
   */
  async delete(threadId: string): Promise<boolean> {
    const entry = this.#entries.get(threadId)
    if (!entry || entry.deleting) return false
    entry.deleting = (async () => {
      const live = await this.#currentLive(entry)
      await live?.dispose('deleted', 'cancelled')
      const feed = entry.feed ?? (await entry.feedLoading?.catch(() => undefined))
      feed?.close()
      this.#store.deleteThread(threadId)
      await this.#options.runtimes.remove(threadId)
    })()
    try {
      await entry.deleting
    } finally {
      if (this.#entries.get(threadId) === entry) this.#entries.delete(threadId)
    }
    return true
  }

  /** What the composer can run on this thread: threadhost's commands and pi's (the thread is built to know them). */
  async commands(threadId: string): Promise<CommandInfo[] | undefined> {
    const entry = this.#entries.get(threadId)
    if (!entry || entry.deleting) return undefined
    const live = await this.#ensureLive(threadId).catch(() => undefined)
    return [...HOST_COMMANDS, ...(live?.commands() ?? [])]
  }

  /**
   * The first prompt to an unknown id creates the thread. A `/command` is threadhost's (applied
   * to the thread, never queued), pi's (prompted as any text: pi runs it), or unknown (refused).
   */
  async prompt(
    threadId: string,
    request: { message: string; admission: 'enqueue' | 'reject'; deliverAs: 'steer' | 'followUp' },
  ): Promise<PromptOutcome | CommandOutcome | { kind: 'closing' } | { kind: 'build-failed'; reason: string }> {
    if (this.#closing) return { kind: 'closing' }
    if (this.#entries.get(threadId)?.deleting) return { kind: 'rejected', reason: 'deleted' }
    if (!this.#entries.has(threadId)) {
      await this.#remember(threadId, { model: this.#options.defaultModel, cwd: this.#options.workspaces.default })
    }
    let live: LiveThread
    try {
      live = await this.#ensureLive(threadId)
    } catch (error) {
      if (error instanceof ThreadGone) return error.reason === 'closing' ? { kind: 'closing' } : { kind: 'rejected', reason: 'deleted' }
      return { kind: 'build-failed', reason: error instanceof Error ? error.message : String(error) }
    }
    const command = parseCommand(request.message, live.commands())
    if (command.kind === 'unknown') return { kind: 'unknown-command', name: command.name, suggestions: command.suggestions }
    if (command.kind === 'host') return this.#hostCommand(threadId, command.name, command.args)
    const outcome = await live.prompt({ text: request.message, admission: request.admission, deliverAs: request.deliverAs })
    // Durable before it is answered: the route's 202 comes after this commit.
    if (outcome.kind === 'admitted') this.#admitted(threadId, request, outcome)
    return outcome
  }

  /** A tab's composer draft, for extensions that read the editor. It never builds a runtime. */
  reportDraft(threadId: string, text: string): boolean {
    const live = this.#entries.get(threadId)?.live
    if (!live?.live) return false
    live.reportDraft(text)
    return true
  }

  async abort(threadId: string, run?: number): Promise<AbortOutcome> {
    const entry = this.#entries.get(threadId)
    const live = entry?.live
    if (!entry || !live) return { kind: 'not-live' }
    const outcome = await live.abort(run)
    if (outcome.kind === 'stopped' && outcome.restored.length > 0) this.#restored(entry, outcome.restored)
    return outcome
  }

  /** Finds the thread; the question's own dialog machine decides whether the payload answers it. */
  async answer(threadId: string, body: DialogBody): Promise<DialogOutcomeForRoute> {
    const live = this.#entries.get(threadId)?.live
    if (!live || !live.live) return { kind: 'not-live' }
    const { id, ...payload } = body
    return live.answer(id, payload)
  }

  /** The thread's feed, loading a cold thread's persisted transcript without building a runtime. */
  async feed(threadId: string): Promise<Feed | undefined> {
    const entry = this.#entries.get(threadId)
    if (!entry || entry.deleting) return undefined
    return this.#feedOf(entry)
  }

  /** Refuse new work, stop every run (queued prompts reported), settle open dialogs `aborted`, close the store. */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#drain()
    return this.#shutdown
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
    // Every frame sent is at or below its thread's reserved ceiling already; nothing is left to flush.
    this.#store.close()
  }

  /** An admitted prompt and the thread's row, in one commit. */
  #admitted(threadId: string, request: { message: string; admission: 'enqueue' | 'reject'; deliverAs: 'steer' | 'followUp' }, outcome: Extract<PromptOutcome, { kind: 'admitted' }>): void {
    const entry = this.#entries.get(threadId)
    if (!entry) return
    entry.record = { ...entry.record, updatedAt: Date.now(), run: Math.max(entry.record.run, entry.live?.run ?? 0, outcome.run) }
    const fate = this.#early.take(threadId, outcome.messageId)
    this.#store.admitPrompt(
      {
        threadId,
        messageId: outcome.messageId,
        text: request.message,
        admission: request.admission,
        deliverAs: request.deliverAs,
        queued: outcome.queued,
        run: outcome.run,
        acceptedAt: Date.now(),
        ...(fate ? { fate } : {}),
      },
      { ...entry.record, seq: entry.journal.ceiling },
    )
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
    if (!entry || entry.deleting) return { kind: 'unknown' }
    const { model, thinkingLevel, cwd } = entry.record
    const created = await this.create({ model, ...(thinkingLevel ? { thinkingLevel } : {}), ...(cwd ? { cwd } : {}), ...(title ? { title } : {}) })
    if (created.kind !== 'created') return { kind: 'invalid', reason: created.kind === 'invalid' ? created.reason : 'no new thread id was free' }
    return { kind: 'command-done', command: 'new', summary: this.get(created.threadId)! }
  }

  /** `/compact`: between runs, like a model change. */
  async #compact(threadId: string, instructions: string): Promise<CommandOutcome> {
    const entry = this.#entries.get(threadId)
    if (!entry || entry.deleting) return { kind: 'unknown' }
    const live = await this.#currentLive(entry)
    if (!live?.live) return { kind: 'invalid', reason: 'nothing to compact yet' }
    if (live.busy) return { kind: 'busy' }
    try {
      await live.compact(instructions)
    } catch (error) {
      return { kind: 'invalid', reason: `compaction failed: ${error instanceof Error ? error.message : String(error)}` }
    }
    await this.#touch(threadId)
    return { kind: 'command-done', command: 'compact', summary: this.#summary(entry) }
  }

  async #remember(threadId: string, request: CreateRequest & { model: string; cwd: string }): Promise<void> {
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
    this.#entries.set(threadId, { record, journal: new ThreadJournal(threadId, this.#store, { ceiling: 0, run: 0 }, this.#early, this.#options.log) })
  }

  async #touch(threadId: string): Promise<void> {
    const entry = this.#entries.get(threadId)
    if (!entry) return
    entry.record = { ...entry.record, updatedAt: Date.now(), run: Math.max(entry.record.run, entry.live?.run ?? 0) }
    this.#store.putThread({ ...entry.record, seq: entry.journal.ceiling })
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
    entry.feedLoading ??= this.#options.runtimes.readTranscript(entry.record.threadId).then(make, () => make([]))
    return entry.feedLoading
  }

  /**
   * A cold thread nobody follows keeps no feed: its transcript is on disk and its seq in the entry
   * (the store holds the ceiling above it),
   * so memory stays with the threads people are actually using.
   */
  #releaseFeed(entry: Entry): void {
    const feed = entry.feed
    if (!feed || feed.followerCount > 0 || entry.building || entry.live?.live) return
    entry.record = { ...entry.record, seq: feed.seq }
    entry.feed = undefined
    entry.feedLoading = undefined
  }

  /** The thread's current live thread, waiting for one that is being built. */
  async #currentLive(entry: Entry): Promise<LiveThread | undefined> {
    if (entry.building) return entry.building.catch(() => entry.live)
    return entry.live
  }

  #ensureLive(threadId: string): Promise<LiveThread> {
    const entry = this.#entries.get(threadId)
    if (!entry) return Promise.reject(new Error(`unknown thread ${threadId}`))
    if (entry.live?.live) return Promise.resolve(entry.live)
    entry.building ??= this.#build(entry).finally(() => {
      entry.building = undefined
    })
    return entry.building
  }

  async #build(entry: Entry): Promise<LiveThread> {
    // A thread going cold releases its runtime first; never build a second one beside it.
    if (entry.live) await entry.live.released
    const feed = await this.#feedOf(entry)
    const live = new LiveThread({
      threadId: entry.record.threadId,
      feed,
      run: entry.record.run,
      idleMs: this.#options.idleMs,
      log: this.#options.log,
      onRetired: (thread) => this.#retired(entry, thread),
    })
    for (const listener of this.#liveListeners) listener(live, 'started')
    try {
      const { threadId, model, thinkingLevel, cwd } = entry.record
      const runtime = await this.#options.runtimes.create({
        threadId,
        model,
        ...(thinkingLevel ? { thinkingLevel } : {}),
        cwd: cwd ?? this.#options.workspaces.default,
        ui: live.ui,
      })
      if (this.#entries.get(entry.record.threadId) !== entry || entry.deleting || this.#closing) {
        await runtime.dispose()
        throw new ThreadGone(this.#closing ? 'closing' : 'deleted')
      }
      entry.live = live
      live.attach(runtime)
      return live
    } catch (error) {
      live.actor.stop()
      for (const listener of this.#liveListeners) listener(live, 'retired')
      throw error
    }
  }

  #retired(entry: Entry, thread: LiveThread): void {
    if (entry.live === thread) {
      entry.record = { ...entry.record, run: Math.max(entry.record.run, thread.run), seq: entry.feed?.seq ?? entry.record.seq }
      if (!entry.deleting && !this.#closing) {
        try {
          this.#store.putThread({ ...entry.record, seq: entry.journal.ceiling })
        } catch (error) {
          this.#options.log?.('error', `store write failed: ${String(error)}`)
        }
      }
      void thread.released.then(() => {
        if (entry.live !== thread) return
        entry.live = undefined
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
      title: entry.record.title,
      model: entry.record.model,
      ...(entry.record.thinkingLevel ? { thinkingLevel: entry.record.thinkingLevel } : {}),
      cwd: entry.record.cwd ?? this.#options.workspaces.default,
      live: status.live,
      busy: status.busy,
      run: status.run,
      openDialogs: view?.openDialogs.length ?? 0,
      createdAt: entry.record.createdAt,
      updatedAt: entry.record.updatedAt,
    }
  }
}
