/**
 * One threadhost process as a node of a cluster (docs/flows/cluster.md): it joins, keeps every
 * node's list of threads the same (the index, node-index.ts), serves any thread's follows from the thread's log
 * (a mirror per followed thread), owns the threads whose commands reach it first, and takes over
 * the threads of a node whose lease lapsed (takeover-scan.ts).
 *
 * Owning a thread: the owner record is taken by compare-and-set, then the thread's log is read to
 * its end and the node's first append — its epoch — is conditional on that end, so it fences
 * whoever wrote before. The node's feed of the thread starts from the log's fold (seq continues,
 * never reused); what the previous owner left open is settled there and then, once, as frames:
 * every open question `dialog-settled aborted`, every accepted prompt with no fate
 * `prompt-rejected owner-lost`, the run `settled {aborted}`. Each frame the feed appends goes to
 * the log; followers everywhere (the owner's own included) read them back from the log.
 */
import type { ThreadView } from '../../shared/projection.js'
import type { Feed } from '../feed.js'
import { encodeObservation } from '../frame.js'
import type { Log } from '../store/journal.js'
import { openEnds } from '../open-ends.js'
import type { SearchHit } from '../thread-search.js'
import type { ClusterHooks } from '../thread-registry.js'
import { fenceGuard } from './fence-guard.js'
import { LogWriter } from './log-writer.js'
import { NodeIndex, type IndexedRegistry } from './node-index.js'
import { EngineAway, type ClusterEngine, type CommandReply, type CommandRequest, type NodeInfo, type Ownership } from './port.js'
import { formatsOnRejoin, leftForOtherFormat, OtherRecordFormat } from './record-format.js'
import { TakeoverScan } from './takeover-scan.js'
import { NodeMirrors } from './node-mirrors.js'
import { PromptRecords } from './prompt-records.js'
import type { KeyedAdmission } from './mirror-state.js'
import { lastFrame, type ThreadMirror } from './thread-mirror.js'

/** What the node needs of the thread registry (thread-registry.ts). */
export interface ClusterRegistry extends IndexedRegistry {
  attachCluster(hooks: ClusterHooks): void
  watchFeeds(watcher: (threadId: string, feed: Feed) => void): () => void
  ownFeed(threadId: string): Promise<Feed | undefined>
  indexed(threadId: string, createdAt: number, revision: number | undefined): void
  fence(threadId: string): Promise<void>
  rewriteRow(threadId: string, always: boolean): void
  onLiveChange(listener: (thread: { threadId: string }, event: 'started' | 'retired') => void): () => void
}

/** How long a command waits for the owner's answer before the sender answers 503. */
export const COMMAND_TIMEOUT_MS = 5000
/** A release the engine did not answer (a timeout under load, a blip) is tried again, this often. */
const RELEASE_ATTEMPTS = 5
const RELEASE_RETRY_MS = 100

interface Owned {
  ownership: Ownership
  writer: LogWriter
  stopServing: () => void
  attached: WeakSet<Feed>
  /** The feed this node writes the thread's frames from: where a keyed prompt's expected receipt is read. */
  feed?: Feed
}

/**
 * A command counted as running here, as it began: the thread's writer then, taken in the same turn as
 * the ownership check that counted it. Its answer waits for that writer (`flushed`).
 */
export interface CommandStart {
  readonly writer: LogWriter
}

/** A command that runs here (`ClusterNode.dispatch`), and how it began. */
export interface RunsHere {
  local: CommandStart
}

/** What answers the commands on a thread this node owns: `began` is how the command counted here began. */
export type OwnerCommandHandler = (request: CommandRequest, answer: (reply: CommandReply) => void, began: CommandStart) => Promise<CommandReply>

