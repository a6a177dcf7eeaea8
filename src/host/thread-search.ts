/**
 * Search over what was said in every thread: the message index (store/sqlite/message-index.ts) kept
 * as messages are appended — each feed's prompts and replies as they arrive, a feed's whole
 * transcript when it is loaded or moved to another branch (so a fork, an edit, a branch or a restart
 * is reflected) — and, behind the start, every thread the index has not seen read once from its
 * session file.
 */
import type { Observation, TranscriptEntry } from '../schemas/index.js'
import type { Feed } from './feed.js'
import type { Log } from './store/journal.js'
import { MessageIndex, type IndexedMessage, type MessageHit } from './store/sqlite/message-index.js'

export interface ThreadSearchOptions {
  /** The index's database file, or `:memory:`. */
  file: string
  /** The threads that exist now, with their titles as listed: a hit on any other thread is dropped. */
  threads: () => ReadonlyArray<{ threadId: string; title: string }>
  readTranscript: (threadId: string) => Promise<TranscriptEntry[]>
  watchFeeds: (watcher: (threadId: string, feed: Feed) => void) => () => void
  /** Every observation of every feed (one registration, not a closure on each feed). */
  observeFeeds: (observer: (threadId: string, feed: Feed, o: Observation) => void) => () => void
  log?: Log
}

export interface SearchHit extends MessageHit {
  title: string
}

export function indexedMessages(transcript: readonly TranscriptEntry[]): IndexedMessage[] {
  return transcript.flatMap((e): IndexedMessage[] =>
    e.kind === 'user' || (e.kind === 'assistant' && !e.streaming) ? [{ messageId: e.messageId, kind: e.kind, text: e.text }] : [],
  )
}

export class ThreadSearch {
  readonly #index: MessageIndex
  readonly #options: ThreadSearchOptions
  readonly #unwatch: () => void
  readonly #unobserve: () => void
  /** Resolves once every thread the index had not seen at the start is indexed. */
  readonly built: Promise<void>
  #closed = false

  constructor(options: ThreadSearchOptions) {
    this.#options = options
    this.#index = MessageIndex.open(options.file)
    this.#unwatch = options.watchFeeds((threadId, feed) => this.#follow(threadId, feed))
    this.#unobserve = options.observeFeeds((threadId, _feed, o) => this.#observe(threadId, o))
    this.built = this.#build()
  }

  #guard(what: string, work: () => void): void {
    if (this.#closed) return
    try {
      work()
    } catch (error) {
      // The index is derived: a failed write costs a search result, never a request.
      this.#options.log?.('warn', `message index: ${what} failed: ${String(error)}`)
    }
  }

  #follow(threadId: string, feed: Feed): void {
    this.#guard('indexing a transcript', () => this.#index.replaceThread(threadId, indexedMessages(feed.view.transcript)))
  }

  #observe(threadId: string, o: Observation): void {
    if (o.type === 'user-message') this.#guard('indexing a prompt', () => this.#index.add(threadId, { messageId: o.messageId, kind: 'user', text: o.text }))
    else if (o.type === 'assistant-end') this.#guard('indexing a reply', () => this.#index.add(threadId, { messageId: o.messageId, kind: 'assistant', text: o.text }))
    // Another branch of the session (ctx.navigateTree): what the thread says now is that branch alone.
    else if (o.type === 'branch') this.#guard('indexing a branch', () => this.#index.replaceThread(threadId, indexedMessages(o.transcript)))
  }

  /** Indexes, one at a time, every thread the index does not hold yet, and forgets those that are gone. */
  async #build(): Promise<void> {
    const indexed = this.#index.indexedThreads()
    const present = new Set(this.#options.threads().map((t) => t.threadId))
    for (const threadId of indexed) if (!present.has(threadId)) this.#guard('forgetting a thread', () => this.#index.forget(threadId))
    for (const threadId of present) {
      if (this.#closed) return
      if (indexed.has(threadId)) continue
      const transcript = await this.#options.readTranscript(threadId).catch(() => undefined)
      // A damaged session file is indexed once it can be read (its feed loads).
      if (transcript) this.#guard('indexing a transcript', () => this.#index.replaceThread(threadId, indexedMessages(transcript)))
    }
  }

  /** The best-matching message of each thread that exists, best first. */
  find(query: string, limit = 50): SearchHit[] {
    if (this.#closed) return []
    const titles = new Map(this.#options.threads().map((t) => [t.threadId, t.title]))
    const hits: SearchHit[] = []
    for (const hit of this.#index.search(query, limit * 2)) {
      const title = titles.get(hit.threadId)
      if (title === undefined) continue
      hits.push({ ...hit, title })
      if (hits.length >= limit) break
    }
    return hits
  }

  forget(threadId: string): void {
    this.#guard('forgetting a thread', () => this.#index.forget(threadId))
  }

  close(): void {
    this.#closed = true
    this.#unwatch()
    this.#unobserve()
    this.#index.close()
  }
}
