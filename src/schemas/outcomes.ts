/**
 * One outcome vocabulary per command, and the one table that says what each outcome is on the wire.
 *
 * A command (create, update, fork, prompt, stop, answer) comes to one of a few outcomes, each a
 * `{kind}` literal: the machines refuse with these literals, the host answers with them, and the
 * tables below map each to its HTTP status, a stable error `code` and its human text. Nothing else
 * maps an outcome to a status: a route validates, asks the host, and replies with the table's entry
 * (src/server/responses.ts `replyWith`). A client switches on `code`, never on a status number.
 *
 * The codes are part of the contract (docs/api.md lists them): a code is never renamed or reused,
 * and its text may change. The older fields (`reason`, `refusal`, `suggestions`, `limit`) stay.
 */
import { Type } from 'typebox'
import type { ThreadSummary } from './http.js'
import type { ChangesReport } from './changes.js'

/** Every error body's `code`. */
export const ERROR_CODES = [
  // before any route runs (the guard, the parser, the error handler)
  'BAD_REQUEST',
  'TOKEN_REQUIRED',
  'FOREIGN_ORIGIN',
  'ROUTE_NOT_FOUND',
  'BODY_TOO_LARGE',
  'SHUTTING_DOWN',
  'INTERNAL',
  // cluster mode: the thread's owner, or a keyed request's first run, on another node
  'OWNER_UNREACHABLE',
  'OWNER_CHANGED',
  'KEY_RUNNING',
  'NOT_OWNER',
  'FOLLOW_BEHIND',
  // the write guards
  'IDEMPOTENCY_KEY_REUSED',
  'DISK_FULL',
  'READ_ONLY',
  // what a command came to
  'THREAD_NOT_FOUND',
  'THREAD_NOT_LIVE',
  'THREAD_TAKEN',
  'THREAD_BUSY',
  'THREAD_IDLE',
  'THREAD_UNAVAILABLE',
  'THREAD_DELETED',
  'RUN_STALE',
  'PROMPT_TOO_LONG',
  'IMAGE_TOO_LARGE',
  'IMAGES_NOT_SUPPORTED',
  'PROMPT_WITHDRAWN',
  'UNKNOWN_COMMAND',
  'COMMAND_REFUSED',
  'SETTINGS_REFUSED',
  'MESSAGE_NOT_FOUND',
  'FORK_REFUSED',
  'FORK_CANCELLED',
  'RUNTIME_FAILED',
  'QUESTION_NOT_OPEN',
  'ANSWER_REFUSED',
  'INPUT_REFUSED',
  'INPUT_LEASED',
  'MACHINE_NOT_FOUND',
  'SHORTCUT_NOT_FOUND',
  'VERSION_CANCELLED',
  // what the agent changed (checkpoints)
  'NO_CHECKPOINT',
  'NOTHING_TO_RESTORE',
  'CHANGES_CONFLICT',
  'RESTORE_FAILED',
  'WORKTREE_HELD',
] as const
export type ErrorCode = (typeof ERROR_CODES)[number]
export const ErrorCode = Type.Enum(ERROR_CODES, { description: 'stable: switch on it (the `error` text is for people and may change)' })

// ——— the vocabularies ———
// The host answers with these (src/host); the machines refuse with the literals named here.

/** Why the thread machine refuses a prompt (`prompt.refused`). */
export type PromptRefusal = 'busy' | 'stale-run' | 'disposed'
/** Why the thread machine refuses a stop (`abort.refused`). */
export type AbortRefusal = 'idle' | 'stale-run' | 'not-live'

/** A store write that could not be made: the data dir is full, or read-only. */
export type WriteFault = { kind: 'full' | 'read-only'; code: string; message: string }

export type CreateOutcome = { kind: 'created'; threadId: string } | { kind: 'taken' } | { kind: 'invalid'; reason: string }

export type UpdateOutcome =
  | { kind: 'updated'; summary: ThreadSummary }
  | { kind: 'unknown' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'busy' }
  | { kind: 'unavailable'; reason: string }

