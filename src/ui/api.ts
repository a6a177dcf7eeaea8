/**
 * The browser's side of the HTTP contract: the typed client (src/shared/api-client.ts, whose types
 * come from the route table the server registers) with the page's token and retries, as the calls
 * the components make. Nothing here knows about Lit.
 */
import type {
  PromptImage,
  AbortReceipt,
  QueueTakeReceipt,
  ChangesReport,
  CommandInfo,
  CommandReceipt,
  CreateThreadBody,
  DeliverAs,
  DialogAnswerBody,
  ExtensionList,
  ForkReceipt,
  ModelList,
  PromptReceipt,
  SearchHit,
  RestoreReceipt,
  ThreadSummary,
  UpdateThreadBody,
  WorkspaceList,
} from '../schemas/index.js'
import { ApiError, createApiClient, DEFAULT_RETRY_DELAYS_MS, hasErrorCode, isNetworkError, type ErrorCode } from '../shared/api-client.js'

/**
 * A refused request. Its message is what the server said (`refusal`, else `error`, e.g. a 422's
 * "no credentials for …"), so a component can show `err.message` to the user as it is.
 */
export { ApiError, idempotencyKey, isNetworkError } from '../shared/api-client.js'

/** What a failed request means to a person: the server's own words, or that it could not be reached. */
export const UNREACHABLE = 'Cannot reach the server. Check the connection; nothing was lost.'

/**
 * What each refusal means to a person, by its stable `code` (the server's `error` text is for
 * developers and logs, and may change). Where the server's words carry the particular reason (a
 * model without credentials, an unknown command's suggestions, a refused answer) they are kept.
 */
const USER_TEXTS: Partial<Record<ErrorCode, (said: string) => string>> = {
  BAD_REQUEST: () => 'The server could not read that request. Reload the page and try again.',
  TOKEN_REQUIRED: () => 'This server needs a token: open the page as /?token=<secret>.',
  FOREIGN_ORIGIN: () => 'This page may not talk to that server (another origin): open threadhost from its own address.',
  ROUTE_NOT_FOUND: () => 'The server does not know this request: reload the page (it may be older than the server).',
  BODY_TOO_LARGE: () => 'That is too large to send.',
  SHUTTING_DOWN: () => 'threadhost is shutting down: try again once it is back.',
  INTERNAL: () => 'Something went wrong on the server; nothing was lost. Try again.',
  IDEMPOTENCY_KEY_REUSED: () => 'That request was already sent differently; nothing was done. Try again.',
  DISK_FULL: () => "The server's disk is full: nothing was saved. Free some space and try again.",
  READ_ONLY: () => "The server cannot write its data directory: nothing was saved. Restart it on a writable one.",
  THREAD_NOT_FOUND: () => 'This thread no longer exists (it may have been deleted in another tab).',
  THREAD_NOT_LIVE: () => 'This thread is not running right now.',
  THREAD_TAKEN: () => 'A thread with that id already exists.',
  THREAD_BUSY: () => 'A run is in progress: try again when it ends.',
  THREAD_IDLE: () => 'Nothing is running.',
  THREAD_UNAVAILABLE: () => "This thread is unavailable: its session file is damaged. Repair it and restart threadhost, or delete the thread.",
  THREAD_DELETED: () => 'The thread was deleted; the message was not sent.',
  RUN_STALE: () => 'A newer run has started since this tab last looked: nothing was sent or stopped. Try again.',
  PROMPT_TOO_LONG: () => 'The message is too long to send.',
  PROMPT_WITHDRAWN: () => 'The message was not run.',
  MESSAGE_NOT_FOUND: () => 'That message is not saved yet: wait for the reply to finish and try again.',
  QUESTION_NOT_OPEN: () => 'This question is no longer open.',
  SHORTCUT_NOT_FOUND: () => 'No extension of this thread uses that key.',
}

/** What a failed request means to a person: said by its `code`, or that the server could not be reached. */
export function describeError(err: unknown): string {
  if (isNetworkError(err)) return UNREACHABLE
  if (err instanceof ApiError) {
    if (err.code === 'PROMPT_TOO_LONG' && typeof err.body.limit === 'number') return `The message is too long: at most ${err.body.limit.toLocaleString()} characters.`
    const text = err.code && USER_TEXTS[err.code]
    if (text) return text(err.message)
    return err.message
  }
  return err instanceof Error ? err.message : String(err)
}

/**
 * What a refusal means to the client, asked in one place by the answer's stable `code` (the
 * components never read status numbers or codes themselves), so the mapping can change here alone.
 */
export const answered = (err: unknown, ...codes: ErrorCode[]): err is ApiError => hasErrorCode(err, ...codes)

