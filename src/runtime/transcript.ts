/**
 * pi's persisted session → the host's TranscriptEntry[].
 *
 * pi's messages carry no ids the host knows, so the adapter writes a small custom entry
 * (`threadhost.ids`, ignored by pi's LLM context) just before each user and assistant message it
 * sees: the host's messageId and, for user messages, the run number. Folding pairs each marker
 * with the next message entry; messages without a marker fall back to pi's entry id.
 */
import { readFile } from 'node:fs/promises'
import type { FileEntry, SessionEntry } from '@earendil-works/pi-coding-agent'
import type { ThinkingLevel, TranscriptEntry } from '../schemas/index.js'
import type { PersistedFacts } from './port.js'
import { compactedText, compactToolResult, imagesOf, messageText, replyFacts, thinkingText, timeOf } from './map-events.js'
import { SessionDamaged } from './port.js'
import { checkSession } from './session-file.js'
import { userShellArgs, userShellResult } from './user-shell.js'

export const IDS_ENTRY = 'threadhost.ids'
/** Written when a run starts, so a run whose prompt never reached the model still counts. */
export const RUN_ENTRY = 'threadhost.run'

export interface IdsMarker {
  messageId: string
  run?: number
  /** How long the reply thought before it answered: pi records the thinking, not its duration. */
  thinkingMs?: number
}

type ToolEntry = Extract<TranscriptEntry, { kind: 'tool' }>

/** The conversation path (root → leaf) of a session file's entries, as pi would resume it. */
export function branchOf(entries: FileEntry[]): SessionEntry[] {
  const byId = new Map<string, SessionEntry>()
  let leaf: SessionEntry | undefined
  for (const entry of entries) {
    if (entry.type === 'session') continue
    byId.set(entry.id, entry)
    leaf = entry
  }
  const path: SessionEntry[] = []
  for (let e = leaf; e; e = e.parentId ? byId.get(e.parentId) : undefined) path.push(e)
  return path.reverse()
}

/**
 * Reads a thread's session file without building a session or writing anything; a missing file is
 * an empty transcript, a torn last line is left out, and any other damage rejects with `SessionDamaged`.
 */
export async function readSessionFile(file: string, threadId: string): Promise<SessionEntry[]> {
  return branchOf(await readSessionEntries(file, threadId))
}

/** Every entry of a thread's session file (its whole tree, every branch), read as `readSessionFile` reads it. */
export async function readSessionEntries(file: string, threadId: string): Promise<SessionEntry[]> {
  const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  const check = bytes ? checkSession(bytes) : ({ kind: 'none' } as const)
  if (check.kind === 'damaged') throw new SessionDamaged(threadId, check.reason)
  return check.kind === 'ok' ? check.entries.filter((e): e is SessionEntry => e.type !== 'session') : []
}

/** What a session file says about its thread, to rebuild a lost thread index. */
export interface SessionFacts {
  cwd?: string
  createdAt?: number
  /** The last model the session switched to: pi's provider and model id. */
  model?: { provider: string; modelId: string }
  thinkingLevel?: ThinkingLevel
  lastRun: number
}

export function sessionFacts(entries: FileEntry[]): SessionFacts {
  const facts: SessionFacts = { lastRun: 0 }
  const header = entries[0] as { type?: string; cwd?: unknown; timestamp?: unknown } | undefined
  if (header?.type === 'session') {
    if (typeof header.cwd === 'string') facts.cwd = header.cwd
    const at = typeof header.timestamp === 'string' ? Date.parse(header.timestamp) : NaN
    if (!Number.isNaN(at)) facts.createdAt = at
  }
  for (const e of entries) {
    const entry = e as { type?: string; provider?: unknown; modelId?: unknown; thinkingLevel?: unknown }
    if (entry.type === 'model_change' && typeof entry.provider === 'string' && typeof entry.modelId === 'string') {
      facts.model = { provider: entry.provider, modelId: entry.modelId }
    }
    if (entry.type === 'thinking_level_change' && typeof entry.thinkingLevel === 'string') facts.thinkingLevel = entry.thinkingLevel as ThinkingLevel
  }
  facts.lastRun = lastRun(branchOf(entries))
  return facts
}

