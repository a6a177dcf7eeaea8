/**
 * A thread's conversation as pi's session tree: its versions and in-place moves between branches.
 *
 * pi keeps every prompt it ever took in one tree; the conversation is the path from the root to the
 * leaf. A prompt sent again after an edit (or a regenerate) hangs where the first one hung, so the
 * user messages that hang at one point are *versions* of one prompt (‹ 2 / 3 ›). Where a prompt
 * hangs — its anchor — is the nearest entry above it that is not the run's own prelude (the host's
 * run entry and id markers, pi's record of the system prompt, a branch marker).
 *
 * pi resumes a session file at its *last* entry, not at the leaf it had in memory; so after a move
 * the leaf is written down as a branch marker (`threadhost.branch`, ignored by pi's LLM context)
 * whenever the file's last entry is not the leaf — a release or a restart resumes on the branch the
 * people watching were shown.
 */
import type { SessionEntry } from '@earendil-works/pi-coding-agent'
import { IDS_ENTRY, RUN_ENTRY } from './transcript.js'

export const BRANCH_ENTRY = 'threadhost.branch'

/** What a run writes before its prompt, and the host's markers: not a place a prompt hangs. */
function isPrelude(entry: SessionEntry): boolean {
  if (entry.type === 'custom') return entry.customType === RUN_ENTRY || entry.customType === IDS_ENTRY || entry.customType === BRANCH_ENTRY
  return entry.type === 'message' && (entry.message.role as string) === 'system'
}

/** A session's entries by id: a map of them, or pi's session manager's own lookup. */
export type EntryLookup = Pick<ReadonlyMap<string, SessionEntry>, 'get'>

/** Where an entry hangs: the id of the nearest ancestor that is not prelude (`null`: the root). */
export function anchorOf(entry: SessionEntry, byId: EntryLookup): string | null {
  let id = entry.parentId
  while (id) {
    const parent = byId.get(id)
    if (!parent) return null
    if (!isPrelude(parent)) return parent.id
    id = parent.parentId
  }
  return null
}

/** The host's messageId of a user message entry: its id marker's (written just before it, so its parent), else pi's id. */
export function messageIdOf(entry: SessionEntry, byId: EntryLookup): string {
  const parent = entry.parentId ? byId.get(entry.parentId) : undefined
  if (parent?.type === 'custom' && parent.customType === IDS_ENTRY) {
    const id = (parent.data as { messageId?: unknown } | undefined)?.messageId
    if (typeof id === 'string') return id
  }
  return entry.id
}

const isUser = (entry: SessionEntry) => entry.type === 'message' && entry.message.role === 'user'

/**
 * The session's tree, indexed: every user message's versions and where each branch ends. A session's
 * entries are only ever appended to, so `update` indexes just the entries new since its last call —
 * the versions of each prompt are read as it is sent, and a long thread must not pay for its whole
 * history every time.
 */
export class SessionTree {
  /** The entries by id: the session manager's own lookup when given one (a live session keeps no second index), else built here. */
  readonly byId: EntryLookup
  readonly #own?: Map<string, SessionEntry>
  /** Anchor (`''` for the root) → the user messages that hang there, oldest first, as [pi id, messageId]. */
  readonly #versions = new Map<string, Array<[string, string]>>()
  #entries: readonly SessionEntry[] = []

  constructor(entries: readonly SessionEntry[] = [], lookup?: EntryLookup) {
    if (lookup) this.byId = lookup
    else this.byId = this.#own = new Map()
    this.update(entries)
  }

  get entries(): readonly SessionEntry[] {
    return this.#entries
  }

  /** The tree as `entries` stand now: those after the ones it holds are added; any other list (a session replaced) is indexed anew. */
  update(entries: readonly SessionEntry[]): this {
    const known = this.#entries.length
    const grown = entries.length >= known && (known === 0 || entries[known - 1].id === this.#entries[known - 1].id)
    if (!grown) {
      this.#own?.clear()
      this.#versions.clear()
    }
    const from = grown ? known : 0
    if (this.#own) for (let i = from; i < entries.length; i++) this.#own.set(entries[i].id, entries[i])
    for (let i = from; i < entries.length; i++) {
      const entry = entries[i]
      if (!isUser(entry)) continue
      const key = anchorOf(entry, this.byId) ?? ''
      const list = this.#versions.get(key) ?? []
      list.push([entry.id, messageIdOf(entry, this.byId)])
      this.#versions.set(key, list)
    }
    this.#entries = entries
    return this
  }

  /** The messageIds of every version of the user message entry `entryId` (itself included), when there is more than one. */
  versionsOf(entryId: string): string[] | undefined {
    const entry = this.byId.get(entryId)
    if (!entry) return undefined
    const list = this.#versions.get(anchorOf(entry, this.byId) ?? '')
    return list && list.length > 1 ? list.map(([, id]) => id) : undefined
  }

  /** The messageIds a new prompt hanging at `anchor` would be a version of (none yet: empty). */
  versionsAt(anchor: string | null): string[] {
    return (this.#versions.get(anchor ?? '') ?? []).map(([, id]) => id)
  }

  /** pi's entry of the user message the host knows as `messageId`. */
  userEntry(messageId: string): SessionEntry | undefined {
    return this.entries.find((e) => isUser(e) && messageIdOf(e, this.byId) === messageId)
  }

  /** Where the conversation ends if it goes on from `entryId`: the newest entry of the subtree under it. */
  latestUnder(entryId: string): string {
    const inside = new Set([entryId])
    let latest = entryId
    for (const entry of this.entries) {
      if (entry.parentId && inside.has(entry.parentId)) {
        inside.add(entry.id)
        latest = entry.id
      }
    }
    return latest
  }
}

/** The anchor a prompt written now would hang at: from the current leaf, past the run's prelude. */
export function anchorAtLeaf(leafId: string | null, byId: EntryLookup): string | null {
  if (leafId === null) return null
  const leaf = byId.get(leafId)
  if (!leaf) return null
  return isPrelude(leaf) ? anchorOf(leaf, byId) : leaf.id
}