export type ForkOutcome =
  | { kind: 'forked'; summary: ThreadSummary; prompt: string }
  /** No such thread. */
  | { kind: 'unknown' }
  /** The thread's persisted transcript has no such message (or none a fork can cut before). */
  | { kind: 'unknown-message' }
  | { kind: 'invalid'; reason: string }
  /** The thread's session file is damaged: it cannot be read, so nothing can be forked from it. */
  | { kind: 'unavailable'; reason: string }
  /** One of the thread's extensions cancelled it (pi's `session_before_fork`): nothing was written. */
  | { kind: 'fork-cancelled'; reason: string }

/** What the thread machine made of a prompt. */
export type PromptOutcome =
  | { kind: 'admitted'; messageId: string; run: number; queued: boolean }
  | { kind: Exclude<PromptRefusal, 'disposed'> }
  /** Taken by a delete or a shutdown (`deleted`, `shutdown`, `disposed`), or the thread is `unavailable`. */
  | { kind: 'rejected'; reason: string }

/** One of threadhost's own commands (`/name`, `/model`, `/thinking`, `/compact`, `/new`). */
export type CommandOutcome =
  | { kind: 'command-done'; command: string; summary: ThreadSummary }
  | { kind: 'unknown-command'; name: string; suggestions: string[] }
  /** A command that waits for no run (`/model`, `/thinking`, `/compact`) sent during one. */
  | { kind: 'command-busy'; command: string }
  | Exclude<UpdateOutcome, { kind: 'updated' | 'busy' }>

/** What `POST …/prompt` came to: the machine's answer, a command's, or the host's before either. */
export type PromptRouteOutcome =
  | PromptOutcome
  | CommandOutcome
  | { kind: 'closing' }
  | { kind: 'build-failed'; reason: string }
  | { kind: 'not-durable'; fault: WriteFault }
  /** Cluster mode: this node lost the thread before the prompt was in the thread's log; nothing of it ran. */
  | { kind: 'owner-changed'; threadId: string }
  /** Images to a model without image input: refused before anything was stored. */
  | { kind: 'no-images'; model: string }

export type AbortOutcome = { kind: 'stopped'; restored: string[] } | { kind: AbortRefusal }

/** `POST …/queue/take` (pi's Alt+Up): the prompts taken back, the run going on; refused as a stop is. */
export type TakeQueueOutcome = { kind: 'taken'; restored: string[] } | { kind: AbortRefusal }

export type DialogOutcomeForRoute = { kind: 'answered' } | { kind: 'not-live' } | { kind: 'unknown' } | { kind: 'refused'; refusal: string }

/** `POST …/dialog/:dialogId/input`: what a key for a terminal component came to (src/host/terminal-bridge.ts). */
export type TerminalInputRouteOutcome =
  | { kind: 'taken' }
  | { kind: 'not-live' }
  | { kind: 'unknown' }
  | { kind: 'refused'; refusal: string }
  | { kind: 'leased'; until: number }

/** `POST …/shortcut`: started, or no thread, or its runtime could not start, or no such shortcut. */
export type ShortcutOutcome =
  | { kind: 'started' }
  | { kind: 'unknown' }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'build-failed'; reason: string }
  | { kind: 'unknown-shortcut'; shortcuts: string[] }

/**
 * Moving a thread's conversation in place (`POST …/version`, and the first step of `POST …/edit`):
 * moved, or why not — busy, no such prompt, an extension refused (pi's `session_before_tree`).
 */
export type VersionOutcome =
  | { kind: 'moved' }
  | { kind: 'unknown' }
  | { kind: 'unknown-message' }
  | { kind: 'busy' }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'build-failed'; reason: string }
  | { kind: 'version-cancelled' }
  | { kind: 'invalid'; reason: string }

/** `POST …/edit`: the move, then the prompt sent there. */
export type EditOutcome = Exclude<VersionOutcome, { kind: 'moved' }> | PromptRouteOutcome

/** `GET …/runs/:run/changes` and `GET …/changes`: the report, or no thread, or that run took no checkpoint. */
export type ChangesOutcome = { kind: 'changes'; report: ChangesReport } | { kind: 'unknown' } | { kind: 'no-checkpoint' }

