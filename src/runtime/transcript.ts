/**
 * pi's persisted session → the host's TranscriptEntry[].
 *
 * pi's messages carry no ids the host knows, so the adapter writes a small custom entry
 * (`threadhost.ids`, ignored by pi's LLM context) just before each user and assistant message it
 * sees: the host's messageId and, for user messages, the run number. Folding pairs each marker
 * with the next message entry; messages without a marker fall back to pi's entry id.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { parseSessionEntries, type FileEntry, type SessionEntry } from '@earendil-works/pi-coding-agent'
import type { TranscriptEntry } from '../schemas/index.js'
import { compactToolResult, messageText } from './map-events.js'

export const IDS_ENTRY = 'threadhost.ids'
/** Written when a run starts, so a run whose prompt never reached the model still counts. */
export const RUN_ENTRY = 'threadhost.run'

export interface IdsMarker {
  messageId: string
  run?: number
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

/** Reads a thread's session file without building a session; a missing file is an empty transcript. */
export async function readSessionFile(file: string): Promise<SessionEntry[]> {
  if (!existsSync(file)) return []
  return branchOf(parseSessionEntries(await readFile(file, 'utf8')))
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

export function foldTranscript(entries: SessionEntry[]): TranscriptEntry[] {
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
    if (entry.type !== 'message') continue
    const message = entry.message
    const messageId = marker?.messageId ?? entry.id
    const markerRun = marker?.run
    marker = undefined
    switch (message.role) {
      case 'user':
        run = markerRun ?? Math.max(run, 1)
        out.push({ kind: 'user', messageId, text: messageText(message), run })
        break
      case 'assistant': {
        const text = messageText(message)
        const calls = message.content.filter((c) => c.type === 'toolCall')
        // An empty reply (e.g. the aborted turn pi adds after Stop) has nothing to draw.
        if (text || (calls.length === 0 && message.stopReason !== 'aborted' && message.stopReason !== 'error')) {
          out.push({ kind: 'assistant', messageId, text, streaming: false, stopReason: message.stopReason })
        }
        for (const call of calls) {
          const tool: ToolEntry = { kind: 'tool', toolCallId: call.id, name: call.name, args: call.arguments, state: 'running' }
          tools.set(call.id, tool)
          out.push(tool)
        }
        if (message.stopReason === 'aborted') out.push({ kind: 'stopped', run: Math.max(run, 1) })
        if (message.stopReason === 'error') out.push({ kind: 'error', message: message.errorMessage ?? 'The model failed.' })
        break
      }
      case 'toolResult': {
        const tool = tools.get(message.toolCallId)
        if (!tool) break
        tool.state = message.isError ? 'error' : 'done'
        tool.result = compactToolResult(message)
        break
      }
      default:
        break
    }
  }
  return out
}