export class ClusterNode {
  readonly #owned = new Map<string, Owned>()
  readonly #opening = new Map<string, Promise<boolean>>()
  readonly #mirrors: NodeMirrors
  /** Threads with a runtime on this node, and commands running here per thread: what keeps an owned thread from being given back. */
  readonly #liveHere = new Set<string>()
  readonly #commandsHere = new Map<string, number>()
  /** Threads being stopped here because another node owns them now (`#lose`). */
  readonly #losing = new Set<string>()
  /** The node's side of the cluster's index of threads, and of a search across the cluster (node-index.ts). */
  readonly #index: NodeIndex
  /** What a prompt's records in the log are, and what its 202 waits for (prompt-records.ts). */
  readonly #prompts = new PromptRecords((threadId) => this.#owned.get(threadId))
  #handler?: OwnerCommandHandler
  readonly #scan: TakeoverScan
  #stopped = false
  #stopping?: Promise<void>
  /** A graceful stop under way (server/graceful-stop.ts): no thread is taken here any more. */
  #draining = false
  /** Rejoins started (see #rejoin): only the newest may bring the node back. */
  #rejoins = 0
  #mustStopCalled = false
  /** Between a lost lease and the rejoin: this node owns nothing and takes nothing. */
  #lost = false

  constructor(
    readonly engine: ClusterEngine,
    private readonly registry: ClusterRegistry,
    private readonly options: {
      fileView: (threadId: string) => Promise<ThreadView>
      ringSize?: number
      log?: Log
      /** Monotonic ms for the scan's timing (performance.now by default; a test's own clock). */
      clock?: () => number
      /** How many of a thread's records its log's checkpoints are apart at least (node-mirrors.ts). */
      checkpointEvery?: number
      /**
       * Called once when the node, joining again after losing its lease, may not serve on: a live node
       * writes another record format (`OtherRecordFormat`), or asking the engine failed for 30 s otherwise
       * than with the engine away. It then holds no lease and owns nothing, and the process is to stop
       * (open-host.ts). Not called once the node drains or stops.
       */
      onMustStop?: (error: Error) => void
    },
  ) {
    this.#index = new NodeIndex(engine, registry, () => this.self)
    this.#mirrors = new NodeMirrors(engine.logs, {
      fileView: options.fileView,
      owns: (threadId) => this.owns(threadId),
      // Taking it counts: a mirror idled out while `#open` reads the log would leave it a stopped one.
      holds: (threadId) => this.#owned.has(threadId) || this.#opening.has(threadId),
      ringSize: options.ringSize,
      log: options.log,
      checkpointEvery: options.checkpointEvery,
    })
    this.#scan = new TakeoverScan({
      engine: this.engine,
      life: () => this.self.id,
      now: () => this.#now(),
      mayTake: () => !this.#lost && !this.#stopped && !this.#draining,
      lost: () => this.#lost,
      holds: (threadId) => this.#owned.has(threadId) || this.#opening.has(threadId),
      open: (threadId) => this.open(threadId),
      // What the dead node left open is reported; with no runtime here the thread is given back at once.
      tookOver: (threadId) => void this.#giveBackIfAtRest(threadId),
      giveBack: (ownership, still) => void giveBack(this.engine.owners, ownership, this.options.log, still),
      log: this.options.log,
    })
  }

  get self(): NodeInfo {
    return this.engine.membership.self
  }

  /** Joins, then hooks into the registry: must run before anything is served. */
  async start(): Promise<void> {
    const { membership } = this.engine
    await membership.join()
    const other = await leftForOtherFormat(membership)
    if (other) throw other
    membership.onLost(() => void this.#rejoin().catch((error: unknown) => this.options.log?.('error', `cluster: joining again after the lease was lost failed: ${String(error)}`)))
    this.registry.attachCluster({
      follow: (id, after) => this.follow(id, after),
      base: (id) => this.#mirrors.base(id),
      fence: fenceGuard({ name: () => this.self.name, leaseCurrent: () => this.engine.membership.current(), owns: (id) => this.owns(id) }),
      inLog: (id) => this.flushed(id),
      deleted: (id) => this.threadDeleted(id),
    })
    this.registry.watchFeeds((threadId, feed) => this.#attach(threadId, feed))
    this.registry.onLiveChange(({ threadId }, event) => {
      if (event === 'started') return void this.#liveHere.add(threadId)
      this.#liveHere.delete(threadId)
      void this.#giveBackIfAtRest(threadId)
    })
    await this.#index.start()
    this.#scan.start()
  }

  /** A search every live node answers from its own message index (cluster-search.ts). */
  async search(q: string, limit = 50): Promise<SearchHit[]> {
    const { cluster } = await this.health()
    return this.#index.search(q, limit, cluster.nodes.filter((name) => name !== this.self.name).length)
  }

  /** The owner's side of the command bus: how this node answers a command sent to a thread it owns. */
  serveWith(handler: OwnerCommandHandler): void {
    this.#handler = handler
  }

  owns(threadId: string): boolean {
    const owned = this.#owned.get(threadId)
    return owned !== undefined && !owned.writer.fenced
  }

  /**
   * Where a command on the thread runs: here (`local`: this node owns it, or took it because nobody
   * did), or the owner's answer, or `unavailable` when the owner could not be reached in time. A
   * `local` answer counts the command as running here (in the same turn as the ownership check, so
   * the thread cannot be given back in between): the caller says `commandEnded` once it is over.
   */
  async dispatch(threadId: string, request: CommandRequest): Promise<RunsHere | 'unavailable' | CommandReply> {
    try {
      for (let attempt = 0; attempt < 20 && !this.#lost; attempt++) {
        if (this.owns(threadId)) return { local: this.#runHere(threadId) }
        const reply = await this.engine.commands.send(threadId, request, COMMAND_TIMEOUT_MS)
        if (reply === 'timeout') return 'unavailable'
        if (reply !== 'no-owner') return reply
        // Draining: the thread is for another node to take; the sender retries.
        if (this.#draining) return 'unavailable'
        if ((await this.open(threadId)) && this.owns(threadId)) return { local: this.#runHere(threadId) }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    } catch (error) {
      // The engine went away while the owner was being looked for: as a timeout, the caller retries.
      if (!(error instanceof EngineAway)) throw error
    }
    return 'unavailable'
  }

  /** Counts a command as running here if this node owns the thread (as `dispatch`'s `local`); undefined if it does not. */
  runsHere(threadId: string): CommandStart | undefined {
    if (this.#lost || !this.owns(threadId)) return undefined
    return this.#runHere(threadId)
  }

  /** Only where this node owns the thread (checked in the same turn). */
  #runHere(threadId: string): CommandStart {
    this.#commandsHere.set(threadId, (this.#commandsHere.get(threadId) ?? 0) + 1)
    return { writer: this.#owned.get(threadId)!.writer }
  }

  commandEnded(threadId: string): void {
    const left = (this.#commandsHere.get(threadId) ?? 1) - 1
    if (left > 0) return void this.#commandsHere.set(threadId, left)
    this.#commandsHere.delete(threadId)
    void this.#giveBackIfAtRest(threadId)
  }

  #atRest(threadId: string): boolean {
    return !this.#liveHere.has(threadId) && !this.#commandsHere.has(threadId) && !this.#stopped && !this.#lost
  }

  /**
   * A thread with no runtime and no command here is given back once what was written for it is in
   * its log: the next command, on any node, takes it anew. So a node owns only the threads it is
   * running, and a dead node's takeover is of those alone — not of every thread it ever ran.
   */
  async #giveBackIfAtRest(threadId: string): Promise<void> {
    const owned = this.#owned.get(threadId)
    if (!owned || !this.#atRest(threadId)) return
    if (!(await owned.writer.flushed())) return
    // Checked again after the wait; from here to the delete nothing else runs.
    if (this.#owned.get(threadId) !== owned || !this.#atRest(threadId)) return
    this.#owned.delete(threadId)
    owned.stopServing()
    owned.writer.close()
    await giveBack(this.engine.owners, owned.ownership, this.options.log)
  }

  /**
   * Resolves true once what this node wrote for the thread so far is in its log (false: fenced
   * meanwhile). With the `messageId` of a prompt accepted here: once its `accepted` record (a keyed
   * prompt's: its receipt, `admitted`) and what was written before it are — a 202 promises the prompt,
   * not the frames of the run it started. With how a command counted here `began`, once the thread left
   * this node: whether what was written to the writer it began on is all in the log.
   */
  flushed(threadId: string, messageId?: string, began?: CommandStart): Promise<boolean> {
    const prompt = messageId === undefined ? undefined : this.#prompts.flushed(messageId)
    if (prompt) return prompt
    // A command asks the writer it began on: if the thread left this node meanwhile (lost, or released by a
    // graceful stop), that one says whether all written to it is in the log — an append on its way answered
    // by its outcome, a record dropped once it stopped counted as not in.
    const writer = began?.writer ?? this.#owned.get(threadId)?.writer
    return writer ? writer.flushed() : Promise.resolve(true)
  }

  /** The owner's name, for the thread's summary. */
  async ownerName(threadId: string): Promise<string | undefined> {
    if (this.owns(threadId)) return this.self.name
    const owner = await this.engine.owners.owner(threadId)
    return owner && (await this.engine.membership.isLive(owner.record.node)) ? owner.record.name : undefined
  }

  /**
   * The live nodes' names as the takeover scan last found them — it checks them every 250 ms and lists
   * them every 2 s, so a node that joined since shows at the next listing — or listed now when no scan
   * has for a second (draining, lease lost, the engine away). A load balancer polling health then costs
   * the engine nothing: a listing is a consumer on it.
   */
  async health(): Promise<{ node: string; cluster: { mode: ClusterEngine['mode']; nodes: string[] } }> {
    const names = this.#scan.liveNames() ?? (await this.engine.membership.live().catch(() => [])).map((n) => n.name)
    return { node: this.self.name, cluster: { mode: this.engine.mode, nodes: [...new Set(names)].sort() } }
  }

  /** Followers of the thread, on this node: the mirror of its log (node-mirrors.ts). */
  follow(threadId: string, after?: number): Promise<Feed | 'behind' | undefined> {
    return this.#mirrors.follow(threadId, after)
  }

  /** Monotonic: a step of the wall clock neither skips the scan's full read nor holds a rank's wait. */
  #now(): number {
    return this.options.clock?.() ?? performance.now()
  }

  /** Takes the thread if nobody holds it (or its holder's lease lapsed). False: another node has it. */
  open(threadId: string): Promise<boolean> {
    if (this.owns(threadId)) return Promise.resolve(true)
    let opening = this.#opening.get(threadId)
    if (!opening) {
      opening = this.#open(threadId).finally(() => this.#opening.delete(threadId))
      this.#opening.set(threadId, opening)
    }
    return opening
  }

  async #open(threadId: string): Promise<boolean> {
    if (this.#lost || this.#stopped || this.#draining) return false
    const { owners, membership } = this.engine
    const current = await owners.owner(threadId)
    const previous = current?.record.node
    if (previous !== undefined && previous !== this.self.id && (await membership.isLive(previous))) return false
    const life = this.self.id
    const ownership = await owners.acquire(threadId, { node: life, name: this.self.name }, current?.revision)
    if (!ownership) return false
    // The lease was lost meanwhile: the record names a life that is over; given back, for the next command to take.
    if (this.#lost || this.self.id !== life) {
      void owners.release(ownership).catch(() => {})
      return false
    }
    // The log to its end: the new feed starts from its fold, and the first append is conditional on it.
    const mirror = this.#mirrors.of(threadId)
    await mirror.ready()
    const end = await this.engine.logs.last(threadId).catch(async (error: unknown) => {
      // Not taken after all (the engine went away): the record goes back, or another node's command would
      // find the thread held by a live node that does not serve it.
      await owners.release(ownership).catch(() => {})
      throw error
    })
    // Stopped before it read that far, or after (this node stopping): not taken after all.
    if (!(await mirror.reached(end)) || mirror.stopped) {
      void giveBack(owners, ownership, this.options.log)
      return false
    }
    await this.registry.fence(threadId)
    const view = mirror.position > 0 ? mirror.feed?.view : undefined
    if (view) this.registry.adopt({ threadId, run: view.status.run })
    // The owner's followers get its records as soon as they are in the log: from the acknowledgement, not back through the reader.
    // A writer already lost (its append on its way refused after) must not take a newer ownership of the thread with it.
    const writer: LogWriter = new LogWriter(threadId, this.engine.logs, mirror.position, () => void (this.#owned.get(threadId)?.writer === writer && this.#lose(threadId)), this.options.log, (record, position) => this.#mirrors.get(threadId)?.appended(record, position))
    const owned: Owned = { ownership, writer, stopServing: () => {}, attached: new WeakSet() }
    // Lost (or stopped) while it read the log: what the loss gave up did not include this thread yet. Given
    // back, so that the next command through any node takes it at once.
    if (this.#lost || this.#stopped || this.self.id !== life) {
      void owners.release(ownership).catch(() => {})
      return false
    }
    this.#owned.set(threadId, owned)
    // A delete whose owner went before the engine forgot what came before it: this node does it now.
    mirror.forgetDeleted()
    const epoch = { kind: 'epoch' as const, node: this.self.id, name: this.self.name, revision: ownership.revision, seq: view?.seq ?? 0 }
    if (view) {
      writer.push(epoch)
      writer.epochWritten = true
    }
    const feed = await this.registry.ownFeed(threadId)
    if (feed && view && previous !== undefined && previous !== this.self.id) this.#settleLeftOpen(feed, view, mirror)
    if (!(await writer.flushed())) return false
    const stopServing = await this.engine.commands.serve(threadId, (request, answer) => this.#serve(threadId, request, answer))
    // Lost while the epoch was on its way (it may land all the same): nothing serves a thread this node gave up.
    if (this.#owned.get(threadId) !== owned) {
      stopServing()
      return false
    }
    owned.stopServing = stopServing
    if (previous !== undefined && previous !== this.self.id) this.options.log?.('info', `[${threadId}] cluster: taken over from ${current?.record.name}`)
    return true
  }

  /** What the previous owner left open, settled once, on the feed this node now writes: its accepted prompts handed back first. */
  #settleLeftOpen(feed: Feed, view: ThreadView, mirror: ThreadMirror): void {
    for (const [messageId, text] of mirror.openPrompts) feed.append({ type: 'prompt-rejected', messageId, reason: 'owner-lost', text })
    for (const observation of openEnds(view)) feed.append(observation)
  }

  async #serve(threadId: string, request: CommandRequest, answer: (reply: CommandReply) => void): Promise<CommandReply> {
    const handler = this.#handler
    // Not serving yet, or the thread was given back as this request arrived: the sender retries.
    if (!handler || !this.owns(threadId)) return { status: 503, headers: { 'retry-after': '1' }, body: JSON.stringify({ error: `thread ${threadId} has no owner on this node right now; retry`, code: 'OWNER_CHANGED' }) }
    const began = this.#runHere(threadId)
    try {
      return await handler(request, answer, began)
    } finally {
      this.commandEnded(threadId)
    }
  }

  /** A feed this node loads for a thread it owns writes every frame to the thread's log. */
  #attach(threadId: string, feed: Feed): void {
    const owned = this.#owned.get(threadId)
    if (!owned || owned.attached.has(feed)) return
    owned.attached.add(feed)
    owned.feed = feed
    const { writer } = owned
    if (!writer.epochWritten) {
      writer.epochWritten = true
      writer.push({ kind: 'epoch', node: this.self.id, name: this.self.name, revision: owned.ownership.revision, seq: feed.seq, base: feed.snapshot() })
    }
    // The row is written again (from the next turn) as this node takes the thread, as each run ends and as
    // the thread moves to another branch: other nodes list the thread from it (its preview), and search
    // it through this node, whose message index has it as it stands (cluster-search.ts).
    const rewriteRow = () => setImmediate(() => this.owns(threadId) && this.registry.rewriteRow(threadId, !this.#index.wroteRow(threadId)))
    rewriteRow()
    // The frame the feed encoded for its followers, not a second encoding of it.
    feed.observe((o) => {
      writer.push({ kind: 'frames', frames: [(lastFrame(feed, o) ?? encodeObservation(o)).toString('utf8')] })
      if (o.type === 'settled' || o.type === 'branch') rewriteRow()
    })
  }

  /** The record at a prompt's admission, before its 202 (prompt-records.ts): what a takeover hands back if it never ran. */
  promptAccepted(threadId: string, messageId: string, text: string, key?: { key: string; fingerprint: string; run: number }): void {
    this.#prompts.accepted(threadId, messageId, text, key)
  }

  /** A keyed prompt's receipt, when it is not the one its accepted record holds (prompt-records.ts). */
  promptAdmitted(threadId: string, messageId: string, run: number, queued: boolean): void {
    this.#prompts.admitted(threadId, messageId, run, queued)
  }

  /**
   * The thread was deleted here, its owner, its runtime and feed gone: a `deleted` record ends what its
   * log says, so a thread made again under the id starts empty on every node, its seqs after the deleted
   * one's; the owner's mirror then removes what came before it from the engine (thread-mirror.ts).
   * Resolves whether the record is in the log: false once the thread is not this node's (fenced, or the
   * lease lost) — its files are then the next owner's, and the delete is answered 503 (cluster-http.ts).
   */
  async threadDeleted(threadId: string): Promise<boolean> {
    const owned = this.#owned.get(threadId)
    if (!owned) return false
    const seq = Math.max(owned.feed?.seq ?? 0, this.#mirrors.get(threadId)?.feed?.seq ?? 0)
    owned.writer.push({ kind: 'deleted', seq })
    if (!(await owned.writer.flushed())) return false
    // Only now: until the record is in, every node lists the thread, so the delete's retry finds it. Before
    // the answer: a thread made again under the id right after must not lose its row to this delete.
    this.#index.deleting(threadId)
    await this.engine.index.delete(threadId).catch((error: unknown) => this.options.log?.('warn', `cluster: index write failed: ${String(error)}`))
    return true
  }

  promptSettled(threadId: string, messageId: string, withdrawn = false): void {
    this.#prompts.settled(threadId, messageId, withdrawn)
  }

  /**
   * A prompt admitted on this thread under `key`, as its log says (asked on the owner, whose mirror
   * has read the log to its end): the key's answer when the node that admitted it died before
   * recording one in the engine's keys.
   */
  keyedAdmission(threadId: string, key: string): KeyedAdmission | undefined {
    return this.owns(threadId) ? this.#mirrors.get(threadId)?.keyed.get(key) : undefined
  }

  /** A request names a thread this node does not list: its row is asked of the index (node-index.ts). */
  lookUp(threadId: string): Promise<void> {
    return this.#index.lookUp(threadId)
  }

  /**
   * Another node's append landed before ours (or this node's lease is gone): this one stops running
   * the thread. From the moment it is out of `#owned`, the fence guard refuses the thread's tools and
   * session-file writes here; the dispose aborts the run, which kills the process group of each tool
   * it started (pi's bash runs each command detached, in a group of its own); what the dispose reports
   * goes nowhere (the writer is closed). The thread's follows here end, so their tabs reconnect with
   * their last seq and resume from the log the new owner writes.
   */
  async #lose(threadId: string): Promise<void> {
    const owned = this.#owned.get(threadId)
    if (!owned) return
    this.#owned.delete(threadId)
    owned.stopServing()
    owned.writer.lose()
    this.options.log?.('warn', `[${threadId}] cluster: fenced; another node owns the thread, its run here is stopped`)
    this.#mirrors.drop(threadId)
    this.#losing.add(threadId)
    try {
      await this.registry.fence(threadId)
    } finally {
      this.#losing.delete(threadId)
    }
  }

  /**
   * For a row of the thread written now: whether the engine may still take it later. A row written
   * under this node's ownership may wait for the engine (away, say) past the moment that ownership is
   * lost; the next owner's row is newer then. A thread given back at rest is not lost: its row stands.
   */
  rowStill(threadId: string): (() => boolean) | undefined {
    const writer = this.#owned.get(threadId)?.writer
    return writer && (() => !writer.fenced)
  }

  /** This node's row of the thread made at `createdAt` is in the index at `revision` (cluster-store.ts); undefined: it was not written. */
  rowIndexed(threadId: string, createdAt: number, revision: number | undefined): void {
    this.registry.indexed(threadId, createdAt, revision)
  }

  /** Whether the node is stopping the thread because another node owns it now: the row it leaves here is this node's alone (cluster-store.ts). */
  losing(threadId: string): boolean {
    return this.#losing.has(threadId)
  }

  /** This node's lease is gone: it owns nothing any more (its threads are another node's to take). */
  async #loseAll(): Promise<void> {
    await Promise.all([...this.#owned.keys()].map((threadId) => this.#lose(threadId)))
  }

  /**
   * The lease was lost (self-fenced, or the renewal refused): every thread is given up and its run
   * stopped, then the node joins again as a new life and serves on. What the old life left open is
   * reported by whichever node takes each thread (this one included): the old life is never live again.
   */
  async #rejoin(): Promise<void> {
    // The newest loss's rejoin is the one that counts: a lease lost again while an older one waited on the
    // engine starts another, and the older one gives up.
    const rejoin = ++this.#rejoins
    const current = () => rejoin === this.#rejoins && !this.#stopped
    this.#lost = true
    await this.#loseAll()
    if (!current()) return
    await this.engine.membership.rejoin()
    // Until the engine lists the live nodes' formats, the node is not back; one of another format keeps it out.
    const mustStop = await formatsOnRejoin(this.engine.membership, current, this.options.log)
    if (mustStop) return this.#mustStop(mustStop)
    if (!current()) return
    this.#scan.rejoined()
    this.#lost = false
  }

  /** Once, and not once the node drains or stops: it may not serve on, and the process is to stop. */
  #mustStop(error: Error): void {
    this.options.log?.('error', `${error instanceof OtherRecordFormat ? `cluster: ${error.message}` : error.message}; this node stops`)
    if (this.#mustStopCalled || this.#draining || this.#stopped) return
    this.#mustStopCalled = true
    this.options.onMustStop?.(error)
  }

  /** The first step of a graceful stop: from now on this node takes no thread (it keeps those it owns until `stop`). */
  drain(): void {
    this.#draining = true
  }

  get draining(): boolean {
    return this.#draining
  }

  /** Gives up every thread (a clean stop: another node takes them on their next command), then leaves. Once. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop()
    return this.#stopping
  }

  async #stop(): Promise<void> {
    this.#stopped = true
    this.#scan.stop()
    this.#index.stop()
    for (const [threadId, owned] of this.#owned) {
      owned.stopServing()
      await owned.writer.flushed()
      // Not this node's from here (as a give-back at rest): nothing runs on it or writes to its closed writer.
      this.#owned.delete(threadId)
      owned.writer.close()
      await giveBack(this.engine.owners, owned.ownership, this.options.log)
    }
    await this.#mirrors.stop()
    await this.engine.close()
  }
}

/**
 * Gives a thread back, tried again a few times. A record left behind names a node that no longer
 * serves the thread: while that node lives, a command through another node finds no owner it may
 * take, and once it has left, the survivors take the thread over (its run reported aborted) where a
 * release lets the next command simply take it. `still`: whether it is still this node's to give
 * back, asked before each try.
 */
async function giveBack(owners: ClusterEngine['owners'], ownership: Ownership, log?: Log, still: () => boolean = () => true): Promise<void> {
  for (let attempt = 1; still(); attempt++) {
    try {
      return await owners.release(ownership)
    } catch (error) {
      if (attempt >= RELEASE_ATTEMPTS) return log?.('warn', `[${ownership.threadId}] cluster: giving the thread back failed (${String(error)})`)
      await new Promise((resolve) => setTimeout(resolve, RELEASE_RETRY_MS))
    }
  }
}
