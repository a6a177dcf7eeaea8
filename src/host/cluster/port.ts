/**
 * The ports a host spread over several processes needs (docs/flows/cluster.md): who is alive
 * (membership), who owns each thread (owners), each thread's ordered record of what happened (the
 * thread log), a way to reach a thread's owner (the command bus), the list of threads every node
 * shows (the index) and the answers to `Idempotency-Key`s (keys). Three adapters implement them: the
 * engine's (NATS JetStream, nats.ts, loaded only with `--cluster`), one process on its SQLite store
 * (embedded.ts) and an in-process one (memory.ts); the contract tests hold all three to the same
 * rules. Nothing here knows HTTP, SQLite or NATS.
 *
 * The one rule everything else rests on (fencing): a thread's log is written only by an append
 * that names the sequence of the writer's own last record. A node that lost a thread (its lease
 * lapsed, another node took it) finds its next append refused, and never retries it blindly.
 */
import type { ThreadRow } from '../store/port.js'

/**
 * The shape of what nodes write to the engine (thread log, owner, member and key records), as a number:
 * raised by a change that a node of the previous one would misread (a log checkpoint's state has its own,
 * CHECKPOINT_FORMAT in mirror-state.ts, checked at the join the same way). A node joins only a cluster whose
 * live nodes all write its formats (record-format.ts), so nodes of one format may be restarted one at a
 * time, and a change of format is deployed to every node together. A member written before formats
 * were numbered wrote format 1. Format 2: the `deleted` record (a node of format 1 would pass it over,
 * and show a thread made again under a deleted one's id with the deleted one's history).
 */
export const RECORD_FORMAT = 2

/** A node's life in the cluster: a process has one id (a restart, or a node that fenced itself, gets a new one). */
export interface NodeInfo {
  /** Unique per process life: `name` plus a random suffix. */
  id: string
  /** The operator's `--node-name`. */
  name: string
  /** The `RECORD_FORMAT` the node's code writes. */
  format: number
  /**
   * The `CHECKPOINT_FORMAT` (mirror-state.ts) of the log checkpoints it keeps (1 on a lease written
   * before it was named). Checked at each join as the record format is: the log is trimmed below
   * checkpoints, so a node that cannot read another's loses what they held.
   */
  checkpointFormat: number
}

export interface Membership {
  /** This node's current life: a new id (same name) after `rejoin`. */
  readonly self: NodeInfo
  /** The nodes whose lease is current, this one included. */
  live(): Promise<NodeInfo[]>
  isLive(nodeId: string): Promise<boolean>
  /** Joins (the lease is taken) and keeps the lease renewed until `leave`. */
  join(): Promise<void>
  /**
   * Called each time this node's lease is lost (renewal refused, or not renewed in time): it must stop
   * owning anything, then `rejoin`. Once lost, a lease is never renewed again.
   */
  onLost(listener: () => void): void
  /**
   * After a loss, once the node has given up what its old life owned: joins again as a new life (new
   * id, same name), retrying until the engine takes it (or `leave`). The old life's lease is ended if it
   * is still there, so its threads are anyone's to take at once.
   */
  rejoin(): Promise<void>
  /**
   * Whether this node's lease is current right now: joined, not lost, and renewed within the
   * self-fence margin. Synchronous, so a node that wakes from a freeze knows before its next step.
   */
  current(): boolean
  leave(): Promise<void>
}

/** The owner record of a thread: which node life holds it. */
export interface OwnerRecord {
  node: string
  name: string
}

export interface Ownership {
  threadId: string
  /** The owner record's revision as this node wrote it: its fencing token for the record. */
  revision: number
}

export interface OwnerDirectory {
  /** The current record and its revision, if any. */
  owner(threadId: string): Promise<{ record: OwnerRecord; revision: number } | undefined>
  /**
   * Takes the thread: creates the record when there is none (`expected` undefined), or replaces the
   * record at `expected` (compare-and-set). Resolves undefined when another node won the race.
   */
  acquire(threadId: string, record: OwnerRecord, expected?: number): Promise<Ownership | undefined>
  /** Gives the thread up (only while the record is still this node's). */
  release(ownership: Ownership): Promise<void>
  /** Every thread and its owner (the takeover scan). */
  list(): Promise<Map<string, { record: OwnerRecord; revision: number }>>
}

