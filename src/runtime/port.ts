/**
 * The agent runtime port: what the host needs from an agent runtime, and nothing more.
 *
 * The host depends on this file only; the pi adapter implements it (`session-factory.ts` builds a
 * session, `pi-adapter.ts` runs it). Run numbers, dialogs' lifecycles and the feed belong to the
 * host — the runtime reports what the agent did.
 */
import type {
  CommandInfo,
  DialogAnswer,
  ExtensionList,
  DialogOrigin,
  DialogOutcome,
  DialogSpec,
  NotifyLevel,
  ModelInfo,
  WorkingState,
  WidgetPlacement,
  QuestionnaireQuestion,
  PromptImage,
  ReplyUsage,
  ThinkingLevel,
  ToolResult,
  TranscriptEntry,
  TerminalScreen,
} from '../schemas/index.js'

/** A prompt the runtime holds in its queue, with the id the host gave it when it was admitted. */
export interface QueuedPrompt {
  messageId: string
  text: string
  /** Images for the model, as pi's image parts (base64 `data`). */
  images?: PromptImage[]
}

export interface ClearedQueue {
  steering: QueuedPrompt[]
  followUp: QueuedPrompt[]
}

/**
 * What the runtime reports, in the order it happened. The host numbers these into observations.
 * `settled` is the only way a run ends, exactly once per `prompt`, after the run's last event: pi's
 * own `agent_settled` when the prompt started a run, else the prompt's refusal or an extension's
 * handling of it.
 */
export type RuntimeEvent =
  /** `versions`: every version of this prompt, itself included, when an Edit or a Regenerate made more than one. */
  | { type: 'user-message'; messageId: string; text: string; versions?: string[]; at?: number; images?: PromptImage[] }
  | { type: 'assistant-start'; messageId: string; at?: number }
  | { type: 'assistant-delta'; messageId: string; text: string }
  | { type: 'assistant-thinking'; messageId: string; text: string }
  | {
      type: 'assistant-end'
      messageId: string
      text: string
      stopReason: string
      model?: string
      provider?: string
      usage?: ReplyUsage
      thinking?: string
      thinkingMs?: number
    }
  | { type: 'tool-start'; toolCallId: string; name: string; args: unknown; at?: number }
  | { type: 'tool-update'; toolCallId: string; partial: ToolResult }
  | { type: 'tool-end'; toolCallId: string; result: ToolResult; isError: boolean }
  | { type: 'queue'; steering: string[]; followUp: string[] }
  | { type: 'prompt-rejected'; messageId: string; reason: string }
  /** An extension consumed the prompt (a command, or an input handler that took it): no model turn. */
  | { type: 'prompt-handled'; messageId: string; text: string }
  /** A message an extension displays in the conversation (pi's custom message with `display: true`). */
  | { type: 'custom-message'; customType: string; text: string }
  /** The runtime's own note about the run (an auto-retry): `persist` puts it in the transcript. */
  | { type: 'notify'; message: string; level: NotifyLevel; persist?: true; compacted?: true }
  | { type: 'failure'; message: string }
  /** The conversation moved in place to another branch of its tree (`navigate`, an extension's ctx.navigateTree): its transcript, whole. */
  | { type: 'branch'; transcript: TranscriptEntry[] }
  /** pi retries a failed model call (attempt of maxAttempts), and how its retries ended. */
  | { type: 'retry'; attempt: number; maxAttempts: number; message: string }
  | { type: 'retry-end'; success: boolean; attempt: number; message?: string }
  /**
   * A run began that no prompt started (an extension's `pi.sendUserMessage`, a triggered turn): the
   * host numbers it (`adoptRun`) before any of its events, and it ends by its own `settled`.
   */
  | { type: 'run-started' }
  | {
      type: 'settled'
      aborted: boolean
      /**
       * Prompts that were steered or queued as follow-ups but that the agent never took because
       * its loop had already finished. They are cleared from the runtime's queue; the host must
       * start them as the next run (or hand them back) — never leave them to ride into a later run.
       */
      unclaimed: QueuedPrompt[]
    }

export type RuntimeListener = (event: RuntimeEvent) => void