/** `POST …/revert` and `POST …/redo`. */
export type RestoreRouteOutcome =
  | { kind: 'restored'; action: 'revert' | 'redo'; files: string[]; runs: number[] }
  | { kind: 'unknown' }
  | { kind: 'busy' }
  | { kind: 'nothing'; action: 'revert' | 'redo' }
  /** A file the restore would touch was changed since threadhost left it: nothing was written. */
  | { kind: 'conflict'; paths: string[] }
  | { kind: 'failed'; reason: string }

/** A thread looked up by id: a read, a delete, the draft, the commands. */
export type LookupOutcome = { kind: 'unknown' } | { kind: 'not-live' }

/** A follow refused: no such thread; or (a cluster) this node could not read the thread's log as far as the tab has already seen. */
export type FollowOutcome = { kind: 'unknown' } | { kind: 'behind'; threadId: string; after: number }

/** A delete: done; no such thread; or (a cluster) the thread passed to another node before its `deleted` record was in its log. */
export type DeleteOutcome = { kind: 'deleted' } | { kind: 'unknown' } | { kind: 'owner-changed'; threadId: string }

/** What the guards, the parser and the error handler refuse before (or instead of) a route's own answer. */
export type GuardOutcome =
  | { kind: 'bad-request'; message: string }
  | { kind: 'token-required' }
  | { kind: 'foreign-origin' }
  | { kind: 'route-not-found'; method: string; url: string }
  | { kind: 'body-too-large' }
  | { kind: 'prompt-too-long'; limit: number }
  | { kind: 'image-too-large'; limit: number }
  | { kind: 'closing' }
  | { kind: 'internal' }
  | { kind: 'idempotency-key-reused' }
  | { kind: 'not-durable'; fault: WriteFault }
  /** Cluster mode: the node that owns the thread did not answer in time (the engine away, the node stalled). */
  | { kind: 'owner-unreachable'; threadId: string }
  /** Cluster mode: this node lost the thread before its answer was in the thread's log. */
  | { kind: 'owner-changed'; threadId: string }
  /** Cluster mode: the request with this key is still running on another node. */
  | { kind: 'key-running' }
  /** Cluster mode, between nodes: a command passed on straight here for a thread this node does not own; nothing ran. */
  | { kind: 'not-owner'; threadId: string }

// ——— the table ———

/** A success: its status and body. */
export interface Success<O, C> {
  readonly status: number
  readonly body: (outcome: O, context: C) => unknown
}

/** A refusal: `{error, code, reason?, ...details}`. */
export interface Refusal<O, C> {
  readonly status: number
  readonly code: ErrorCode
  /** The `reason` field clients read before `code` existed, kept as it was. */
  readonly reason?: string
  readonly error: (outcome: O, context: C) => string
  readonly details?: (outcome: O, context: C) => Record<string, unknown>
}

export type Answer<O, C> = Success<O, C> | Refusal<O, C>

/** One outcome kind whose answer depends on its payload (which fault, which reason): a case per value. */
export interface Split<O, C> {
  readonly by: (outcome: O) => string
  readonly cases: { readonly [value: string]: Answer<O, C> }
}

export type Rule<O, C> = Answer<O, C> | Split<O, C>

/** Every kind of a vocabulary, with its answer. `C`: what the text needs from the request (its ids). */
export type OutcomeTable<O extends { kind: string }, C> = { readonly [K in O['kind']]: Rule<Extract<O, { kind: K }>, C> }

export const isRefusal = <O, C>(answer: Answer<O, C>): answer is Refusal<O, C> => 'code' in answer

/** The answer a table gives an outcome: status and body. */
export function answerOf<O extends { kind: string }, C>(table: OutcomeTable<O, C>, outcome: O, context: C): { status: number; body: unknown } {
  const rule = (table as unknown as Record<string, Rule<O, C>>)[outcome.kind]
  const answer = 'cases' in rule ? rule.cases[rule.by(outcome)] ?? rule.cases.other : rule
  if (!isRefusal(answer)) return { status: answer.status, body: answer.body(outcome, context) }
  return {
    status: answer.status,
    body: {
      error: answer.error(outcome, context),
      code: answer.code,
      ...(answer.reason ? { reason: answer.reason } : {}),
      ...answer.details?.(outcome, context),
    },
  }
}

