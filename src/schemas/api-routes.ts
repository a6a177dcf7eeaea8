/**
 * Every HTTP route as data: method, path, what it takes and what it answers per status, each a
 * TypeBox schema from this layer. The server registers its routes with these schemas (so they are
 * what it validates and what `/api/openapi.json` documents), and the typed client
 * (src/shared/api-client.ts) infers every call's input, result and error from them — so a script,
 * the web client and the server cannot disagree about a shape without the compiler or
 * test/shared/api-client.test.ts saying so.
 *
 * Prose (summaries, what a status means to a user) stays with the routes and docs/api.md.
 */
import { Type, type TSchema } from 'typebox'
import {
  AbortBody,
  AbortReceipt,
  QueueTakeReceipt,
  CommandList,
  CommandReceipt,
  CreateThreadBody,
  DialogAnswerRequest,
  DraftBody,
  EditBody,
  ForkBody,
  ForkReceipt,
  ModelList,
  PromptBody,
  PromptReceipt,
  PROMPT_BODY_LIMIT,
  ShortcutBody,
  ShortcutReceipt,
  ThreadParams,
  ThreadSummary,
  UpdateThreadBody,
  VersionBody,
  VersionReceipt,
} from './http.js'
import {
  ActorForest,
  CreatedReceipt,
  errorBody,
  EventStream,
  guarded,
  Health,
  idempotencyMismatch,
  MachineDefinition,
  MetricsText,
  NoContent,
  notFound,
  OpenApiDocument,
  ReasonError,
  refusedWrites,
  ThreadList,
  unprocessable,
  UnknownMachine,
  withBody,
  type MediaResponse,
} from './responses.js'
import { ExtensionList } from './extensions.js'
import { SearchQuery, SearchResults, WorkspaceList } from './search.js'
import { ChangesReport, RestoreReceipt, RevertBody, RunParams } from './changes.js'
import { TerminalInputBody } from './terminal.js'
import { PushKey, PushSubscriptionBody, PushUnsubscribeBody } from './push.js'

export interface RouteSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Fastify's template: `:name` for each path parameter. */
  readonly path: string
  readonly params?: TSchema
  readonly querystring?: TSchema
  readonly body?: TSchema
  readonly headers?: TSchema
  /** Every status the route answers, with its body: a JSON schema, or a media type it writes itself. */
  readonly response: { readonly [status: number]: TSchema | MediaResponse }
  /**
   * Takes an `Idempotency-Key` header. Not a `headers` schema: the write guard (src/server/writes.ts)
   * checks the key itself, so a malformed one is refused by the same rule on every route.
   */
  readonly idempotent?: true
  /**
   * Writes: refused before anything runs while the data dir is full or read-only (the write guard,
   * src/server/writes.ts), so it also answers `refusedWrites`. A stop is never refused for it.
   */
  readonly durable?: true
  /** A body limit of its own (bytes), above the app's 1 MiB: a prompt carries images. */
  readonly bodyLimit?: number
}

const route = <const R extends RouteSpec>(spec: R): R => spec

const TerminalInputParams = Type.Object({ id: ThreadParams.properties.id, dialogId: Type.String({ minLength: 1, maxLength: 200 }) })

/** `GET …/follow`: where to resume, and the token for EventSource, which cannot send headers. */
export const FollowQuery = Type.Object({
  /** Resume after this seq (`Last-Event-ID` wins when both are sent). */
  after: Type.Optional(Type.String()),
  /** The token, for EventSource, which cannot send headers. */
  token: Type.Optional(Type.String()),
})

/** `GET /api/debug/events`: the follow's query, and a thread to narrow the records to. */
export const EventsQuery = Type.Object({
  after: Type.Optional(Type.String()),
  thread: Type.Optional(Type.String()),
  /** The token, for EventSource, which cannot send headers. */
  token: Type.Optional(Type.String()),
})

/** `GET /api/debug/machines/:machineId`. */
export const MachineParams = Type.Object({ machineId: Type.String() })

const T = '/api/threads/:id'