/** The highest run number recorded so far (0 for a new thread). */
export function lastRun(entries: SessionEntry[]): number {
  let run = 0
  for (const e of entries) {
    const marker = markerOf(e)
    const started = e.type === 'custom' && e.customType === RUN_ENTRY ? (e.data as { run?: unknown })?.run : undefined
    for (const n of [marker?.run, started]) if (typeof n === 'number' && n > run) run = n
  }
  return run
}

function markerOf(entry: SessionEntry): IdsMarker | undefined {
  if (entry.type !== 'custom' || entry.customType !== IDS_ENTRY) return undefined
  const data = entry.data as Partial<IdsMarker> | undefined
  return typeof data?.messageId === 'string' ? (data as IdsMarker) : undefined
}

/**
 * `versionsOf`: the other versions of a user message (session-branches.ts), by pi's entry id; a
 * user message with more than one carries them all, itself included, as messageIds.
 */
export function foldTranscript(entries: SessionEntry[], versionsOf?: (entryId: string) => string[] | undefined): TranscriptEntry[] {
  const out: TranscriptEntry[] = []
  const tools = new Map<string, ToolEntry>()
  let marker: IdsMarker | undefined
  let run = 0
  for (const entry of entries) {
    const m = markerOf(entry)
    if (m) {
      marker = m
      continue
    }
    if (entry.type === 'compaction') {
      out.push({ kind: 'notify', message: compactedText(entry.tokensBefore), level: 'info', compacted: true })
      continue
    }
    if (entry.type === 'custom_message') {
      if (entry.display) out.push({ kind: 'custom', customType: entry.customType, text: customText(entry.content) })
      continue
    }
    if (entry.type !== 'message') continue
    const message = entry.message
    const messageId = marker?.messageId ?? entry.id
    const markerRun = marker?.run
    const thinkingMs = marker?.thinkingMs
    marker = undefined
    switch (message.role) {
      case 'user':
        run = markerRun ?? Math.max(run, 1)
        const versions = versionsOf?.(entry.id)
        const images = imagesOf(message)
        out.push({ kind: 'user', messageId, text: messageText(message), run, ...(versions ? { versions } : {}), ...timeOf(message), ...(images ? { images } : {}) })
        break
      case 'assistant': {
        // pi answers a failure with another call only when it retries it (auto-retry): the failures
        // before this reply are one retry line, as they were live.
        if (message.stopReason !== 'error') recovered(out)
        const text = messageText(message)
        const calls = message.content.filter((c) => c.type === 'toolCall')
        // An empty reply (e.g. the aborted turn pi adds after Stop) has nothing to draw.
        const thinking = thinkingText(message)
        if (text || thinking !== undefined || (calls.length === 0 && message.stopReason !== 'aborted' && message.stopReason !== 'error')) {
          out.push({
            kind: 'assistant',
            messageId,
            ...timeOf(message),
            text,
            streaming: false,
            stopReason: message.stopReason,
            ...replyFacts(message),
            ...(thinking !== undefined ? { thinking } : {}),
            ...(typeof thinkingMs === 'number' ? { thinkingMs } : {}),
          })
        }
        for (const call of calls) {
          // pi runs a reply's tool calls once the reply is written: its entry's time is when they started.
          const tool: ToolEntry = { kind: 'tool', toolCallId: call.id, name: call.name, args: call.arguments, state: 'running', ...entryTime(entry) }
          tools.set(call.id, tool)
          out.push(tool)
        }
        if (message.stopReason === 'aborted') out.push({ kind: 'stopped', run: Math.max(run, 1) })
        if (message.stopReason === 'error') failed(out, message.errorMessage ?? 'The model failed.')
        break
      }
      case 'toolResult': {
        const tool = tools.get(message.toolCallId)
        if (!tool) break
        tool.state = message.isError ? 'error' : 'done'
        tool.result = compactToolResult(message)
        break
      }
      case 'bashExecution': {
        // A `!`/`!!` command from the composer: drawn as the `bash` entry it was live (user-shell.ts).
        const shell = { command: message.command, excludeFromContext: !!message.excludeFromContext }
        const { result, isError } = userShellResult(message)
        out.push({ kind: 'tool', toolCallId: messageId, name: 'bash', args: userShellArgs(shell), state: isError ? 'error' : 'done', result, ...timeOf(message) })
        break
      }
      default:
        break
    }
  }
  return out
}