/** Every answer a table can give (each case of a split), for tests and docs. */
export function answersIn(table: { readonly [kind: string]: Rule<never, never> }): Array<{ kind: string; answer: Answer<never, never> }> {
  return Object.entries(table).flatMap(([kind, rule]) =>
    'cases' in rule ? Object.values(rule.cases).map((answer) => ({ kind, answer })) : [{ kind, answer: rule }],
  )
}

const refusal = <O, C>(
  status: number,
  code: ErrorCode,
  error: (outcome: O, context: C) => string,
  extra: { reason?: string; details?: (outcome: O, context: C) => Record<string, unknown> } = {},
): Refusal<O, C> => ({ status, code, error, ...extra })

interface ThreadContext {
  threadId: string
}

const noThread = refusal<unknown, ThreadContext>(404, 'THREAD_NOT_FOUND', (_, c) => `no thread ${c.threadId}`)
const notLive = refusal<unknown, ThreadContext>(404, 'THREAD_NOT_LIVE', (_, c) => `no live session for thread ${c.threadId}`)

/** The text of a `409 unavailable`: what is wrong, and the two ways out. */
export const unavailableText = (threadId: string, reason = 'damaged') =>
  `thread ${threadId} is unavailable: its session file is damaged (${reason}); repair it and restart threadhost, or delete the thread`

const unavailable = refusal<{ reason?: string }, ThreadContext>(409, 'THREAD_UNAVAILABLE', (o, c) => unavailableText(c.threadId, o.reason), {
  reason: 'unavailable',
})
const invalid = (code: ErrorCode) => refusal<{ reason: string }, unknown>(422, code, (o) => o.reason)

/** The write guards' refusal: `507` for a full disk, `503` for a read-only one; nothing was done. */
const notDurable: Split<{ fault: WriteFault }, unknown> = {
  by: (o) => o.fault.kind,
  cases: {
    full: refusal(507, 'DISK_FULL', (o) => `the data dir is full; nothing was done (${o.fault.message})`, { reason: 'disk-full' }),
    'read-only': refusal(503, 'READ_ONLY', (o) => `the data dir is read-only; nothing was done (${o.fault.message})`, { reason: 'read-only' }),
  },
}

const ownerChanged: OutcomeTable<{ kind: 'owner-changed'; threadId: string }, unknown>['owner-changed'] = refusal(
  503,
  'OWNER_CHANGED',
  (o) => `thread ${o.threadId} passed to another node before this answer was recorded; retry (with the same Idempotency-Key, where the request takes one)`,
)

export const guardOutcomes: OutcomeTable<GuardOutcome, unknown> = {
  'bad-request': refusal(400, 'BAD_REQUEST', (o) => o.message),
  'token-required': refusal(401, 'TOKEN_REQUIRED', () => 'a bearer token is required'),
  'foreign-origin': refusal(403, 'FOREIGN_ORIGIN', () => 'requests must come from this host; start threadhost with --token to serve other origins'),
  'route-not-found': refusal(404, 'ROUTE_NOT_FOUND', (o) => `Route ${o.method}:${o.url} not found`),
  'body-too-large': refusal(413, 'BODY_TOO_LARGE', () => 'the request body is too large'),
  'prompt-too-long': refusal(413, 'PROMPT_TOO_LONG', (o) => `a prompt is at most ${o.limit} characters`, { details: (o) => ({ limit: o.limit }) }),
  'image-too-large': refusal(413, 'IMAGE_TOO_LARGE', (o) => `an image may be at most ${o.limit / (1024 * 1024)} MB; nothing was stored`, {
    details: (o) => ({ limit: o.limit }),
  }),
  closing: refusal(503, 'SHUTTING_DOWN', () => 'threadhost is shutting down'),
  internal: refusal(500, 'INTERNAL', () => 'internal error'),
  'idempotency-key-reused': refusal(422, 'IDEMPOTENCY_KEY_REUSED', () => 'this Idempotency-Key was used before with another request', {
    reason: 'idempotency-key-reused',
  }),
  'not-durable': notDurable,
  'owner-unreachable': refusal(503, 'OWNER_UNREACHABLE', (o) => `the node that owns thread ${o.threadId} did not answer in time; retry (with the same Idempotency-Key)`),
  'owner-changed': ownerChanged,
  'key-running': refusal(503, 'KEY_RUNNING', () => 'the request with this Idempotency-Key is still running on another node; retry'),
  'not-owner': refusal(421, 'NOT_OWNER', (o) => `this node does not own thread ${o.threadId}; nothing ran`),
}