export interface AgentRuntime {
  /**
   * Starts run number `run` (the thread machine counts runs; the runtime only records the number)
   * with this prompt. Only called while idle. The run ends with a `settled` event.
   */
  prompt(prompt: QueuedPrompt, run: number): void
  /** The run the runtime said it started (`run-started`) is run number `run`: recorded like a prompted one. */
  adoptRun(run: number): void
  /** The highest run number its persisted session records, so a thread's count never goes back after a crash. */
  lastRun(): number
  /** Queues a prompt into the running run: delivered after the current tool calls, before the next model call. */
  steer(prompt: QueuedPrompt): void
  /** Queues a prompt to run when the agent would otherwise stop. */
  followUp(prompt: QueuedPrompt): void
  /**
   * Empties the queue and returns what was waiting. Emits a `queue` event with both lists empty.
   * It may throw (pi's does not, another runtime's might): a stop still stops — the host says the
   * loss, restores nothing and still calls `abort()` — and a release still disposes.
   */
  clearQueue(): ClearedQueue
  /** Tells the agent to stop; the signal is raised synchronously. Resolves when the agent is idle. */
  abort(): Promise<void>
  subscribe(listener: RuntimeListener): () => void
  /** The persisted conversation, folded into transcript entries. */
  transcript(): TranscriptEntry[]
  /** The commands pi handles itself in a prompt: extension commands, prompt templates, skills. */
  commands(): CommandInfo[]
  /**
   * Runs an extension's shortcut (`pi.registerShortcut`) by its key id, as pi's terminal does on the
   * key press: started, not awaited (its handler may ask a question). `false`: no such shortcut.
   */
  runShortcut?(key: string): boolean
  /** Summarises the conversation so far into a shorter context (pi's /compact). Only called while idle. */
  compact(instructions?: string): Promise<void>
  /**
   * Asks the thread's extensions whether a fork before its user message `messageId` may go ahead
   * (pi's `session_before_fork`): `cancelled` when one refused. Optional: a runtime without it asks nobody.
   */
  beforeFork?(messageId: string): Promise<ActionResult>
  /**
   * Moves the conversation in place (pi's session tree), as pi's tree navigation does: `before` a
   * user message, so the next prompt is a new version of it (an Edit, a Regenerate); or `to` a
   * version of one, where that version's branch ends. Emits `branch` once moved. Only called while
   * idle. Optional: a runtime without it keeps one branch.
   */
  navigate?(target: NavigateTarget): Promise<NavigateResult>
  /**
   * Adds a message to the conversation that the model reads with the next prompt and every tab
   * shows (pi's custom message, `display: true`): what the host did to the workspace (a revert).
   * Optional: a runtime without it tells the model nothing.
   */
  note?(entry: { customType: string; text: string }): void
  /** Switches model and/or thinking level for the runs to come. Only called while idle. */
  configure(change: { model?: string; thinkingLevel?: ThinkingLevel }): Promise<void>
  dispose(): Promise<void>
}

/** A question the runtime asks a human. */
export interface DialogRequest {
  spec: DialogSpec
  origin: DialogOrigin
  /** The extension's own signal: aborting it settles the dialog `aborted`. */
  signal?: AbortSignal
  /** The extension's own timeout: on expiry the dialog settles `timeout`. */
  timeoutMs?: number
}

/** How a question ended. `answer` is present only when `outcome` is `answered`. */
export interface DialogResolution {
  outcome: DialogOutcome | 'refused'
  answer?: DialogAnswer
}

export type AskUserResult =
  | { status: 'answered'; value?: string; values?: string[]; other?: string }
  | { status: 'skipped' | 'cancelled' | 'unavailable' }

/**
 * The host's side of the extension-UI bridge. Each runtime gets one, bound once per session.
 * `ask` resolves only after the dialog's settle is on the thread's feed.
 */
export interface UiBridge {
  ask(request: DialogRequest): Promise<DialogResolution>
  /** ask_user_question: one question, shown when it reaches the head of the thread's ask-queue. */
  askUser(question: QuestionnaireQuestion, options: { signal?: AbortSignal; toolCallId?: string }): Promise<AskUserResult>
  /** A transient toast for everyone watching (not a transcript entry). */
  notify(message: string, level: NotifyLevel): void
  /**
   * pi's fire-and-forget `ctx.ui` calls, each a fact every follower gets. `undefined` clears a
   * status item or a widget; the host skips a call that changes nothing.
   */
  setStatus(key: string, text: string | undefined): void
  /** `placement` only when the extension gave one (pi's default is above the composer). */
  setWidget(key: string, lines: string[] | undefined, placement?: WidgetPlacement): void
  setWorking(working: WorkingState): void
  /** The thread's title; the host persists it like a rename. */
  setTitle(title: string): void
  /** Offered to every composer whose draft is empty. */
  setEditorText(text: string): void
  /** What is in the editor now: the latest of a tab's reported draft and an extension's setEditorText. */
  editorText(): string
  /**
   * `ctx.ui.custom()`: a terminal component, shown as a question when its turn comes (one at a time,
   * FIFO with ask_user_question); resolves once it settled. Absent: the host cannot show one.
   */
  showTerminal?(request: TerminalRequest): Promise<DialogResolution>
}

