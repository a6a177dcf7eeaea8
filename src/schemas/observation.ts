/**
 * Observations: everything a follower learns about a thread, in order.
 *
 * Each SSE frame is `id: <seq>` / `event: <type>` / `data: <the observation as JSON>`. `seq` is a
 * per-thread integer (1, 2, 3 …) so a reconnecting tab can say exactly where it left off.
 */
import { Type, type Static } from 'typebox'
import { DialogOrigin, DialogOutcome, DialogSpec, OpenDialog } from './dialog.js'
import { ToolResult } from './tool-result.js'
import { FileChange, ThreadChanges } from './changes.js'
import { TerminalFrame, TerminalTypist } from './terminal.js'
import { PromptImage } from './http.js'

const Seq = Type.Integer({ minimum: 1 })
/** When a message was written or a tool call started, in ms since the epoch (pi's timestamps); absent when not known. */
const At = Type.Optional(Type.Number())

export const ThreadStatus = Type.Object({
  /** A runtime is built for the thread (it is not cold). */
  live: Type.Boolean(),
  /** A run is in flight: from its start until its own settle. */
  busy: Type.Boolean(),
  /** The number of the current (or last) run; 0 before the first. */
  run: Type.Integer({ minimum: 0 }),
})
export type ThreadStatus = Static<typeof ThreadStatus>

export const QueueState = Type.Object({
  steering: Type.Array(Type.String()),
  followUp: Type.Array(Type.String()),
})
export type QueueState = Static<typeof QueueState>

export const NotifyLevel = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')])
export type NotifyLevel = Static<typeof NotifyLevel>

const obs = <T extends string, P extends Parameters<typeof Type.Object>[0]>(type: T, props: P) =>
  Type.Object({ seq: Seq, type: Type.Literal(type), ...props })

export const StatusObservation = obs('status', { live: Type.Boolean(), busy: Type.Boolean(), run: Type.Integer() })
/**
 * The messageIds of every version of a user message, itself included, oldest first: the prompts an
 * Edit or a Regenerate sent in place of one another (pi's session tree). Absent: it has no other.
 */
