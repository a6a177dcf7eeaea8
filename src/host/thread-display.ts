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

export const UNTITLED = 'New thread'
export const TITLE_CHARS = 60
export const PREVIEW_CHARS = 120

/** One line of at most `max` characters, cut at a word where it can be, with an ellipsis when cut. */
export function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  if (line.length <= max) return line
  const cut = line.slice(0, max - 1)
  const space = cut.lastIndexOf(' ')
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

export function displayOf(
  record: { threadId: string; title: string },
  transcript: TranscriptEntry[] | undefined,
  persisted: PersistedFacts | undefined,
): Pick<ThreadSummary, 'title' | 'preview' | 'parentId'> {
  const said = (transcript ?? []).filter((e) => e.kind === 'user' || (e.kind === 'assistant' && e.text))
  const firstPrompt = transcript ? said.find((e) => e.kind === 'user')?.text : persisted?.firstPrompt
  const last = transcript ? said.at(-1) : undefined
  const lastText = last && 'text' in last ? last.text : transcript ? undefined : persisted?.lastMessage
  const named = record.title !== record.threadId ? record.title : persisted?.name
  const title = named || (firstPrompt?.trim() ? oneLine(firstPrompt, TITLE_CHARS) : UNTITLED)
  const preview = lastText?.trim() ? oneLine(lastText, PREVIEW_CHARS) : undefined
  return { title, ...(preview ? { preview } : {}), ...(persisted?.forkedFrom ? { parentId: persisted.forkedFrom } : {}) }
}

/**
 * What a transcript says for a summary, kept when a thread's feed is let go: the registry holds these
 * for a cold thread instead of reading its file for every summary.
 */
export function factsOf(transcript: TranscriptEntry[], known: PersistedFacts | undefined): PersistedFacts {
  const said = transcript.filter((e) => e.kind === 'user' || (e.kind === 'assistant' && e.text))
  const first = said.find((e) => e.kind === 'user')
  const last = said.at(-1)
  return {
    ...known,
    ...(first && 'text' in first ? { firstPrompt: first.text } : {}),
    ...(last && 'text' in last ? { lastMessage: last.text } : {}),
  }
}