export const createOutcomes: OutcomeTable<CreateOutcome, { id?: string }> = {
  created: { status: 201, body: (o) => ({ threadId: o.threadId }) },
  taken: refusal(409, 'THREAD_TAKEN', (_, c) => `thread ${c.id} already exists`),
  invalid: invalid('SETTINGS_REFUSED'),
}

export const updateOutcomes: OutcomeTable<UpdateOutcome, ThreadContext> = {
  updated: { status: 200, body: (o) => o.summary },
  unknown: noThread,
  invalid: invalid('SETTINGS_REFUSED'),
  busy: refusal(409, 'THREAD_BUSY', () => 'a run is in progress; change the model or thinking level between runs', { reason: 'busy' }),
  unavailable,
}

export const forkOutcomes: OutcomeTable<ForkOutcome, ThreadContext & { fromMessageId: string }> = {
  forked: { status: 201, body: (o) => ({ thread: o.summary, prompt: o.prompt }) },
  unknown: noThread,
  'unknown-message': refusal(404, 'MESSAGE_NOT_FOUND', (_, c) => `thread ${c.threadId} has no message ${c.fromMessageId} to fork at`),
  invalid: invalid('FORK_REFUSED'),
  unavailable,
  'fork-cancelled': refusal(409, 'FORK_CANCELLED', (o, c) => `thread ${c.threadId}'s extensions cancelled the fork: ${o.reason}`, {
    reason: 'fork-cancelled',
  }),
}

export interface PromptContext extends ThreadContext {
  /** The run the prompt named, if any. */
  run?: number
  /** Why the thread is unavailable (its damage), asked only when the answer says so. */
  damage?: () => string | undefined
}

export const promptOutcomes: OutcomeTable<PromptRouteOutcome, PromptContext> = {
  admitted: { status: 202, body: (o, c) => ({ threadId: c.threadId, messageId: o.messageId, run: o.run, queued: o.queued }) },
  'command-done': { status: 200, body: (o, c) => ({ threadId: c.threadId, command: o.command, thread: o.summary }) },
  'unknown-command': refusal(
    422,
    'UNKNOWN_COMMAND',
    (o) => `unknown command /${o.name}${o.suggestions.length ? `; did you mean ${o.suggestions.join(', ')}?` : ''}`,
    { details: (o) => ({ suggestions: o.suggestions }) },
  ),
  invalid: invalid('COMMAND_REFUSED'),
  unknown: noThread,
  busy: refusal(409, 'THREAD_BUSY', (_, c) => `thread ${c.threadId} is busy and the prompt asked not to be queued`, { reason: 'busy' }),
  'command-busy': refusal(
    409,
    'THREAD_BUSY',
    (o, c) => `a run is in progress on thread ${c.threadId}; /${o.command} applies between runs: send it again when the run ends`,
    { reason: 'busy' },
  ),
  'stale-run': refusal(409, 'RUN_STALE', (_, c) => `run ${c.run} is not the current run of thread ${c.threadId}; the prompt was not queued`, {
    reason: 'stale-run',
  }),
  unavailable,
  closing: guardOutcomes.closing,
  'not-durable': notDurable,
  'owner-changed': ownerChanged,
  'build-failed': refusal(502, 'RUNTIME_FAILED', (o) => `the thread's runtime could not start: ${o.reason}`),
  'no-images': refusal(422, 'IMAGES_NOT_SUPPORTED', (o) => `the model ${o.model} does not take images: pick a model that does, or send the text alone`),
  rejected: {
    by: (o) => o.reason,
    cases: {
      unavailable: refusal(409, 'THREAD_UNAVAILABLE', (_, c) => unavailableText(c.threadId, c.damage?.()), { reason: 'unavailable' }),
      deleted: refusal(409, 'THREAD_DELETED', () => 'the prompt was not run', { reason: 'deleted' }),
      other: refusal(409, 'PROMPT_WITHDRAWN', () => 'the prompt was not run', { details: (o) => ({ reason: o.reason }) }),
    },
  },
}