export const apiRoutes = {
  // meta
  health: route({ method: 'GET', path: '/api/health', response: { 200: Health, ...guarded } }),
  openapi: route({ method: 'GET', path: '/api/openapi.json', response: { 200: OpenApiDocument, ...guarded } }),
  metrics: route({ method: 'GET', path: '/metrics', response: { 200: MetricsText, ...guarded } }),
  listExtensions: route({ method: 'GET', path: '/api/extensions', response: { 200: ExtensionList, ...guarded } }),

  // threads
  listModels: route({ method: 'GET', path: '/api/models', response: { 200: ModelList, ...guarded } }),
  listThreads: route({ method: 'GET', path: '/api/threads', response: { 200: ThreadList, ...guarded } }),
  createThread: route({
    method: 'POST',
    path: '/api/threads',
    body: CreateThreadBody,
    idempotent: true,
    durable: true,
    response: {
      201: CreatedReceipt,
      409: errorBody('the id is taken, or its thread is still being deleted'),
      422: unprocessable(
        'an unknown model, one without credentials, or an unusable cwd; or the `Idempotency-Key` was used with another request. Nothing was created',
      ),
      ...withBody,
      ...refusedWrites,
    },
  }),
  getThread: route({
    method: 'GET',
    path: T,
    params: ThreadParams,
    response: { 200: ThreadSummary, 404: notFound('no such thread'), ...guarded },
  }),
  updateThread: route({
    method: 'PATCH',
    path: T,
    params: ThreadParams,
    body: UpdateThreadBody,
    durable: true,
    response: {
      200: ThreadSummary,
      404: notFound('no such thread'),
      409: ReasonError('`busy`: a model or thinking level while a run is in flight; `unavailable`: the thread\'s session file is damaged'),
      422: unprocessable('an unusable model; nothing changed'),
      ...withBody,
      ...refusedWrites,
    },
  }),
  deleteThread: route({
    method: 'DELETE',
    path: T,
    params: ThreadParams,
    querystring: Type.Object({ discardWorktree: Type.Optional(Type.Literal('true')) }),
    durable: true,
    response: {
      204: NoContent('deleted'),
      404: notFound('no such thread'),
      409: ReasonError("`worktree-held`: the thread's own worktree holds commits no other branch has, or uncommitted changes (`commits`, `uncommitted`); send `?discardWorktree=true` to discard them"),
      ...guarded,
      ...refusedWrites,
    },
  }),
  forkThread: route({
    method: 'POST',
    path: `${T}/fork`,
    params: ThreadParams,
    body: ForkBody,
    idempotent: true,
    durable: true,
    response: {
      201: ForkReceipt,
      404: notFound('no such thread, or no such message in its persisted transcript (a reply still streaming is not yet forkable)'),
      409: ReasonError("`unavailable`: the thread's session file is damaged, so it cannot be read"),
      422: unprocessable('the runtime cannot fork; or the `Idempotency-Key` was used with another request. Nothing was created'),
      ...withBody,
      ...refusedWrites,
    },
  }),
  reportDraft: route({
    method: 'PUT',
    path: `${T}/draft`,
    params: ThreadParams,
    body: DraftBody,
    response: { 204: NoContent('taken'), 404: notFound('the thread is not live (this never builds a runtime)'), ...withBody },
  }),
  listCommands: route({
    method: 'GET',
    path: `${T}/commands`,
    params: ThreadParams,
    response: { 200: CommandList, 404: notFound('no such thread'), ...guarded },
  }),

  runShortcut: route({
    method: 'POST',
    path: `${T}/shortcut`,
    params: ThreadParams,
    body: ShortcutBody,
    response: {
      202: ShortcutReceipt,
      404: unprocessable('no such thread; or (`SHORTCUT_NOT_FOUND`, `shortcuts` lists the thread\'s) no extension registered that key', {
        shortcuts: Type.Optional(Type.Array(Type.String())),
      }),
      409: ReasonError("`unavailable`: the thread's session file is damaged"),
      502: errorBody("the thread's runtime could not start"),
      ...withBody,
    },
  }),

  // search and the new thread's workspaces (issue 20)
  searchThreads: route({
    method: 'GET',
    path: '/api/search',
    querystring: SearchQuery,
    response: { 200: SearchResults, ...guarded },
  }),
  listWorkspaces: route({ method: 'GET', path: '/api/workspaces', response: { 200: WorkspaceList, ...guarded } }),

  // runs
  prompt: route({
    method: 'POST',
    path: `${T}/prompt`,
    params: ThreadParams,
    body: PromptBody,
    idempotent: true,
    durable: true,
    bodyLimit: PROMPT_BODY_LIMIT,
    response: {
      200: CommandReceipt,
      202: PromptReceipt,
      404: notFound('a command named a thread that does not exist'),
      409: ReasonError('`busy` (admission `reject`, or `/model`, `/thinking` or `/compact` during a run); `stale-run`: the body\'s `run` is not the current run; `unavailable`: the thread\'s session file is damaged; or taken by a delete or a shutdown before it was admitted (`deleted`, `shutdown`)'),
      422: unprocessable('an unknown command (`suggestions` holds close names), a command refused with its reason, images to a model that takes none, or an `Idempotency-Key` used with another request', {
        suggestions: Type.Optional(Type.Array(Type.String())),
      }),
      502: errorBody("the thread's runtime could not start"),
      ...withBody,
      ...refusedWrites,
    },
  }),
  // versions of a prompt, in place (pi's session tree; src/host/thread-versions.ts)
  editMessage: route({
    method: 'POST',
    path: `${T}/edit`,
    params: ThreadParams,
    body: EditBody,
    idempotent: true,
    durable: true,
    response: {
      202: PromptReceipt,
      200: CommandReceipt,
      404: notFound('no such thread, or no such prompt in its conversation'),
      409: ReasonError(
        "`busy`: a run is in flight (edit and regenerate between runs); `version-cancelled`: an extension kept the conversation where it was; `unavailable`: the thread's session file is damaged; or taken by a delete or a shutdown",
      ),
      422: unprocessable('the thread cannot keep versions, an unknown command, or an `Idempotency-Key` used with another request', {
        suggestions: Type.Optional(Type.Array(Type.String())),
      }),
      502: errorBody("the thread's runtime could not start"),
      ...withBody,
      ...refusedWrites,
    },
  }),
  switchVersion: route({
    method: 'POST',
    path: `${T}/version`,
    params: ThreadParams,
    body: VersionBody,
    idempotent: true,
    durable: true,
    response: {
      200: VersionReceipt,
      404: notFound('no such thread, or no such prompt in its conversation'),
      409: ReasonError("`busy`: a run is in flight; `version-cancelled`: an extension kept the conversation where it was; `unavailable`: the session file is damaged"),
      422: unprocessable('the thread cannot keep versions, or an `Idempotency-Key` used with another request'),
      502: errorBody("the thread's runtime could not start"),
      ...withBody,
      ...refusedWrites,
    },
  }),
  abort: route({
    method: 'POST',
    path: `${T}/abort`,
    params: ThreadParams,
    body: AbortBody,
    idempotent: true,
    response: {
      200: AbortReceipt,
      404: notFound('the thread is not live (a stop never builds a runtime)'),
      409: ReasonError('`idle`: nothing is running; `stale-run`: `run` is not the current run'),
      422: idempotencyMismatch,
      ...withBody,
    },
  }),

  // pi's Alt+Up: the queued prompts back, the run going on
  takeQueue: route({
    method: 'POST',
    path: `${T}/queue/take`,
    params: ThreadParams,
    body: AbortBody,
    idempotent: true,
    response: {
      200: QueueTakeReceipt,
      404: notFound('the thread is not live (a take-back never builds a runtime)'),
      409: ReasonError('`idle`: nothing is running; `stale-run`: `run` is not the current run'),
      422: idempotencyMismatch,
      ...withBody,
    },
  }),

  // what the agent changed (checkpoints)
  runChanges: route({
    method: 'GET',
    path: `${T}/runs/:run/changes`,
    params: RunParams,
    response: { 200: ChangesReport, 404: notFound('no such thread, or that run changed no file'), ...guarded },
  }),
  threadChanges: route({
    method: 'GET',
    path: `${T}/changes`,
    params: ThreadParams,
    response: { 200: ChangesReport, 404: notFound('no such thread'), ...guarded },
  }),
  revert: route({
    method: 'POST',
    path: `${T}/revert`,
    params: ThreadParams,
    body: RevertBody,
    idempotent: true,
    durable: true,
    response: {
      200: RestoreReceipt,
      404: notFound('no such thread'),
      409: ReasonError('`busy`: a run is in flight; `nothing`: nothing from that run on to revert; `conflict`: files changed since (`paths`), nothing was written'),
      422: idempotencyMismatch,
      ...withBody,
      ...refusedWrites,
    },
  }),
  redo: route({
    method: 'POST',
    path: `${T}/redo`,
    params: ThreadParams,
    idempotent: true,
    durable: true,
    response: {
      200: RestoreReceipt,
      404: notFound('no such thread'),
      409: ReasonError('`busy`: a run is in flight; `nothing`: no revert to redo; `conflict`: files changed since (`paths`), nothing was written'),
      422: idempotencyMismatch,
      ...withBody,
      ...refusedWrites,
    },
  }),

  // dialogs
  answerDialog: route({
    method: 'POST',
    path: `${T}/dialog`,
    params: ThreadParams,
    body: DialogAnswerRequest,
    idempotent: true,
    durable: true,
    response: {
      204: NoContent('taken (or withdrawn): every follower gets `dialog-settled`'),
      404: notFound('the thread is not live, or no open question has that id'),
      422: unprocessable(
        'the answer does not fit the question; it stays open (`refusal` says why). Or the `Idempotency-Key` was used with another request (`reason`)',
        { refusal: Type.Optional(Type.String()), reason: Type.Optional(Type.String()) },
      ),
      ...withBody,
      ...refusedWrites,
    },
  }),

  // a terminal component's keys (src/schemas/terminal.ts)
  terminalInput: route({
    method: 'POST',
    path: `${T}/dialog/:dialogId/input`,
    params: TerminalInputParams,
    body: TerminalInputBody,
    response: {
      204: NoContent('given to the component: every follower sees what it draws (`terminal-frame`)'),
      404: notFound('the thread is not live, or no open terminal component has that id (it settled)'),
      409: unprocessable('another tab is typing into it: `until` (epoch ms) is when its lease ends', { until: Type.Optional(Type.Number()) }),
      422: unprocessable('`data` is not a string of terminal bytes of at most 4096 characters (`refusal`)', { refusal: Type.Optional(Type.String()) }),
      ...withBody,
    },
  }),

  // follow
  follow: route({
    method: 'GET',
    path: `${T}/follow`,
    params: ThreadParams,
    querystring: FollowQuery,
    response: {
      200: EventStream('the event stream'),
      404: notFound('no such thread'),
      ...guarded,
      503: errorBody('cluster mode: this node has not read the thread as far as `Last-Event-ID` yet (`FOLLOW_BEHIND`, with `Retry-After`); or threadhost is shutting down'),
    },
  }),

  // notifications (push): the key to subscribe with, and a browser's subscription
  pushKey: route({ method: 'GET', path: '/api/push/key', response: { 200: PushKey, ...guarded } }),
  subscribePush: route({
    method: 'PUT',
    path: '/api/push/subscription',
    body: PushSubscriptionBody,
    durable: true,
    response: { 204: NoContent('kept: this browser is notified from now on'), ...withBody, ...refusedWrites },
  }),
  unsubscribePush: route({
    method: 'DELETE',
    path: '/api/push/subscription',
    body: PushUnsubscribeBody,
    durable: true,
    response: { 204: NoContent('removed (or was not there)'), ...withBody, ...refusedWrites },
  }),

  // the inspector (`--inspector on`, the default on loopback)
  debugActors: route({ method: 'GET', path: '/api/debug/actors', response: { 200: ActorForest, ...guarded } }),
  debugMachine: route({
    method: 'GET',
    path: '/api/debug/machines/:machineId',
    params: MachineParams,
    response: { 200: MachineDefinition, 404: UnknownMachine, ...guarded },
  }),
  debugEvents: route({
    method: 'GET',
    path: '/api/debug/events',
    querystring: EventsQuery,
    response: { 200: EventStream('`record` frames, then one `ready` frame where the replay ends'), ...guarded },
  }),
} as const satisfies Record<string, RouteSpec>

export type ApiRoutes = typeof apiRoutes
export type RouteName = keyof ApiRoutes
