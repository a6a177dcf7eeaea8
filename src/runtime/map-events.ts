/**
 * pi session events → RuntimeEvents, one pi event at a time.
 *
 * Stateful only in the one way pi forces: an assistant message has no id of its own while it
 * streams, so the mapper gives each one a uuid at message_start and reuses it until message_end.
 * Run boundaries (`settled`) are not decided here; the adapter owns them.
 */
import { randomUUID } from 'node:crypto'
import type { AgentSessionEvent } from '@earendil-works/pi-coding-agent'
import type { RuntimeEvent } from './port.js'
import type { AgentMessage } from '@earendil-works/pi-agent-core'
import type { PromptImage, ReplyUsage, ToolResult, ToolResultImage } from '../schemas/index.js'

/** Large tool output stays in pi's session; the feed carries a bounded, JSON-safe summary. */
export const MAX_RESULT_TEXT = 8000
export const MAX_DETAILS_JSON = 2000
/**
 * How much of a long text's end is kept: tools end their output with what matters most about it —
 * their own truncation notice and where the full output is, an exit code, the error at the end.
 */
export const KEPT_TAIL = 1500
/** How far a cut may move to fall at a line's end. */
const LINE_SLACK = 200

/**
 * pi's tool result or partial result → the feed's `ToolResult`: text parts joined by newlines (its
 * middle cut to keep about MAX_RESULT_TEXT, the cut counted in `truncated` and said by a line in its
 * place), images named but never sent, details only
 * when JSON-safe and small. Anything that is not pi's shape still becomes text, so a frame never
 * carries a shape the client was not built for.
 */
export function compactToolResult(result: unknown): ToolResult {
  if (result === undefined || result === null) return { text: '' }
  if (typeof result !== 'object') return bounded(String(result))
  const r = result as { content?: unknown; details?: unknown }
  const texts: string[] = []
  const images: ToolResultImage[] = []
  for (const part of Array.isArray(r.content) ? (r.content as unknown[]) : []) {
    if (!part || typeof part !== 'object') continue
    const p = part as { type?: unknown; text?: unknown; mimeType?: unknown }
    if (p.type === 'text') texts.push(typeof p.text === 'string' ? p.text : '')
    else if (p.type === 'image') images.push({ mimeType: typeof p.mimeType === 'string' ? p.mimeType : 'image' })
    // A part pi may add later: named in place, so the reader knows something was there.
    else if (typeof p.type === 'string') texts.push(`[${p.type}]`)
  }
  const out = bounded(texts.join('\n'))
  if (images.length > 0) out.images = images
  if (r.details !== undefined) {
    try {
      const json = JSON.stringify(r.details)
      if (json !== undefined && json.length <= MAX_DETAILS_JSON) out.details = JSON.parse(json)
    } catch {
      // Not JSON-safe (cycles, BigInt): the text is enough.
    }
  }
  return out
}

/** The head and the last KEPT_TAIL characters of a long text, cut at line ends where one is near. */
function bounded(text: string): ToolResult {
  if (text.length <= MAX_RESULT_TEXT) return { text }
  let headEnd = MAX_RESULT_TEXT - KEPT_TAIL
  let tailStart = text.length - KEPT_TAIL
  const lineEnd = text.lastIndexOf('\n', headEnd - 1)
  if (lineEnd !== -1 && lineEnd >= headEnd - LINE_SLACK) headEnd = lineEnd + 1
  const lineStart = text.indexOf('\n', tailStart)
  if (lineStart !== -1 && lineStart < tailStart + LINE_SLACK) tailStart = lineStart + 1
  const cut = tailStart - headEnd
  return { text: `${text.slice(0, headEnd)}[… ${cut} characters not shown …]\n${text.slice(tailStart)}`, truncated: cut }
}

/** The thinking parts of an assistant message, joined; undefined when it has none. */
export function thinkingText(message: AgentMessage): string | undefined {
  if (message.role !== 'assistant' || !Array.isArray(message.content)) return undefined
  const parts = message.content.flatMap((c) => (c.type === 'thinking' && typeof c.thinking === 'string' && c.thinking !== '' ? [c.thinking] : []))
  return parts.length > 0 ? parts.join('\n\n') : undefined
}

/** The note a compaction leaves in the transcript, live and after a restart. */
export const compactedText = (tokensBefore: number) => `The conversation was compacted: ${tokensBefore} tokens summarised.`

