/**
 * What a thread's summary shows a person: a readable title and the last message as a preview.
 *
 * A title somebody set (a rename, `/name`, an extension's setTitle) is kept as it is. A thread whose
 * title is still the default (its id) is named by pi's session name, else its first prompt, else
 * "New thread". The loaded feed is the freshest source; for a cold thread the registry keeps what its
 * persisted conversation says (from the start's survey, and refreshed as it goes cold), so the list
 * reads alike before and after a restart and no summary reads a file.
 */
import type { ThreadSummary, TranscriptEntry } from '../schemas/index.js'
import type { PersistedFacts } from '../runtime/port.js'
import { oneLine, PREVIEW_CHARS, promptTitle } from '../shared/thread-title.js'
import type { ThreadSlot } from './thread-slot.js'


export function displayOf(
  record: { threadId: string; title: string },
  transcript: TranscriptEntry[] | undefined,
  persisted: PersistedFacts | undefined,
): Pick<ThreadSummary, 'title' | 'preview' | 'parentId'> {
  const said = transcript ? ends(transcript) : { firstPrompt: persisted?.firstPrompt, lastMessage: persisted?.lastMessage }
  const named = record.title !== record.threadId ? record.title : persisted?.name
  const title = named || promptTitle(said.firstPrompt)
  const preview = said.lastMessage?.trim() ? oneLine(said.lastMessage, PREVIEW_CHARS) : undefined
  return { title, ...(preview ? { preview } : {}), ...(persisted?.forkedFrom ? { parentId: persisted.forkedFrom } : {}) }
}

/**
 * The first prompt and the last thing said, found from each end: a summary costs what lies before
 * the first prompt and after the last message (a few entries), not the whole transcript.
 */
function ends(transcript: TranscriptEntry[]): { firstPrompt?: string; lastMessage?: string } {
  const first = transcript.find((e) => e.kind === 'user')
  const last = transcript.findLast((e) => e.kind === 'user' || (e.kind === 'assistant' && !!e.text))
  return {
    ...(first?.kind === 'user' ? { firstPrompt: first.text } : {}),
    ...(last && 'text' in last ? { lastMessage: last.text } : {}),
  }
}

/**
 * What a transcript says for a summary, kept when a thread's feed is let go: the registry holds these
 * for a cold thread instead of reading its file for every summary.
 */
export function factsOf(transcript: TranscriptEntry[], known: PersistedFacts | undefined): PersistedFacts {
  return { ...known, ...ends(transcript) }
}

/** A thread's summary as the list and the thread route show it. */
export function summaryOf(slot: ThreadSlot, defaultCwd: string): ThreadSummary {
  const view = slot.feed?.view
  const status = view?.status ?? { live: false, busy: false, run: slot.record.run }
  const damage = slot.damage
  return {
    threadId: slot.threadId,
    ...displayOf(slot.record, view?.transcript, slot.record.facts),
    model: slot.record.model,
    ...(slot.record.thinkingLevel ? { thinkingLevel: slot.record.thinkingLevel } : {}),
    cwd: slot.record.cwd ?? defaultCwd,
    live: status.live,
    busy: status.busy,
    run: status.run,
    openDialogs: view?.openDialogs.length ?? 0,
    createdAt: slot.record.createdAt,
    updatedAt: slot.record.updatedAt,
    ...(damage !== undefined ? { unavailable: damage } : {}),
  }
}