/** What the host gives a terminal component once it is on screen. */
export interface TerminalOutput {
  /** The component's screen, as it was rendered now (the host sends only what changed). */
  frame(screen: TerminalScreen): void
  /** The component called `done(value)`: its question settles `answered`. */
  done(): void
  /** The component could not be built: its question settles `cancelled`. */
  cancel(): void
}

/** The component as the host drives it: keys in, and the end of its question (any outcome). */
export interface TerminalControl {
  input(data: string): void
  close(): void
}

export interface TerminalRequest {
  origin: DialogOrigin
  title?: string
  cols: number
  rows: number
  /** Its turn came and its question is open: build and show the component. */
  open(output: TerminalOutput): TerminalControl
}

export type NavigateTarget = { before: string } | { to: string }

/** `cancelled`: an extension refused the move (pi's `session_before_tree`); `unknown-message`: no such user message. */
export type NavigateResult = { kind: 'moved' } | { kind: 'cancelled' } | { kind: 'unknown-message' }

/** pi's answer to a session action: `cancelled` when nothing changed. */
export interface ActionResult {
  cancelled: boolean
}

/**
 * Where a fork cuts the source's conversation: before one of its user messages (the host's
 * messageId), or through one of the runtime's own entries (pi's `ctx.fork(entryId, {position: 'at'})`).
 */
export type ForkCut = { beforeMessageId: string } | { throughEntry: string }

/**
 * What an extension's command may ask beyond its own thread's session: pi's command-context
 * session actions that make or show another session (`ctx.newSession()`, `ctx.fork()`,
 * `ctx.switchSession()`), which in threadhost mean a new thread or another thread shown to the
 * people watching. (`ctx.navigateTree()` stays in the thread: the runtime does it.) Each hook is
 * optional: without it the runtime tells the people watching that this host cannot do it, and the
 * extension gets `{cancelled: true}`, pi's value for "nothing changed" — never a silent success.
 * pi's `setup` and `withSession` callbacks are not carried: they need the new session, which only
 * the runtime that the host then builds for it can give them.
 */
export interface ThreadActions {
  /** `ctx.newSession()`: a new thread; `parentThreadId` when the extension named a thread's session as its parent. */
  newThread?(request: { parentThreadId?: string }): Promise<ActionResult>
  /** `ctx.fork(entryId)`: a new thread from this one's conversation, cut where pi's entry says (the thread's extensions were asked already). */
  fork?(cut: ForkCut): Promise<ActionResult>
  /** `ctx.switchSession(path)`: show another conversation; `threadId` when the path is a thread's session. */
  switchSession?(request: { sessionPath: string; threadId?: string }): Promise<ActionResult>
}

/**
 * What the runtime's session now says about itself (`undefined`: unchanged). `model` is a catalog
 * name (`demo` or `<provider>/<model-id>`); `name` is pi's session name, `''` when it was cleared.
 */
export interface SessionChange {
  model?: string
  thinkingLevel?: ThinkingLevel
  name?: string
}

/**
 * How a thread's session began when another made it: pi's `session_start` reason for it (`fork`: a
 * fork of that thread; `new`: an extension's `ctx.newSession()` there) and the thread it came from,
 * whose session file is the event's `previousSessionFile`.
 */
export interface SessionStart {
  reason: 'fork' | 'new'
  previousThreadId: string
}

/** A tool call about to change files (pi's `write`, `edit` with its path; `bash`, which may change anything). */
export interface FileChangeIntent {
  tool: 'write' | 'edit' | 'bash'
  /** The file a file tool names, absolute. */
  path?: string
}