/** What a thread log holds, in order. Frames are the exact SSE bytes the owner encoded, as text. */
export type ThreadRecord =
  /** A node took the thread; `base`: the view it started from, when the log held nothing before. */
  | { kind: 'epoch'; node: string; name: string; revision: number; seq: number; base?: unknown }
  | { kind: 'frames'; frames: string[] }
  /**
   * A prompt accepted (before its 202) or given its fate: what a takeover reports back `owner-lost`.
   * `key`: the request's `Idempotency-Key`, claimed in this same record, so a node that takes the
   * thread over knows it was admitted, with the receipt (`run`, `queued`) the owner expects the
   * machine to give it; `admitted` (keyed prompts only) is the machine's answer that went into the
   * 202, written only when it is not that receipt; `withdrawn` a prompt the machine refused (nothing of it ran).
   */
  | { kind: 'prompt'; op: 'accepted'; messageId: string; text: string; key?: { key: string; fingerprint: string; run: number; queued?: boolean } }
  | { kind: 'prompt'; op: 'admitted'; messageId: string; run: number; queued: boolean }
  | { kind: 'prompt'; op: 'settled'; messageId: string; withdrawn?: true }
  /**
   * The thread was deleted: nothing before this record is any thread's. A thread made again under its id
   * starts from an empty view at `seq`, the deleted thread's last (a seq is never used twice).
   */
  | { kind: 'deleted'; seq: number }
  /** Records made while the append before was in flight: one append, read in order. */
  | { kind: 'batch'; records: ThreadRecord[] }

/** An append refused because another writer appended since this one's last record. */
export class Fenced extends Error {
  constructor(readonly threadId: string, detail: string) {
    super(`thread ${threadId}: append refused (${detail}); another node owns it now`)
  }
}

/** The engine cannot be reached now (its connection is down): the same request may be tried again. */
export class EngineAway extends Error {
  constructor(detail = 'the connection to the engine is down') {
    super(detail)
  }
}

/**
 * A thread's log folded up to `position` (thread-mirror.ts): where a new reader starts instead of at the
 * log's first record. `state` is opaque to the engine. Any checkpoint is the fold of the records up to
 * its position, whoever wrote it and whenever; the log below the one before the newest is trimmed.
 */
export interface Checkpoint {
  position: number
  state: string
}

export interface ThreadLogs {
  /** The position of the thread's last record (0: none yet). */
  last(threadId: string): Promise<number>
  /**
   * Appends one record only if the thread's last record is at `expected`; resolves its position, rejects
   * `Fenced`. `id` names the append: the same id sent again (a retry after an answer that never came)
   * resolves the position of the record that landed, and writes nothing twice.
   */
  append(threadId: string, record: ThreadRecord, expected: number, id?: string): Promise<number>
  /**
   * Every record of the thread the log still holds after position `after` (0: from the first), in order,
   * then each new one as it lands, each with `previous`: the position of the record it was appended after
   * (its writer's last). A record whose `previous` is past the one delivered before it (or past `after`)
   * follows records the log no longer holds: it was trimmed below a checkpoint (`keepCheckpoint`).
   * `caughtUp` fires once the records that were there when it started have all been delivered.
   */
  read(threadId: string, onRecord: (record: ThreadRecord, position: number, previous?: number) => void, caughtUp: () => void, after?: number): { stop(): void }
  /** The thread's newest checkpoint kept: undefined when there is none. */
  checkpoint(threadId: string): Promise<Checkpoint | undefined>
  /**
   * Keeps `checkpoint` as the thread's newest — unless one at or past its position is kept (a stale
   * owner's, or the same one twice): that one stands, so the newest never goes back — then trims the
   * log: the records up to the checkpoint it replaced are removed. A reader that starts from either has
   * every record it needs; one still on an older checkpoint finds the records after it gone (`read`'s
   * `previous`) and starts again from the newest. A trim that fails is made by the next checkpoint's.
   */
  keepCheckpoint(threadId: string, checkpoint: Checkpoint): Promise<void>
  /**
   * Removes the thread's records before position `before` and a checkpoint of a position before it: what a
   * deleted thread wrote, once its `deleted` record is at `before`. The records from `before` on, and a
   * checkpoint kept after it, stay: they are a thread's made again under the id.
   */
  forget(threadId: string, before: number): Promise<void>
}