const Versions = Type.Optional(Type.Array(Type.String()))
export const UserMessageObservation = obs('user-message', {
  messageId: Type.String(),
  text: Type.String(),
  run: Type.Integer(),
  versions: Versions,
  at: At,
  /** The prompt's images, as pi took them. */
  images: Type.Optional(Type.Array(PromptImage)),
})
export const AssistantStartObservation = obs('assistant-start', { messageId: Type.String(), at: At })
export const AssistantDeltaObservation = obs('assistant-delta', { messageId: Type.String(), text: Type.String() })
/** A piece of the reply's thinking (reasoning), streamed before its text. */
export const AssistantThinkingObservation = obs('assistant-thinking', { messageId: Type.String(), text: Type.String() })
/** What one reply cost, as the provider reported it (pi's `usage`); `cost` is the total in US dollars. */
export const ReplyUsage = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  totalTokens: Type.Number(),
  cost: Type.Number(),
})
export type ReplyUsage = Static<typeof ReplyUsage>
/** Which model wrote a reply, and what it used: absent for a runtime that does not say. */
const replyFacts = {
  model: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  usage: Type.Optional(ReplyUsage),
}
/** What the model thought before it answered (pi's thinking blocks), and for how long (absent: not known). */
const thoughtFacts = {
  thinking: Type.Optional(Type.String()),
  thinkingMs: Type.Optional(Type.Integer({ minimum: 0 })),
}
export const AssistantEndObservation = obs('assistant-end', {
  messageId: Type.String(),
  text: Type.String(),
  stopReason: Type.String(),
  ...replyFacts,
  ...thoughtFacts,
})
export const ToolStartObservation = obs('tool-start', {
  toolCallId: Type.String(),
  name: Type.String(),
  args: Type.Unknown(),
  at: At,
})
export const ToolUpdateObservation = obs('tool-update', { toolCallId: Type.String(), partial: ToolResult })
export const ToolEndObservation = obs('tool-end', {
  toolCallId: Type.String(),
  result: ToolResult,
  isError: Type.Boolean(),
})
export const QueueObservation = obs('queue', { steering: Type.Array(Type.String()), followUp: Type.Array(Type.String()) })
/** `text` (and `images`) when the host still has it (a restart or a release), so a tab that did not send it can offer it again. */
export const PromptRejectedObservation = obs('prompt-rejected', {
  messageId: Type.String(),
  reason: Type.String(),
  text: Type.Optional(Type.String()),
  images: Type.Optional(Type.Array(PromptImage)),
})
/** An extension consumed the prompt (its command, or an input handler): it reached no model turn. */
export const PromptHandledObservation = obs('prompt-handled', { messageId: Type.String(), text: Type.String() })
export const ExtensionUiRequestObservation = obs('extension-ui-request', {
  id: Type.String(),
  blocking: Type.Literal(true),
  dialog: DialogSpec,
  origin: DialogOrigin,
  expiresAt: Type.Optional(Type.Number()),
})
/** `chosen`: what an answer chose among the question's choices, as its card said them (`chosenOf`); absent for a typed answer. */
export const DialogSettledObservation = obs('dialog-settled', { id: Type.String(), outcome: DialogOutcome, chosen: Type.Optional(Type.String()) })
/** An open terminal component redrew: the lines that changed (src/schemas/terminal.ts). */
export const TerminalFrameObservation = obs('terminal-frame', { id: Type.String(), ...TerminalFrame.properties })
/** Another tab took the input of an open terminal component (or kept it past half its lease). */
export const TerminalTypistObservation = obs('terminal-typist', { id: Type.String(), ...TerminalTypist.properties })
/**
 * A note for the people watching. Without `persist` it is a transient toast (an extension's
 * `ctx.ui.notify`): it is not part of the transcript and a late joiner does not see it. With
 * `persist: true` it is the host's own note about the run (a compaction) and enters the transcript.
 */
export const NotifyObservation = obs('notify', {
  message: Type.String(),
  level: NotifyLevel,
  persist: Type.Optional(Type.Literal(true)),
  /** The note says the conversation was compacted: what the context held before is summarised (the fill is unknown until the next reply). */
  compacted: Type.Optional(Type.Literal(true)),
})
/** An extension's `ctx.ui.setStatus(key, text)`: a keyed status item; no `text` removes the key. */
export const StatusItemObservation = obs('status-item', { key: Type.String(), text: Type.Optional(Type.String()) })
/** Where an extension asked its widget to go, beside the composer (pi's `setWidget` `placement`). */
export const WidgetPlacement = Type.Union([Type.Literal('aboveEditor'), Type.Literal('belowEditor')])
export type WidgetPlacement = Static<typeof WidgetPlacement>
/**
 * An extension's `ctx.ui.setWidget(key, lines, {placement})` (string arrays only): no `lines` removes
 * the widget; no `placement` is pi's default, above the composer.
 */
export const WidgetObservation = obs('widget', {
  key: Type.String(),
  lines: Type.Optional(Type.Array(Type.String())),
  placement: Type.Optional(WidgetPlacement),
})
/** The busy indicator as extensions set it (`setWorkingMessage` / `setWorkingVisible`). */
export const WorkingState = Type.Object({
  /** Replaces the indicator's default text; absent means the default. */
  message: Type.Optional(Type.String()),
  visible: Type.Boolean(),
})
export type WorkingState = Static<typeof WorkingState>
export const WorkingObservation = obs('working', { message: Type.Optional(Type.String()), visible: Type.Boolean() })
/** An extension's `ctx.ui.setTitle(title)`: what the pane shows as the title while the thread is live (never a rename). */
export const TitleObservation = obs('title', { title: Type.String() })
/** An extension's `setEditorText` / `pasteToEditor`: fills the composer of every tab whose draft is empty. */
export const EditorTextObservation = obs('editor-text', { text: Type.String() })
/**
 * A message an extension displays in the conversation (`pi.sendMessage({customType, content, display: true})`):
 * a transcript entry labelled with its `customType`. pi's own renderer for it (a TUI component) does not travel.
 */