export interface RuntimeOptions {
  threadId: string
  /** `demo`, or `<provider>/<model-id>` that the model catalog accepted. */
  model: string
  /** Unset: pi's configured default, clamped to what the model supports. */
  thinkingLevel?: ThinkingLevel
  /** The thread's workspace: where pi discovers project resources and its tools run. */
  cwd: string
  ui: UiBridge
  /** What the host can do when an extension's command asks for another session (see ThreadActions). */
  actions?: ThreadActions
  /** The session's first build after a fork or a new session: its extensions hear how it began (else `startup`). */
  begun?: SessionStart
  /**
   * The session's model, thinking level or name changed (an extension's pi.setModel, setThinkingLevel,
   * setSessionName, or the host's own configure): the thread's row should say so at once, and a
   * rebuild of the runtime use it.
   */
  onSessionChange?: (change: SessionChange) => void
  /**
   * Awaited before a tool that may change files runs (after the tool policy allowed it): the host
   * takes the run's checkpoint. It never refuses the call.
   */
  beforeFileChange?: (change: FileChangeIntent) => Promise<void>
  /**
   * Cluster mode only: asked before each tool call and each write to the session file; a reason means
   * this node may no longer act for the thread (another node may own it), and the step is refused.
   */
  fence?: () => string | undefined
}

export type ModelCheck = { ok: true; model: ModelInfo } | { ok: false; reason: string }

/** The models a thread may be created with: known to the runtime and with credentials. */
export interface ModelCatalog {
  list(): Promise<ModelInfo[]>
  check(name: string): Promise<ModelCheck>
}

/** A thread whose conversation the runtime has persisted, as found on disk (to rebuild a lost thread index). */
export interface PersistedThread {
  threadId: string
  /** The workspace the session was started in. */
  cwd?: string
  /** The model the session last ran on, as the catalog names it (`demo` or `<provider>/<model-id>`). */
  model?: string
  thinkingLevel?: ThinkingLevel
  createdAt: number
  updatedAt: number
  /** The highest run number the session records. */
  lastRun: number
  /** Why its session file is damaged beyond a torn last line (the thread is then unavailable; the other facts may be missing). */
  damaged?: string
  /** What its conversation says for its summary (as `describe` would). */
  facts?: PersistedFacts
}

/**
 * A thread's persisted conversation is damaged in a way that cutting a torn last line cannot repair.
 * The thread is unavailable until its file is repaired or the thread deleted; the runtime never
 * writes to such a file (a rewrite would drop the history it still holds).
 */
export class SessionDamaged extends Error {
  constructor(
    readonly threadId: string,
    readonly reason: string,
  ) {
    super(`thread ${threadId}: its session file is damaged (${reason})`)
    this.name = 'SessionDamaged'
  }
}

export interface RuntimeFactory {
  /** Builds the thread's runtime; rejects with `SessionDamaged`, writing nothing, when its session file is damaged. */
  create(options: RuntimeOptions): Promise<AgentRuntime>
  /** Every thread with a persisted conversation (optional: a factory that cannot say finds none). */
  listPersisted?(): Promise<PersistedThread[]>
  /**
   * The persisted transcript of a thread that has no live runtime (cold), without building one.
   * Rejects with `SessionDamaged` when the file is damaged beyond a torn last line.
   */
  readTranscript(threadId: string): Promise<TranscriptEntry[]>
  /** Removes a thread's persisted conversation. */
  remove(threadId: string): Promise<void>
  /**
   * Writes thread `threadId`'s conversation as `sourceThreadId`'s history up to the cut (before its
   * user message `beforeMessageId`, or through an entry), linked to the source (pi's own branching). The source is only read, so it
   * may be mid-run. Optional: a factory without it cannot fork.
   */
  fork?(request: ForkRequest): Promise<ForkResult>
  /**
   * What a thread's persisted conversation says about it, for its summary when no feed is loaded.
   * The host asks once per thread as it goes cold (and `listPersisted` says it for all at a start),
   * never per summary. Optional: without it, summaries say less.
   */
  describe?(threadId: string): Promise<PersistedFacts | undefined>
  /**
   * What became of the user's and the projects' extensions in the sessions built so far: loaded,
   * failed (to load, or in a handler), clashing. Optional: a runtime without extensions has none.
   */
  extensions?(): ExtensionList
}

export type ForkRequest = {
  sourceThreadId: string
  /** The new thread's id; nothing is persisted under it yet. */
  threadId: string
} & ForkCut

/** `unknown-message`: the source's persisted conversation has no such user message; nothing was written. */
export type ForkResult = { kind: 'forked'; lastRun: number } | { kind: 'unknown-message' }

export interface PersistedFacts {
  /** The thread this one was forked from. */
  forkedFrom?: string
  /** pi's session name (`/name`, an extension's `pi.setSessionName`). */
  name?: string
  firstPrompt?: string
  /** The last user or assistant message's text. */
  lastMessage?: string
}