export const abortOutcomes: OutcomeTable<AbortOutcome, ThreadContext & { run?: number }> = {
  stopped: { status: 200, body: (o, c) => ({ threadId: c.threadId, restored: o.restored }) },
  'not-live': notLive,
  idle: refusal(409, 'THREAD_IDLE', (_, c) => `nothing is running on thread ${c.threadId}`, { reason: 'idle' }),
  'stale-run': refusal(409, 'RUN_STALE', (_, c) => `run ${c.run} is not the current run of thread ${c.threadId}`, { reason: 'stale-run' }),
}

export const takeQueueOutcomes: OutcomeTable<TakeQueueOutcome, ThreadContext & { run?: number }> = {
  taken: { status: 200, body: (o, c) => ({ threadId: c.threadId, restored: o.restored }) },
  'not-live': notLive,
  idle: abortOutcomes.idle,
  'stale-run': abortOutcomes['stale-run'],
}

export const answerOutcomes: OutcomeTable<DialogOutcomeForRoute, ThreadContext & { dialogId: string }> = {
  answered: { status: 204, body: () => undefined },
  'not-live': notLive,
  unknown: refusal(404, 'QUESTION_NOT_OPEN', (_, c) => `no open question ${c.dialogId} on thread ${c.threadId}`),
  refused: refusal(422, 'ANSWER_REFUSED', () => 'the answer does not fit the question', { details: (o) => ({ refusal: o.refusal }) }),
}

export const terminalInputOutcomes: OutcomeTable<TerminalInputRouteOutcome, ThreadContext & { dialogId: string }> = {
  taken: { status: 204, body: () => undefined },
  'not-live': notLive,
  unknown: refusal(404, 'QUESTION_NOT_OPEN', (_, c) => `no open terminal component ${c.dialogId} on thread ${c.threadId}`),
  refused: refusal(422, 'INPUT_REFUSED', (o) => o.refusal, { details: (o) => ({ refusal: o.refusal }) }),
  leased: refusal(409, 'INPUT_LEASED', () => 'another tab is typing into this component', { details: (o) => ({ until: o.until }) }),
}

export const deleteOutcomes: OutcomeTable<DeleteOutcome, ThreadContext> = {
  deleted: { status: 204, body: () => undefined },
  unknown: noThread,
  'owner-changed': ownerChanged,
}

/** A thread named by id that is not there (`unknown`), or not live where only a live one will do. */
export const lookupOutcomes: OutcomeTable<LookupOutcome, ThreadContext> = {
  unknown: noThread,
  'not-live': refusal(404, 'THREAD_NOT_LIVE', (_, c) => `thread ${c.threadId} is not live`),
}

export const followOutcomes: OutcomeTable<FollowOutcome, ThreadContext> = {
  unknown: noThread,
  behind: refusal(503, 'FOLLOW_BEHIND', (o) => `this node has not read thread ${o.threadId} as far as seq ${o.after} yet; retry`),
}

export const shortcutOutcomes: OutcomeTable<ShortcutOutcome, ThreadContext & { key: string }> = {
  started: { status: 202, body: (_, c) => ({ threadId: c.threadId, key: c.key }) },
  unknown: noThread,
  unavailable,
  'build-failed': promptOutcomes['build-failed'],
  'unknown-shortcut': refusal(
    404,
    'SHORTCUT_NOT_FOUND',
    (o, c) => `thread ${c.threadId} has no shortcut ${c.key}${o.shortcuts.length ? `; its shortcuts are ${o.shortcuts.join(', ')}` : ''}`,
    { details: (o) => ({ shortcuts: o.shortcuts }) },
  ),
}