export const CustomMessageObservation = obs('custom-message', { customType: Type.String(), text: Type.String() })
/**
 * The conversation moved in place to another branch of its tree (another version chosen, an Edit or a
 * Regenerate about to send, an extension's `ctx.navigateTree`): the transcript is the branch's, whole.
 * Every follower replaces its transcript with it, as a fresh snapshot would; a tab that resumes from
 * before it replays it, so it never shows the old branch.
 */
export const BranchObservation = obs('branch', {
  // Each a TranscriptEntry (declared below, with the view): typed here, not checked again.
  transcript: Type.Array(Type.Unsafe<TranscriptEntry>({ type: 'object', description: 'a TranscriptEntry' })),
})
export const SettledObservation = obs('settled', { run: Type.Integer(), aborted: Type.Boolean() })
/**
 * The model or the runtime failed (a provider's 500 or 429, a rejected key, an extension's error). Not
 * named `error`: an SSE event of that name is an EventSource's own connection-error event, so a tab
 * would take the failure for a lost connection and never show it.
 */
export const FailureObservation = obs('failure', { message: Type.String() })
/**
 * pi retries a failed model call (its `auto_retry_start`): the failure just shown becomes ONE line
 * that counts the attempts ("retrying 2/3…") instead of a box per attempt.
 */
export const RetryObservation = obs('retry', { attempt: Type.Integer(), maxAttempts: Type.Integer(), message: Type.String() })
/** pi's retries ended (`auto_retry_end`): the model answered on a retry, or pi gave up (`message`: the last failure). */
export const RetryEndObservation = obs('retry-end', { success: Type.Boolean(), attempt: Type.Integer(), message: Type.Optional(Type.String()) })

// ——— what the agent changed in the workspace (src/host/checkpoints/) ———
/** A run's changes are known (it settled after a checkpoint): the files it added, modified and deleted. */
export const RunChangesObservation = obs('run-changes', {
  run: Type.Integer(),
  files: Type.Array(FileChange),
  untracked: Type.Optional(Type.String()),
})
/** A revert (or a redo) restored these files: `reverted` runs are now undone, `restored` ones are back. */
export const WorkspaceRestoredObservation = obs('workspace-restored', {
  action: Type.Union([Type.Literal('revert'), Type.Literal('redo')]),
  files: Type.Array(Type.String()),
  reverted: Type.Array(Type.Integer()),
  restored: Type.Array(Type.Integer()),
  canRedo: Type.Boolean(),
})

export const Observation = Type.Union([
  StatusObservation,
  UserMessageObservation,
  AssistantStartObservation,
  AssistantDeltaObservation,
  AssistantThinkingObservation,
  AssistantEndObservation,
  ToolStartObservation,
  ToolUpdateObservation,
  ToolEndObservation,
  QueueObservation,
  PromptRejectedObservation,
  PromptHandledObservation,
  ExtensionUiRequestObservation,
  DialogSettledObservation,
  TerminalFrameObservation,
  TerminalTypistObservation,
  NotifyObservation,
  StatusItemObservation,
  WidgetObservation,
  WorkingObservation,
  TitleObservation,
  EditorTextObservation,
  CustomMessageObservation,
  SettledObservation,
  FailureObservation,
  BranchObservation,
  RunChangesObservation,
  WorkspaceRestoredObservation,
  RetryObservation,
  RetryEndObservation,
])
export type Observation = Static<typeof Observation>
export type ObservationType = Observation['type']
/** An observation before the feed numbers it. */
export type ObservationInput = Observation extends infer O ? (O extends Observation ? Omit<O, 'seq'> : never) : never
export type ObservationOf<T extends ObservationType> = Extract<Observation, { type: T }>

