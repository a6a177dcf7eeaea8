/**
 * Observations: everything a follower learns about a thread, in order.
 *
 * Each SSE frame is `id: <seq>` / `event: <type>` / `data: <the observation as JSON>`. `seq` is a
 * per-thread integer (1, 2, 3 …) so a reconnecting tab can say exactly where it left off.
 */
import { Type, type Static } from 'typebox'
import { DialogOrigin, DialogOutcome, DialogSpec, OpenDialog } from './dialog.js'

const Seq = Type.Integer({ minimum: 1 })

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
export const UserMessageObservation = obs('user-message', {
  messageId: Type.String(),
  text: Type.String(),
  run: Type.Integer(),
})
export const AssistantStartObservation = obs('assistant-start', { messageId: Type.String() })
export const AssistantDeltaObservation = obs('assistant-delta', { messageId: Type.String(), text: Type.String() })
export const AssistantEndObservation = obs('assistant-end', {
  messageId: Type.String(),
  text: Type.String(),
  stopReason: Type.String(),
})
export const ToolStartObservation = obs('tool-start', {
  toolCallId: Type.String(),
  name: Type.String(),
  args: Type.Unknown(),
})
export const ToolUpdateObservation = obs('tool-update', { toolCallId: Type.String(), partial: Type.Unknown() })
export const ToolEndObservation = obs('tool-end', {
  toolCallId: Type.String(),
  result: Type.Unknown(),
  isError: Type.Boolean(),
})
export const QueueObservation = obs('queue', { steering: Type.Array(Type.String()), followUp: Type.Array(Type.String()) })
export const PromptRejectedObservation = obs('prompt-rejected', { messageId: Type.String(), reason: Type.String() })
/** An extension consumed the prompt (its command, or an input handler): it reached no model turn. */
export const PromptHandledObservation = obs('prompt-handled', { messageId: Type.String(), text: Type.String() })
export const ExtensionUiRequestObservation = obs('extension-ui-request', {
  id: Type.String(),
  blocking: Type.Literal(true),
  dialog: DialogSpec,
  origin: DialogOrigin,
  expiresAt: Type.Optional(Type.Number()),
})
export const DialogSettledObservation = obs('dialog-settled', { id: Type.String(), outcome: DialogOutcome })
export const NotifyObservation = obs('notify', { message: Type.String(), level: NotifyLevel })
export const SettledObservation = obs('settled', { run: Type.Integer(), aborted: Type.Boolean() })
export const ErrorObservation = obs('error', { message: Type.String() })

export const Observation = Type.Union([
  StatusObservation,
  UserMessageObservation,
  AssistantStartObservation,
  AssistantDeltaObservation,
  AssistantEndObservation,
  ToolStartObservation,
  ToolUpdateObservation,
  ToolEndObservation,
  QueueObservation,
  PromptRejectedObservation,
  PromptHandledObservation,
  ExtensionUiRequestObservation,
  DialogSettledObservation,
  NotifyObservation,
  SettledObservation,
  ErrorObservation,
])
export type Observation = Static<typeof Observation>
export type ObservationType = Observation['type']
/** An observation before the feed numbers it. */
export type ObservationInput = Observation extends infer O ? (O extends Observation ? Omit<O, 'seq'> : never) : never
export type ObservationOf<T extends ObservationType> = Extract<Observation, { type: T }>

/** One entry of a thread's transcript, as the projection folds it and the UI draws it. */
export const TranscriptEntry = Type.Union([
  Type.Object({ kind: Type.Literal('user'), messageId: Type.String(), text: Type.String(), run: Type.Integer() }),
  Type.Object({
    kind: Type.Literal('assistant'),
    messageId: Type.String(),
    text: Type.String(),
    streaming: Type.Boolean(),
    stopReason: Type.Optional(Type.String()),
  }),
  Type.Object({
    kind: Type.Literal('tool'),
    toolCallId: Type.String(),
    name: Type.String(),
    args: Type.Unknown(),
    state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('error')]),
    partial: Type.Optional(Type.Unknown()),
    result: Type.Optional(Type.Unknown()),
  }),
  Type.Object({ kind: Type.Literal('notify'), message: Type.String(), level: NotifyLevel }),
  Type.Object({ kind: Type.Literal('stopped'), run: Type.Integer() }),
  Type.Object({ kind: Type.Literal('rejected'), messageId: Type.String(), reason: Type.String() }),
  Type.Object({ kind: Type.Literal('handled'), messageId: Type.String(), text: Type.String() }),
  Type.Object({ kind: Type.Literal('error'), message: Type.String() }),
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
})
export type Snapshot = Static<typeof Snapshot>