const versionRefusals = {
  unknown: noThread,
  'unknown-message': refusal(404, 'MESSAGE_NOT_FOUND', (_: unknown, c: ThreadContext & { messageId: string }) => `thread ${c.threadId} has no prompt ${c.messageId} in its conversation`),
  busy: refusal(409, 'THREAD_BUSY', (_: unknown, c: ThreadContext) => `a run is in progress on thread ${c.threadId}; versions change between runs`, { reason: 'busy' }),
  unavailable,
  'build-failed': promptOutcomes['build-failed'],
  'version-cancelled': refusal(409, 'VERSION_CANCELLED', (_: unknown, c: ThreadContext) => `thread ${c.threadId}'s extensions kept the conversation where it was (pi's session_before_tree)`, {
    reason: 'version-cancelled',
  }),
  invalid: invalid('COMMAND_REFUSED'),
}

export const versionOutcomes: OutcomeTable<VersionOutcome, ThreadContext & { messageId: string }> = {
  moved: { status: 200, body: (_, c) => ({ threadId: c.threadId, messageId: c.messageId }) },
  ...versionRefusals,
}

export const editOutcomes: OutcomeTable<EditOutcome, PromptContext & { messageId: string }> = {
  ...promptOutcomes,
  ...versionRefusals,
  busy: refusal(409, 'THREAD_BUSY', (_, c) => `a run is in progress on thread ${c.threadId}; edit or regenerate between runs`, { reason: 'busy' }),
}

export const changesOutcomes: OutcomeTable<ChangesOutcome, ThreadContext & { run?: number }> = {
  changes: { status: 200, body: (o) => o.report },
  unknown: noThread,
  'no-checkpoint': refusal(404, 'NO_CHECKPOINT', (_, c) => `run ${c.run} of thread ${c.threadId} changed no file (it took no checkpoint)`),
}

export const restoreOutcomes: OutcomeTable<RestoreRouteOutcome, ThreadContext> = {
  restored: { status: 200, body: (o, c) => ({ threadId: c.threadId, action: o.action, files: o.files, runs: o.runs }) },
  unknown: noThread,
  busy: refusal(409, 'THREAD_BUSY', (_, c) => `a run is in progress on thread ${c.threadId}; revert and redo wait until it ends`, { reason: 'busy' }),
  nothing: refusal(409, 'NOTHING_TO_RESTORE', (o) => (o.action === 'redo' ? 'there is no revert to redo' : 'no run from there on changed a file that is not reverted already'), {
    reason: 'nothing',
  }),
  conflict: refusal(
    409,
    'CHANGES_CONFLICT',
    (o) => `${o.paths.length === 1 ? 'a file' : 'files'} changed since the agent left ${o.paths.length === 1 ? 'it' : 'them'} (${o.paths.join(', ')}); nothing was overwritten`,
    { reason: 'conflict', details: (o) => ({ paths: o.paths }) },
  ),
  failed: refusal(500, 'RESTORE_FAILED', (o) => `the workspace could not be restored: ${o.reason}`),
}

/** `DELETE /api/threads/:id` of a thread whose own worktree holds work: asked before it is discarded. */
export const worktreeOutcomes: OutcomeTable<{ kind: 'held'; commits: string[]; uncommitted: string[] }, ThreadContext> = {
  held: refusal(
    409,
    'WORKTREE_HELD',
    (o, c) =>
      `thread ${c.threadId}'s worktree holds ${[o.commits.length ? `${o.commits.length} commit(s) no other branch has` : '', o.uncommitted.length ? `${o.uncommitted.length} uncommitted change(s)` : ''].filter(Boolean).join(' and ')}; delete with ?discardWorktree=true to discard them`,
    { reason: 'worktree-held', details: (o) => ({ commits: o.commits, uncommitted: o.uncommitted }) },
  ),
}

/** `GET /api/debug/machines/:machineId` naming no machine. */
export const machineOutcomes: OutcomeTable<{ kind: 'unknown'; machines: string[] }, { machineId: string }> = {
  unknown: refusal(404, 'MACHINE_NOT_FOUND', (_, c) => `no machine ${c.machineId}`, { details: (o) => ({ machines: o.machines }) }),
}