/** One entry of a thread's transcript, as the projection folds it and the UI draws it. */
export const TranscriptEntry = Type.Union([
  Type.Object({
    kind: Type.Literal('user'),
    messageId: Type.String(),
    text: Type.String(),
    run: Type.Integer(),
    versions: Versions,
    at: At,
    images: Type.Optional(Type.Array(PromptImage)),
  }),
  Type.Object({
    kind: Type.Literal('assistant'),
    messageId: Type.String(),
    at: At,
    text: Type.String(),
    streaming: Type.Boolean(),
    stopReason: Type.Optional(Type.String()),
    ...replyFacts,
    ...thoughtFacts,
  }),
  Type.Object({
    kind: Type.Literal('tool'),
    toolCallId: Type.String(),
    name: Type.String(),
    args: Type.Unknown(),
    at: At,
    state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('error')]),
    /** The latest partial result while it runs; dropped when it ends. */
    partial: Type.Optional(ToolResult),
    result: Type.Optional(ToolResult),
  }),
  Type.Object({ kind: Type.Literal('notify'), message: Type.String(), level: NotifyLevel, compacted: Type.Optional(Type.Literal(true)) }),
  Type.Object({ kind: Type.Literal('stopped'), run: Type.Integer() }),
  Type.Object({
    kind: Type.Literal('rejected'),
    messageId: Type.String(),
    reason: Type.String(),
    text: Type.Optional(Type.String()),
    images: Type.Optional(Type.Array(PromptImage)),
  }),
  Type.Object({ kind: Type.Literal('handled'), messageId: Type.String(), text: Type.String() }),
  /** An extension's displayed message (`custom-message`). */
  Type.Object({ kind: Type.Literal('custom'), customType: Type.String(), text: Type.String() }),
  Type.Object({ kind: Type.Literal('error'), message: Type.String() }),
  /**
   * A model call pi retried, as one line: `retrying` while pi waits to try again, `recovered` once a
   * retry answered, `failed` when pi gave up (`message`: the latest failure). `maxAttempts` is
   * unknown after a reload (pi does not record it).
   */
  Type.Object({
    kind: Type.Literal('retry'),
    attempt: Type.Integer(),
    maxAttempts: Type.Optional(Type.Integer()),
    message: Type.String(),
    state: Type.Union([Type.Literal('retrying'), Type.Literal('recovered'), Type.Literal('failed')]),
  }),
])
export type TranscriptEntry = Static<typeof TranscriptEntry>

/** The first frame of every follow: the projection at `seq`. */
export const Snapshot = Type.Object({
  type: Type.Literal('snapshot'),
  threadId: Type.String(),
  seq: Type.Integer({ minimum: 0 }),
  status: ThreadStatus,
  transcript: Type.Array(TranscriptEntry),
  queue: QueueState,
  openDialogs: Type.Array(OpenDialog),
  /** Extensions' status items by key (`status-item`); cleared when the thread goes cold. */
  statusItems: Type.Record(Type.String(), Type.String()),
  /** Extensions' widgets by key (`widget`), each a block of text lines; cleared when the thread goes cold. */
  widgets: Type.Record(Type.String(), Type.Array(Type.String())),
  /** Where a widget asked to go, by key, for the widgets that gave a placement (absent: none did). */
  widgetPlacements: Type.Optional(Type.Record(Type.String(), WidgetPlacement)),
  /** The busy indicator (`working`); back to `{visible: true}` when the thread goes cold. */
  working: WorkingState,
  /**
   * The title an extension shows while the thread is live (`ctx.ui.setTitle`, e.g. a spinner): the
   * pane shows it in place of the thread's own title, which it never renames; gone when the thread goes cold.
   */
  liveTitle: Type.Optional(Type.String()),
  /** What the agent changed, per run (`run-changes`, `workspace-restored`); absent until a run changed something. */
  changes: Type.Optional(ThreadChanges),
})
export type Snapshot = Static<typeof Snapshot>
