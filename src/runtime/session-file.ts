/**
 * Checks a thread's pi session file before anything reads or opens it, and repairs the one kind of
 * damage that loses nothing: a torn last line.
 *
 * pi appends one JSON line per entry, so a crash mid-write leaves at most the last line incomplete.
 * That line is cut off and every complete entry before it kept (pi would skip it but then append the
 * next entry after it, and a later read stops the history at the gap). Any other damage — a header
 * that is not a whole pi header, an unparsable line before the last, an entry whose parent is not an
 * earlier entry — is not a crash's doing: the file is refused (`SessionDamaged`) and never written,
 * since pi, once it opened the file, would rewrite or extend it and the history it holds would be lost.
 */
import { appendFileSync, existsSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs'
import type { FileEntry } from '@earendil-works/pi-coding-agent'
import { SessionDamaged } from './port.js'

export type SessionCheck =
  /** No session yet: no file, an empty one, or only a header torn during the very first write (`torn`). */
  | { kind: 'none'; torn?: true }
  | {
      kind: 'ok'
      entries: FileEntry[]
      /** A torn last line: the file's complete part is its first `keep` bytes. */
      cut?: { keep: number; bytes: number }
      /** The last entry is whole but its newline was never written: pi's next append would join the two lines. */
      newline?: true
    }
  | { kind: 'damaged'; reason: string }

const NL = 0x0a

/** What a session file's bytes are (pure: reads nothing, writes nothing). */
export function checkSession(bytes: Buffer): SessionCheck {
  const lines: { start: number; end: number; text: string }[] = []
  for (let start = 0; start < bytes.length; ) {
    const nl = bytes.indexOf(NL, start)
    const end = nl === -1 ? bytes.length : nl
    const text = bytes.toString('utf8', start, end)
    if (text.trim()) lines.push({ start, end, text })
    start = end + 1
  }
  if (lines.length === 0) return { kind: 'none' }
  const parsed = lines.map((line) => parse(line.text))
  let cut: { keep: number; bytes: number } | undefined
  const last = lines.length - 1
  if (parsed[last] === undefined) {
    cut = { keep: lines[last].start, bytes: bytes.length - lines[last].start }
    lines.pop()
    parsed.pop()
    if (lines.length === 0) return { kind: 'none', torn: true }
  }
  const bad = parsed.findIndex((entry) => entry === undefined)
  if (bad !== -1) return { kind: 'damaged', reason: `line ${lineNumber(bytes, lines[bad].start)} is not a JSON entry` }
  const entries = parsed as Record<string, unknown>[]
  const header = headerProblem(entries[0])
  if (header) return { kind: 'damaged', reason: `its header line ${header}` }
  const ids = new Set<string>()
  for (let i = 1; i < entries.length; i++) {
    const problem = entryProblem(entries[i], ids)
    if (problem) return { kind: 'damaged', reason: `line ${lineNumber(bytes, lines[i].start)} ${problem}` }
    ids.add(entries[i].id as string)
  }
  const newline = !cut && lines[lines.length - 1].end === bytes.length
  return { kind: 'ok', entries: entries as unknown as FileEntry[], ...(cut ? { cut } : {}), ...(newline ? { newline: true } : {}) }
}

/** Reads and checks a session file; a missing file is no session. */
export function readSessionCheck(file: string): SessionCheck {
  if (!existsSync(file)) return { kind: 'none' }
  return checkSession(readFileSync(file))
}

/**
 * Makes a thread's session file safe for pi to open, or throws `SessionDamaged` having written
 * nothing. A torn last line is cut (its bytes kept in `<file>.torn-<time>`); a file that is only a
 * torn header is moved there whole, so the thread starts its first session. Returns the side file
 * when something was set aside.
 */
export function prepareSessionFile(file: string, threadId: string): string | undefined {
  const check = readSessionCheck(file)
  if (check.kind === 'damaged') throw new SessionDamaged(threadId, check.reason)
  const aside = `${file}.torn-${Date.now()}`
  if (check.kind === 'none') {
    if (!check.torn) return undefined
    renameSync(file, aside)
    return aside
  }
  if (check.cut) {
    writeFileSync(aside, readFileSync(file).subarray(check.cut.keep))
    truncateSync(file, check.cut.keep)
    return aside
  }
  if (check.newline) appendFileSync(file, '\n')
  return undefined
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

function headerProblem(h: Record<string, unknown>): string | undefined {
  if (h.type !== 'session') return 'is not a session header'
  if (typeof h.id !== 'string' || !h.id) return 'has no session id'
  if (typeof h.version !== 'number') return 'has no version'
  if (typeof h.timestamp !== 'string' || Number.isNaN(Date.parse(h.timestamp))) return 'has no timestamp'
  if (typeof h.cwd !== 'string') return 'has no cwd'
  return undefined
}

function entryProblem(e: Record<string, unknown>, earlier: Set<string>): string | undefined {
  if (typeof e.type !== 'string' || e.type === 'session') return 'is not a session entry'
  if (typeof e.id !== 'string' || !e.id) return 'has no entry id'
  if (earlier.has(e.id)) return `repeats entry id ${e.id}`
  if (e.parentId !== null && (typeof e.parentId !== 'string' || !earlier.has(e.parentId))) return 'has a parent that is not an earlier entry'
  return undefined
}

function lineNumber(bytes: Buffer, offset: number): number {
  let n = 1
  for (let i = bytes.indexOf(NL); i !== -1 && i < offset; i = bytes.indexOf(NL, i + 1)) n++
  return n
}