/** When pi says a message was written (its `timestamp`, ms since the epoch), if it says. */
export function timeOf(message: AgentMessage): { at?: number } {
  const t = (message as { timestamp?: unknown }).timestamp
  return typeof t === 'number' && Number.isFinite(t) ? { at: t } : {}
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

/** A user message's image parts (pi's `{type: 'image', data, mimeType}`), in the feed's shape; undefined when none. */
export function imagesOf(message: AgentMessage): PromptImage[] | undefined {
  if (message.role !== 'user' || !Array.isArray(message.content)) return undefined
  const images = message.content.flatMap((c) =>
    c.type === 'image' && IMAGE_TYPES.has(c.mimeType) && typeof c.data === 'string' ? [{ mimeType: c.mimeType as PromptImage['mimeType'], data: c.data }] : [],
  )
  return images.length > 0 ? images : undefined
}

/** The text parts of a message, joined. */
export function messageText(message: AgentMessage): string {
  if (!('content' in message)) return ''
  const content = message.content
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((c) => (c && typeof c === 'object' && 'type' in c && c.type === 'text' ? (c as { text: string }).text : ''))
    .join('')
}

/**
 * Which model wrote an assistant message and what it used, as pi recorded them. Usage is carried as
 * the provider reported it (zeros included: a model that reports none says so); only a message
 * without pi's shape yields nothing.
 */
export function replyFacts(message: AgentMessage): { model?: string; provider?: string; usage?: ReplyUsage } {
  if (message.role !== 'assistant') return {}
  const out: { model?: string; provider?: string; usage?: ReplyUsage } = {}
  if (typeof message.model === 'string' && message.model) out.model = message.model
  if (typeof message.provider === 'string' && message.provider) out.provider = message.provider
  const u = message.usage as Partial<AssistantUsage> | undefined
  if (u && typeof u === 'object') {
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
    out.usage = {
      input: n(u.input),
      output: n(u.output),
      cacheRead: n(u.cacheRead),
      cacheWrite: n(u.cacheWrite),
      totalTokens: n(u.totalTokens),
      cost: n(u.cost?.total),
    }
  }
  return out
}

type AssistantUsage = Extract<AgentMessage, { role: 'assistant' }>['usage']

export interface MapperHooks {
  /** The host's id for the user message pi is delivering now (prompt, steer or follow-up). */
  userMessageId(text: string): string
}

export class EventMapper {
  private assistantId: string | undefined
  /** When the reply being streamed began and stopped thinking (ms since the epoch). */
  private thinkingFrom: number | undefined
  private thinkingTo: number | undefined

  constructor(
    private readonly hooks: MapperHooks,
    private readonly newId: () => string = randomUUID,
    private readonly now: () => number = Date.now,
  ) {}

  map(event: AgentSessionEvent): RuntimeEvent[] {
    switch (event.type) {
      case 'message_start': {
        const role = event.message.role
        if (role === 'user') {
          const text = messageText(event.message)
          const images = imagesOf(event.message)
          return [{ type: 'user-message', messageId: this.hooks.userMessageId(text), text, ...timeOf(event.message), ...(images ? { images } : {}) }]
        }
        if (role === 'assistant') {
          this.assistantId = this.newId()
          return [{ type: 'assistant-start', messageId: this.assistantId, ...timeOf(event.message) }]
        }
        return []
      }
      case 'message_update': {
        const e = event.assistantMessageEvent
        if (event.message.role !== 'assistant') return []
        if (e.type === 'thinking_start') this.thinkingFrom ??= this.now()
        if (e.type === 'thinking_delta') {
          this.thinkingFrom ??= this.now()
          return e.delta ? [{ type: 'assistant-thinking', messageId: this.currentAssistant(), text: e.delta }] : []
        }
        // The thinking ends when pi says so, or when the answer (its text or a tool call) begins.
        if (e.type === 'thinking_end' || e.type === 'text_start' || e.type === 'text_delta' || e.type === 'toolcall_start') {
          if (this.thinkingFrom !== undefined) this.thinkingTo ??= this.now()
        }
        if (e.type !== 'text_delta') return []
        return [{ type: 'assistant-delta', messageId: this.currentAssistant(), text: e.delta }]
      }
      case 'message_end': {
        const message = event.message
        // pi announces an extension's message as it enters the session; one it does not display stays out of sight.
        if (message.role === 'custom') return message.display ? [{ type: 'custom-message', customType: message.customType, text: messageText(message) }] : []
        if (message.role !== 'assistant') return []
        const messageId = this.currentAssistant()
        this.assistantId = undefined
        const thinking = thinkingText(message)
        const from = this.thinkingFrom
        const thinkingMs = from !== undefined && thinking !== undefined ? Math.max(0, (this.thinkingTo ?? this.now()) - from) : undefined
        this.thinkingFrom = this.thinkingTo = undefined
        const end: RuntimeEvent = {
          type: 'assistant-end',
          messageId,
          text: messageText(message),
          stopReason: message.stopReason,
          ...replyFacts(message),
          ...(thinking !== undefined ? { thinking } : {}),
          ...(thinkingMs !== undefined ? { thinkingMs } : {}),
        }
        if (message.stopReason !== 'error') return [end]
        return [end, { type: 'failure', message: message.errorMessage ?? 'The model failed without a message.' }]
      }
      case 'tool_execution_start':
        return [{ type: 'tool-start', toolCallId: event.toolCallId, name: event.toolName, args: jsonSafe(event.args), at: this.now() }]
      case 'tool_execution_update':
        return [{ type: 'tool-update', toolCallId: event.toolCallId, partial: compactToolResult(event.partialResult) }]
      case 'tool_execution_end':
        return [
          { type: 'tool-end', toolCallId: event.toolCallId, result: compactToolResult(event.result), isError: event.isError },
        ]
      case 'queue_update':
        return [{ type: 'queue', steering: [...event.steering], followUp: [...event.followUp] }]
      case 'auto_retry_start':
        return [{ type: 'retry', attempt: event.attempt, maxAttempts: event.maxAttempts, message: event.errorMessage }]
      case 'auto_retry_end':
        return [
          {
            type: 'retry-end',
            success: event.success,
            attempt: event.attempt,
            ...(event.finalError !== undefined ? { message: event.finalError } : {}),
          },
        ]
      case 'compaction_end':
        // Automatic compaction happens inside a run; either way the human should know the context shrank.
        return [
          {
            type: 'notify',
            level: event.result ? 'info' : 'warning',
            persist: true,
            ...(event.result ? { compacted: true as const } : {}),
            message: event.result
              ? compactedText(event.result.tokensBefore)
              : event.aborted
                ? 'Compaction was stopped.'
                : (event.errorMessage ?? 'Compaction failed.'),
          },
        ]
      default:
        return []
    }
  }

  private currentAssistant(): string {
    this.assistantId ??= this.newId()
    return this.assistantId
  }
}

function jsonSafe(value: unknown): unknown {
  try {
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value))
  } catch {
    return String(value)
  }
}