/** A command as the receiving node passes it on, and the owner's answer, both verbatim. */
export interface CommandRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
  /**
   * A keyed command's request digest (its `Idempotency-Key` fingerprint), as the receiving node
   * validated it: the owner claims the key as the command arrives, ahead of its own write guard.
   */
  fingerprint?: string
}
export interface CommandReply {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * How an owner answers a command: `answer` sends the reply at once (the first reply sent is the one
 * the sender gets), for an answer that is final before the work the command set off is over; the
 * promise's value is sent if `answer` was never called.
 */
export type CommandHandler = (request: CommandRequest, answer: (reply: CommandReply) => void) => Promise<CommandReply>

export interface CommandBus {
  /**
   * Answers the thread's commands while this node owns it; resolves, once the engine routes them here
   * (a command sent after that reaches this node, never "no responders"), to what stops answering.
   */
  serve(threadId: string, handler: CommandHandler): Promise<() => void>
  /** `no-owner`: nobody answers for the thread (nobody owns it, or its owner is gone). */
  send(threadId: string, request: CommandRequest, timeoutMs: number): Promise<CommandReply | 'no-owner' | 'timeout'>
  /**
   * Answers every node's `askAll` on `topic` (a question every node answers alike; `undefined`: no answer
   * from here); resolves, once the engine routes it here, to what stops answering.
   */
  serveAll(topic: string, handler: (body: string) => Promise<string | undefined>): Promise<() => void>
  /** `body` to every node serving `topic`: the answers that came within `timeoutMs`, `expected` at most; none while the engine is away. */
  askAll(topic: string, body: string, expected: number, timeoutMs: number): Promise<string[]>
}

/** A thread's row as the index holds it: with the node that wrote it, whose message index has the thread as the row says it. */
export type IndexRow = ThreadRow & { writer?: string }

/**
 * The threads list, the same on every node: rows written by whoever changed them. Every change has a
 * revision, higher than every change before it: a node that wrote a row knows a notice of its id with
 * a lower revision, heard after, for an older one.
 */
export interface ThreadIndex {
  /**
   * Resolves the revision the row was written at (or that of a newer row of the thread that came while
   * it waited and was written in its place); undefined when it was not written — dropped, or a delete of
   * the thread came while it waited and went in its place. `still`: asked before each attempt to write
   * the row (a write the engine did not take is tried again, the newest row of a thread only); once it
   * says no, the row is dropped — it was written under an ownership this node has lost since, and the
   * thread's next owner's row is newer.
   */
  put(row: IndexRow, still?: () => boolean): Promise<number | undefined>
  delete(threadId: string): Promise<void>
  /** The thread's row now, with its revision: what a node asks of a thread it has not heard of yet. */
  get(threadId: string): Promise<{ row: IndexRow; revision: number } | undefined>
  /** Every row now (then `ready`), and each change after, each with its revision. */
  watch(onPut: (row: IndexRow, revision: number) => void, onDelete: (threadId: string, revision: number) => void): Promise<{ stop(): void }>
}

/** How long a key's claim and answer are kept: the same as one process keeps them (store/port.ts). */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000

/** What a key holds: who claimed it for which request, and the answer once recorded. */
export interface KeyRecord {
  /** The request's digest: the same key with another request is refused. */
  fingerprint: string
  /** The node (NodeInfo.id) that claimed it, and runs the request. */
  node: string
  /** Absent while the claimer is still running the request. */
  answer?: { status: number; body: string }
  at: number
}

export type KeyClaim =
  /** This caller claimed the key: it runs the request, then records the answer or releases the claim. */
  | { claimed: true; revision: number }
  /** Someone claimed it first: its record (an answer to replay, or a claim still running) at `revision`. */
  | { claimed: false; record: KeyRecord; revision: number }

/**
 * `Idempotency-Key`s shared by every node: the first claimer of a key runs the request, everyone
 * after gets its recorded answer (or waits while it runs). Kept KEY_TTL_MS after the last write.
 */
export interface IdempotencyKeys {
  /**
   * Claims the key for a request when nobody holds it (gone past the TTL, or released). With
   * `expected`, takes the key over from a claimer that is gone: only while the record is still at
   * that revision (compare-and-set).
   */
  claim(key: string, fingerprint: string, node: string, expected?: number): Promise<KeyClaim>
  /** The claimer's record with its answer, under its claim (refused, silently, once the claim is not its own). */
  record(key: string, revision: number, record: KeyRecord): Promise<void>
  /** Gives the claim up (the request failed, nothing recorded): the next claimer runs it. */
  release(key: string, revision: number): Promise<void>
}

/** One engine's adapters. */
export interface ClusterEngine {
  readonly mode: 'nats' | 'memory' | 'embedded'
  readonly membership: Membership
  readonly owners: OwnerDirectory
  readonly logs: ThreadLogs
  readonly commands: CommandBus
  readonly index: ThreadIndex
  readonly keys: IdempotencyKeys
  close(): Promise<void>
}

/** A thread id as one subject or key token (no `.`, `*`, `>`, blanks): URL-safe base64 of its UTF-8 bytes. */
export function tokenOf(threadId: string): string {
  return Buffer.from(threadId, 'utf8').toString('base64url') || '_'
}

export function threadOfToken(token: string): string {
  return token === '_' ? '' : Buffer.from(token, 'base64url').toString('utf8')
}