/**
 * A failed model call: shown as a failure, or — when it follows a failure of the same turn, which pi
 * only makes by retrying — counted on that failure's retry line, which then says pi gave up.
 */
function failed(out: TranscriptEntry[], message: string): void {
  const last = out.at(-1)
  if (last?.kind === 'error') out[out.length - 1] = { kind: 'retry', attempt: 1, message, state: 'failed' }
  else if (last?.kind === 'retry') out[out.length - 1] = { ...last, attempt: last.attempt + 1, message }
  else out.push({ kind: 'error', message })
}

/** A reply after a failure of the same turn: pi's retry answered. */
function recovered(out: TranscriptEntry[]): void {
  const last = out.at(-1)
  if (last?.kind === 'error') out[out.length - 1] = { kind: 'retry', attempt: 1, message: last.message, state: 'recovered' }
  else if (last?.kind === 'retry') out[out.length - 1] = { ...last, attempt: last.attempt + 1, state: 'recovered' }
}

/** When pi appended a session entry (its ISO `timestamp`). */
function entryTime(entry: SessionEntry): { at?: number } {
  const t = Date.parse(entry.timestamp)
  return Number.isNaN(t) ? {} : { at: t }
}

/** A custom message's content (a string, or pi's text and image parts) as text. */
function customText(content: unknown): string {
  return messageText({ role: 'custom', content } as unknown as Parameters<typeof messageText>[0])
}

/**
 * Where a fork before the user message `messageId` cuts a branch: the id of the last entry it keeps
 * (`null`: nothing comes before the message), or `undefined` when the branch has no such user
 * message. The message's own id marker and what its run wrote just before it go with it, so the
 * fork's run count is the runs it really holds.
 */
export function forkPoint(branch: SessionEntry[], messageId: string): string | null | undefined {
  let markerAt = -1
  let marker: IdsMarker | undefined
  for (let i = 0; i < branch.length; i++) {
    const entry = branch[i]
    const m = markerOf(entry)
    if (m) {
      marker = m
      markerAt = i
      continue
    }
    if (entry.type !== 'message') continue
    const id = marker?.messageId ?? entry.id
    let cut = marker ? markerAt : i
    marker = undefined
    if (entry.message.role !== 'user' || id !== messageId) continue
    while (cut > 0 && opensRun(branch[cut - 1])) cut--
    return cut === 0 ? null : branch[cut - 1].id
  }
  return undefined
}

/** pi's entry id of the user message the host knows as `messageId` on this branch, if there is one. */
export function userEntryId(branch: SessionEntry[], messageId: string): string | undefined {
  let marker: IdsMarker | undefined
  for (const entry of branch) {
    const m = markerOf(entry)
    if (m) {
      marker = m
      continue
    }
    if (entry.type !== 'message') continue
    const id = marker?.messageId ?? entry.id
    marker = undefined
    if (entry.message.role === 'user' && id === messageId) return entry.id
  }
  return undefined
}

/** What a run writes before its prompt: the host's run entry, and pi's record of the system prompt it ran with. */
function opensRun(entry: SessionEntry): boolean {
  if (entry.type === 'custom') return entry.customType === RUN_ENTRY
  return entry.type === 'message' && (entry.message.role as string) === 'system'
}

/** What a session file says about its thread for a summary (see `PersistedFacts` in port.ts). */
export function persistedFacts(entries: FileEntry[], threadOfSessionFile: (path: string) => string | undefined): PersistedFacts {
  const facts: PersistedFacts = {}
  const header = entries[0] as { type?: string; parentSession?: unknown } | undefined
  if (header?.type === 'session' && typeof header.parentSession === 'string') {
    const parent = threadOfSessionFile(header.parentSession)
    if (parent) facts.forkedFrom = parent
  }
  // pi's rule (getSessionName): the latest session_info wins, and an empty name clears it.
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as { type?: string; name?: unknown }
    if (entry.type !== 'session_info') continue
    const name = typeof entry.name === 'string' ? entry.name.trim() : ''
    if (name) facts.name = name
    break
  }
  const said = foldTranscript(branchOf(entries)).filter((e) => e.kind === 'user' || (e.kind === 'assistant' && e.text))
  const first = said.find((e) => e.kind === 'user')
  const last = said.at(-1)
  if (first && 'text' in first) facts.firstPrompt = first.text
  if (last && 'text' in last) facts.lastMessage = last.text
  return facts
}