/** Not there: no such thread, a thread that is not live, or a question that is no longer open. */
export const isNotFound = (err: unknown): boolean => answered(err, 'THREAD_NOT_FOUND', 'THREAD_NOT_LIVE', 'QUESTION_NOT_OPEN')

/** Refused for the thread's state: a run is in flight (a change of model), or none is (a stop). */
export const isConflict = (err: unknown): boolean => answered(err, 'THREAD_BUSY', 'THREAD_IDLE', 'RUN_STALE')

/** The thread's session file is damaged: nothing can be sent or changed until it is repaired (not a wait). */
export const isUnavailable = (err: unknown): boolean => answered(err, 'THREAD_UNAVAILABLE')

/** A delete refused because the thread's own worktree holds work: ask, then delete with `discardWorktree`. */
export const isWorktreeHeld = (err: unknown): err is ApiError => answered(err, 'WORKTREE_HELD')

/** A stop (or steer) that named a run which has ended while a newer one started. */
export const isStaleRun = (err: unknown): boolean => answered(err, 'RUN_STALE')

/** The server's words when it refused what was sent (e.g. an answer that does not fit its question); else undefined. */
export function refusalOf(err: unknown): string | undefined {
  if (!answered(err, 'ANSWER_REFUSED', 'IDEMPOTENCY_KEY_REUSED')) return undefined
  return err.body.refusal ?? err.body.error ?? 'That answer was refused.'
}

/**
 * Where the API lives ('' = the page's own origin) and the bearer token, if the server wants one
 * (`--token`): open the page once as `/?token=<secret>`; it is kept in localStorage.
 */
export const apiConfig: { base: string; token: string } = { base: '', token: initialToken() }

function initialToken(): string {
  try {
    const fromUrl = new URLSearchParams(globalThis.location?.search ?? '').get('token')
    if (fromUrl) globalThis.localStorage?.setItem('threadhost.token', fromUrl)
    return fromUrl ?? globalThis.localStorage?.getItem('threadhost.token') ?? ''
  } catch {
    return ''
  }
}

/** Waits between tries of a keyed request that got no answer at all (a network error). */
export const RETRY_DELAYS_MS = [...DEFAULT_RETRY_DELAYS_MS]

/**
 * Create, prompt, stop and answer go with a fresh `Idempotency-Key`; when no answer comes at all (a
 * network error: the request may or may not have reached the server) the client sends it again with
 * the same key, so it runs at most once and the retry gets the first answer. An HTTP error is an
 * answer: it is never retried. Base and token are read on every call, so a change applies at once.
 */
export const client = createApiClient({
  get baseUrl() {
    return apiConfig.base
  },
  get token() {
    return apiConfig.token
  },
  retryDelaysMs: RETRY_DELAYS_MS,
})

/** A 401 means the page was opened without the token: say how to give it. */
const tokenHint = (err: unknown): never => {
  if (answered(err, 'TOKEN_REQUIRED')) {
    throw new ApiError(401, { error: 'this server needs a token: open the page as /?token=<secret>', code: 'TOKEN_REQUIRED' }, err.route)
  }
  throw err
}

const thread = (id: string) => ({ params: { id } })

