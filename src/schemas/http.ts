/** Request bodies, receipts and error shapes of the HTTP API (see docs/api.md). */
import { Type, type Static } from 'typebox'
import { QuestionAnswer, type DialogAnswer } from './dialog.js'

export const THREAD_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$'
export const MAX_PROMPT_CHARS = 100_000

export const ThreadId = Type.String({ pattern: THREAD_ID_PATTERN })
export const ThreadParams = Type.Object({ id: ThreadId })

/** pi's thinking levels; a model that reasons less is clamped by pi to what it supports. */
export const ThinkingLevel = Type.Union([
  Type.Literal('off'),
  Type.Literal('minimal'),
  Type.Literal('low'),
  Type.Literal('medium'),
  Type.Literal('high'),
  Type.Literal('xhigh'),
])
export type ThinkingLevel = Static<typeof ThinkingLevel>
/** The same levels as a list, for messages and `/thinking`. */
export const THINKING_LEVELS: readonly ThinkingLevel[] = ThinkingLevel.anyOf.map((level) => level.const)

const ModelName = Type.String({ minLength: 1, maxLength: 200 })

export const CreateThreadBody = Type.Object(
  {
    id: Type.Optional(ThreadId),
    title: Type.Optional(Type.String({ maxLength: 200 })),
    /** `demo` or `<provider>/<model-id>` from `GET /api/models`; default: the server's default model. */
    model: Type.Optional(ModelName),
    thinkingLevel: Type.Optional(ThinkingLevel),
    /** The thread's workspace, inside one of the server's allowed roots; default: the first root. */
    cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
    /** In a git workspace: the thread works in its own worktree on its own branch (`threadhost/<id>`), under the data dir. */
    worktree: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type CreateThreadBody = Static<typeof CreateThreadBody>

/** A rename, and/or a model or thinking level for the runs to come. */
export const UpdateThreadBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    model: Type.Optional(ModelName),
    thinkingLevel: Type.Optional(ThinkingLevel),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateThreadBody = Static<typeof UpdateThreadBody>

/** One model a thread can run on (`GET /api/models`): `demo` and every model pi has credentials for. */
export const ModelInfo = Type.Object({
  name: Type.String(),
  provider: Type.String(),
  id: Type.String(),
  label: Type.String(),
  reasoning: Type.Boolean(),
  contextWindow: Type.Number(),
  /** The model takes images (pi's `input` has `image`); absent: not said. */
  images: Type.Optional(Type.Boolean()),
})
export type ModelInfo = Static<typeof ModelInfo>

export const ModelList = Type.Object({ models: Type.Array(ModelInfo), default: Type.String() })
export type ModelList = Static<typeof ModelList>

/** What the composer can run (`GET /api/threads/:id/commands`); `name` is typed after the slash. */
export const CommandInfo = Type.Object({
  name: Type.String(),
  description: Type.String(),
  /** `shortcut`: an extension's key binding (`name` is pi's key id, e.g. `ctrl+shift+u`), run with `POST …/shortcut`, never typed as `/name`. */
  kind: Type.Union([Type.Literal('extension'), Type.Literal('template'), Type.Literal('skill'), Type.Literal('threadhost'), Type.Literal('shortcut')]),
})
export type CommandInfo = Static<typeof CommandInfo>
export const CommandList = Type.Object({ commands: Type.Array(CommandInfo) })

/** `POST …/shortcut`: an extension's shortcut, by pi's key id (as `GET …/commands` lists it). */
export const ShortcutBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false })
export const ShortcutReceipt = Type.Object({ threadId: Type.String(), key: Type.String() })

export const Admission = Type.Union([Type.Literal('enqueue'), Type.Literal('reject')])
export const DeliverAs = Type.Union([Type.Literal('steer'), Type.Literal('followUp')])
export type Admission = Static<typeof Admission>
export type DeliverAs = Static<typeof DeliverAs>

/** An image in a prompt: at most MAX_IMAGE_BYTES once decoded (a larger one is a 413 naming the limit), MAX_PROMPT_IMAGES of them. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024
export const MAX_PROMPT_IMAGES = 4
/** The prompt route's body limit: every image at its largest, base64, and the text. */
export const PROMPT_BODY_LIMIT = MAX_PROMPT_IMAGES * Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + (1 << 20)
export const PromptImage = Type.Object(
  {
    mimeType: Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg'), Type.Literal('image/gif'), Type.Literal('image/webp')]),
    /** The image's bytes, base64. */
    data: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
)
export type PromptImage = Static<typeof PromptImage>

/** How many bytes a base64 text decodes to. */
export const decodedBytes = (base64: string): number => Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0)

