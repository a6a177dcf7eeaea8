/**
 * The takeover scan (docs/flows/cluster.md, "a node dies"): a few times a second each node looks for
 * threads whose owner's lease lapsed. The first live node by rendezvous rank takes each at once, the
 * next a second later, and so on, so a dead node's threads spread over the survivors and a survivor
 * that is itself slow is stood in for. The scan also gives back a record of this node's life that
 * names a thread it neither owns nor is taking (a give-back the engine did not answer), and keeps the
 * live nodes as it last read them, which health answers from.
 */
import type { Log } from '../store/journal.js'
import { EngineAway, type ClusterEngine, type Ownership } from './port.js'

/** How often the node looks for threads whose owner's lease lapsed. */
const SCAN_EVERY_MS = 250
/**
 * With every node still live, the nodes and the owner records are read in full this often: less
 * than a lease (3 s, nats.ts) minus a scan, so a node is in some full read before its lease can end.
 */
const OWNERS_READ_EVERY_MS = 2000
/** How long health answers from the scan's view of the live nodes before it lists them itself. */
const HEALTH_SEEN_MS = 1000
/** The node ranked second for a dead node's thread waits this long per rank before trying. */
const RANK_DELAY_MS = 1000

/** What the scan needs of its node (cluster-node.ts). */
export interface ScanningNode {
  readonly engine: ClusterEngine
  /** This node's current life (its membership id). */
  life(): string
  /** Monotonic ms. */
  now(): number
  /** Whether the node may take threads now: not between a lost lease and its rejoin, not stopping or draining. */
  mayTake(): boolean
  /** Whether the node's lease is lost (until it rejoined). */
  lost(): boolean
  /** Whether the node owns the thread, or is taking it. */
  holds(threadId: string): boolean
  /** Takes the thread (owner-record compare-and-set, then its log read to the end); false: not taken. */
  open(threadId: string): Promise<boolean>
  /** A thread taken over from a dead node: what it left open is reported, and it goes back if nothing runs here. */
  tookOver(threadId: string): void
  /** Releases an owner record, asking `still` before each try. */
  giveBack(ownership: Ownership, still: () => boolean): void
  log?: Log
}

export class TakeoverScan {
  /** Threads whose owner was last seen dead, and since when (#now()): a lower-ranked node's wait counts from here. */
  readonly #deadSince = new Map<string, number>()
  /** The live nodes (id → name) and when the owner records were last read in full. */
  #lastLive = new Map<string, string>()
  #ownersReadAt = 0
  /** When a scan last found every node of #lastLive still live: what health answers from. */
  #liveSeenAt = -Infinity
  #scanning = false
  #timer?: ReturnType<typeof setInterval>

  constructor(private readonly node: ScanningNode) {}

  start(): void {
    this.#timer = setInterval(() => void this.once(), SCAN_EVERY_MS)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  /** The node rejoined under a new life: what it saw dead before counts for nothing now. */
  rejoined(): void {
    this.#deadSince.clear()
  }

  /** The live nodes' names as a scan found them in the last second; undefined when none has (draining, lease lost, the engine away). */
  liveNames(): string[] | undefined {
    return this.node.now() - this.#liveSeenAt < HEALTH_SEEN_MS ? [...this.#lastLive.values()] : undefined
  }

  /** One scan; none while one is still under way (with the engine slow or away they would only pile up). */
  async once(): Promise<void> {
    if (this.#scanning) return
    this.#scanning = true
    try {
      await this.#takeOverDead()
    } catch (error) {
      if (!(error instanceof EngineAway)) this.node.log?.('warn', `cluster: takeover scan failed: ${String(error)}`)
    } finally {
      this.#scanning = false
    }
  }

  async #takeOverDead(): Promise<void> {
    const node = this.node
    if (!node.mayTake()) return
    const { membership } = node.engine
    // The life this scan reads for: a lease lost while it reads makes the records naming it the old
    // life's, whose open ends the next life's takeover reports (see the give-back below).
    const life = node.life()
    const now = node.now()
    // Listing the nodes and reading every owner record cost the engine a consumer and a request per
    // thread. So most scans ask only whether the nodes live at the last full read still are (one read
    // each); the full read comes when one is not, while a takeover waits on its rank, and every
    // OWNERS_READ_EVERY_MS, which is shorter than a lease: a node that joined since the last full read
    // is still live at the next, so its lease's end is seen by the quick check as soon as anyone's.
    if (this.#deadSince.size === 0 && this.#lastLive.size > 0 && now - this.#ownersReadAt < OWNERS_READ_EVERY_MS) {
      const still = await Promise.all([...this.#lastLive.keys()].map((id) => membership.isLive(id)))
      if (still.every(Boolean)) return void (this.#liveSeenAt = now)
    }
    const live = await membership.live()
    const liveIds = new Set(live.map((n) => n.id))
    const owners = await node.engine.owners.list()
    this.#lastLive = new Map(live.map((n) => [n.id, n.name]))
    this.#ownersReadAt = this.#liveSeenAt = now
    // A thread no longer listed was released or taken meanwhile: nothing waits on it.
    for (const threadId of this.#deadSince.keys()) if (!owners.has(threadId)) this.#deadSince.delete(threadId)
    const current = () => node.life() === life && !node.lost()
    for (const [threadId, { record, revision }] of owners) {
      if (liveIds.has(record.node) || record.node === node.life()) {
        this.#deadSince.delete(threadId)
        // This node's record for a thread it neither owns nor is taking: a give-back the engine did not
        // answer (it was away). Left, it would name a live node that serves nothing; released by
        // compare-and-set, so a record this node wrote since is untouched.
        if (record.node === life && current() && !node.holds(threadId)) node.giveBack({ threadId, revision }, current)
        continue
      }
      const since = this.#deadSince.get(threadId) ?? now
      this.#deadSince.set(threadId, since)
      const rank = live
        .map((n) => n.id)
        .sort((a, b) => rendezvous(threadId, a) - rendezvous(threadId, b))
        .indexOf(node.life())
      if (rank < 0 || now - since < rank * RANK_DELAY_MS) continue
      if (!(await node.open(threadId))) continue
      this.#deadSince.delete(threadId)
      node.tookOver(threadId)
    }
  }
}

/** A stable pseudo-random rank of a node for a thread (FNV-1a of both). */
function rendezvous(threadId: string, nodeId: string): number {
  let hash = 0x811c9dc5
  for (const ch of `${threadId}\u0000${nodeId}`) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0
  return hash
}