export const api = {
  listThreads: (): Promise<ThreadSummary[]> =>
    client.call('listThreads').then((r) => r.threads, tokenHint),
  getThread: (id: string): Promise<ThreadSummary> => client.call('getThread', thread(id)).catch(tokenHint),
  /** Threads whose messages hold every word of `q`, each with its best match (the list's search). */
  searchThreads: (q: string): Promise<SearchHit[]> => client.call('searchThreads', { query: { q } }).then((r) => r.results, tokenHint),
  /** The `--workspace` roots a new thread may work in, the default first. */
  listWorkspaces: (): Promise<WorkspaceList> => client.call('listWorkspaces').catch(tokenHint),
  /** What became of the user's pi extensions: loaded, failed (and why), clashing tool names. */
  listExtensions: (): Promise<ExtensionList> => client.call('listExtensions').catch(tokenHint),
  /** `demo` and every model pi has credentials for, and the name new threads get by default. */
  listModels: (): Promise<ModelList> => client.call('listModels').catch(tokenHint),
  /** `model` (a `name` from listModels), `thinkingLevel` and `cwd` are optional: the server's defaults otherwise. */
  createThread: (body: CreateThreadBody = {}): Promise<{ threadId: string }> => client.call('createThread', { body }).catch(tokenHint),
  renameThread: (id: string, title: string): Promise<ThreadSummary> =>
    client.call('updateThread', { ...thread(id), body: { title } }).catch(tokenHint),
  /** A title, model or thinking level; `409 busy` while a run is in flight, `422` an unusable model. */
  updateThread: (id: string, body: UpdateThreadBody): Promise<ThreadSummary> =>
    client.call('updateThread', { ...thread(id), body }).catch(tokenHint),
  /** `discardWorktree`: the thread's own worktree holds commits or changes (`WORKTREE_HELD`) and the user said to discard them. */
  deleteThread: (id: string, discardWorktree?: boolean): Promise<void> =>
    client.call('deleteThread', { ...thread(id), ...(discardWorktree ? { query: { discardWorktree: 'true' as const } } : {}) }).catch(tokenHint),
  /** A new thread holding the history before a prompt (a user message's id, or a reply's: its prompt), and that prompt's text. */
  forkThread: (id: string, fromMessageId: string): Promise<ForkReceipt> =>
    client.call('forkThread', { ...thread(id), body: { fromMessageId } }).catch(tokenHint),
  /** A new version of a prompt in place (Edit: `text`; Regenerate: none); `409 busy` during a run. */
  editMessage: (id: string, messageId: string, text?: string): Promise<PromptReceipt | CommandReceipt> =>
    client.call('editMessage', { ...thread(id), body: { messageId, ...(text !== undefined ? { text } : {}) } }).catch(tokenHint),
  /** Shows another version of a prompt (one of a user message's `versions`), with the conversation that followed it. */
  switchVersion: (id: string, messageId: string): Promise<void> =>
    client.call('switchVersion', { ...thread(id), body: { messageId } }).then(() => undefined, tokenHint),
  /** The thread's `/` commands: threadhost's own, then pi's (extensions, templates, skills). Builds a cold thread's runtime. */
  listCommands: (id: string): Promise<CommandInfo[]> => client.call('listCommands', thread(id)).then((r) => r.commands, tokenHint),
  /** Runs an extension's keyboard shortcut (a `kind: shortcut` command's name) on the thread. */
  runShortcut: (id: string, key: string): Promise<void> =>
    client.call('runShortcut', { ...thread(id), body: { key } }).then(() => undefined, tokenHint),
  /** The composer's draft, for extensions that read the editor; 404 (not live) is harmless. */
  reportDraft: (id: string, text: string): Promise<void> => client.call('reportDraft', { ...thread(id), body: { text } }).catch(tokenHint),
  /** `run` (with a steer or follow-up): the run this tab is looking at, so a tab that fell behind never queues into a newer one (`409 stale-run`). */
  /** `images`: for the model, with the text (refused 422 by a model that takes none, 413 over the size limit). */
  prompt: (id: string, message: string, deliverAs?: DeliverAs, run?: number, images?: PromptImage[]): Promise<PromptReceipt | CommandReceipt> =>
    client
      .call('prompt', {
        ...thread(id),
        body: { message, ...(deliverAs ? { deliverAs } : {}), ...(deliverAs && run !== undefined ? { run } : {}), ...(images?.length ? { images } : {}) },
      })
      .catch(tokenHint),
  /** `run`: the run this tab is looking at, so a tab that fell behind can never stop a newer one. */
  abort: (id: string, run?: number): Promise<AbortReceipt> =>
    client.call('abort', { ...thread(id), body: run !== undefined ? { run } : {} }).catch(tokenHint),
  /** pi's Alt+Up: the queued prompts back, the run going on; `run` as a stop's. */
  takeQueue: (id: string, run?: number): Promise<QueueTakeReceipt> =>
    client.call('takeQueue', { ...thread(id), body: run !== undefined ? { run } : {} }).catch(tokenHint),
  answerDialog: (id: string, body: DialogAnswerBody): Promise<void> =>
    client.call('answerDialog', { ...thread(id), body }).catch(tokenHint),
  /** What a run changed in the workspace, with each file's unified diff (changes-view.ts). */
  runChanges: (id: string, run: number): Promise<ChangesReport> =>
    client.call('runChanges', { params: { id, run: String(run) } }).catch(tokenHint),
  threadChanges: (id: string): Promise<ChangesReport> => client.call('threadChanges', thread(id)).catch(tokenHint),
  /** The workspace back to before run `toRun`; refused during a run, or with the paths changed since. */
  revert: (id: string, toRun: number): Promise<RestoreReceipt> => client.call('revert', { ...thread(id), body: { toRun } }).catch(tokenHint),
  redo: (id: string): Promise<RestoreReceipt> => client.call('redo', thread(id)).catch(tokenHint),
  /** One key or paste, as terminal bytes, for an open terminal component; `tab` holds its input lease. */
  terminalInput: (id: string, dialogId: string, data: string, tab: string): Promise<void> =>
    client.call('terminalInput', { params: { id, dialogId }, body: { data, tab } }).then(() => undefined, tokenHint),
  // EventSource cannot send headers: the token rides in the query.
  followUrl: (id: string, after = 0): string =>
    client.url('follow', { ...thread(id), query: { after: after > 0 ? String(after) : undefined, token: apiConfig.token || undefined } }),
}
export type Api = typeof api