export const PromptBody = Type.Object(
  {
    message: Type.String({ minLength: 1 }),
    /** Images for the model (pi's image parts): refused `422` by a model without image input. */
    images: Type.Optional(Type.Array(PromptImage, { maxItems: MAX_PROMPT_IMAGES })),
    admission: Type.Optional(Admission),
    deliverAs: Type.Optional(DeliverAs),
    /**
     * The run the sender is looking at, sent with a steer or follow-up: when another run is the
     * current one the prompt is refused `409 stale-run` instead of being queued into it.
     */
    run: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
)
export type PromptBody = Static<typeof PromptBody>

export const PromptReceipt = Type.Object({
  threadId: Type.String(),
  messageId: Type.String(),
  run: Type.Integer(),
  queued: Type.Boolean(),
})
export type PromptReceipt = Static<typeof PromptReceipt>

/** `PUT /api/threads/:id/draft`: what a tab's composer holds now (extensions read it with getEditorText). */
export const DraftBody = Type.Object({ text: Type.String({ maxLength: MAX_PROMPT_CHARS }) }, { additionalProperties: false })
export type DraftBody = Static<typeof DraftBody>

export const AbortBody = Type.Object({ run: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false })

/**
 * What `POST /api/threads/:id/abort` answers when the runtime was told: the prompts that were
 * WAITING behind the stopped run, in order, steering first, cleared from the queue and handed back
 * so the stopping tab can put them in its composer. Never delivered silently on a later turn, never
 * dropped. Empty when nothing waited. The run's own end still arrives on the follow.
 */
export const AbortReceipt = Type.Object(
  {
    threadId: Type.String(),
    restored: Type.Array(Type.String()),
  },
  { additionalProperties: false },
)
export type AbortReceipt = Static<typeof AbortReceipt>

/**
 * What `POST /api/threads/:id/queue/take` answers (pi's Alt+Up): the prompts that were waiting, in
 * order, steering first, taken off the queue and handed back as a stop hands them back — but the
 * run goes on. Empty when nothing waited.
 */
export const QueueTakeReceipt = Type.Object(
  {
    threadId: Type.String(),
    restored: Type.Array(Type.String()),
  },
  { additionalProperties: false },
)
export type QueueTakeReceipt = Static<typeof QueueTakeReceipt>

const QuestionId = Type.String({ minLength: 1 })

/** What a client sends to `POST …/dialog`: `{id}` plus exactly one way of answering; `cancelled: true` withdraws the question. */
export const DialogAnswerBody = Type.Union([
  Type.Object({ id: QuestionId, value: Type.String() }, { additionalProperties: false }),
  Type.Object({ id: QuestionId, confirmed: Type.Boolean() }, { additionalProperties: false }),
  Type.Object({ id: QuestionId, answers: Type.Array(QuestionAnswer) }, { additionalProperties: false }),
  Type.Object({ id: QuestionId, cancelled: Type.Literal(true) }, { additionalProperties: false }),
])
export type DialogAnswerBody = Static<typeof DialogAnswerBody>
/** A `DialogAnswerBody` without its id: what a card submits. */
export type DialogReply = DialogAnswer | { cancelled: true }

/**
 * What the route checks itself: an object naming a question. Whether the rest answers THAT question
 * is the question's own dialog machine's call — a `422` with the reason, never a `400` from here.
 */
export const DialogAnswerRequest = Type.Object({ id: QuestionId }, { additionalProperties: true })
export type DialogAnswerRequest = Static<typeof DialogAnswerRequest>

export const ThreadSummary = Type.Object({
  threadId: Type.String(),
  title: Type.String(),
  model: Type.String(),
  thinkingLevel: Type.Optional(ThinkingLevel),
  cwd: Type.String(),
  live: Type.Boolean(),
  busy: Type.Boolean(),
  run: Type.Integer(),
  openDialogs: Type.Integer(),
  createdAt: Type.Number(),
  updatedAt: Type.Number(),
  /**
   * Set when the thread cannot be used: its session file is damaged. Prompts are refused (`409
   * unavailable`) and the file is never written until it is repaired or the thread deleted.
   */
  unavailable: Type.Optional(Type.String()),
  /** The last message of the conversation, one line, cut short: the list's preview. */
  preview: Type.Optional(Type.String()),
  /** The thread this one was forked from (`POST /api/threads/:id/fork`); it may since have been deleted. */
  parentId: Type.Optional(Type.String()),
  /** Cluster mode (`GET /api/threads/:id`): the name of the node that owns the thread, while one does. */
  node: Type.Optional(Type.String()),
  /** The thread's own git worktree (created with `worktree: true`): its folder and branch; removed with the thread. */
  worktree: Type.Optional(Type.Object({ path: Type.String(), branch: Type.String() })),
})
export type ThreadSummary = Static<typeof ThreadSummary>

/** `POST /api/threads/:id/fork`: the message to fork at, by the id the transcript gives it. */
export const ForkBody = Type.Object({ fromMessageId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })
export type ForkBody = Static<typeof ForkBody>

/**
 * `201` from the fork route: the new thread, holding the history before the prompt it was cut at,
 * and that prompt's text (the user message named, or the prompt that produced the reply named) —
 * for the composer to edit, or to send again as a regenerate.
 */
export const ForkReceipt = Type.Object({ thread: ThreadSummary, prompt: Type.String() }, { additionalProperties: false })
export type ForkReceipt = Static<typeof ForkReceipt>

/**
 * `POST …/edit`: a new version of a prompt, sent in place — the conversation goes back to just before
 * the prompt (`messageId`: the user message, or a reply it produced) and `text` is sent there; no
 * `text` sends the prompt's own again (Regenerate). The versions are one conversation's (‹ 2 / 3 ›).
 */
export const EditBody = Type.Object(
  { messageId: Type.String({ minLength: 1, maxLength: 200 }), text: Type.Optional(Type.String({ minLength: 1 })) },
  { additionalProperties: false },
)
export type EditBody = Static<typeof EditBody>

/** `POST …/version`: show this version of a prompt (a user message's messageId from its `versions`), where its conversation ends. */
export const VersionBody = Type.Object({ messageId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })
export const VersionReceipt = Type.Object({ threadId: Type.String(), messageId: Type.String() })

/** `200` from the prompt route when the message was one of threadhost's own commands: no run started. */
export const CommandReceipt = Type.Object({
  threadId: Type.String(),
  command: Type.String(),
  /** The thread the command changed — or, for `/new`, the thread it created. */
  thread: ThreadSummary,
})
export type CommandReceipt = Static<typeof CommandReceipt>
