/**
 * The thread list: a search over titles and, asked of the server's message index, over what was said;
 * the open questions across threads; the threads by date (Today, Yesterday, …), each with its title,
 * active/busy indicator and question badge; rename and delete in place; and "New thread". The
 * threads are one Tab stop: the arrow keys move between them (roving focus), F2 renames, Delete deletes.
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { SearchHit, ThreadSummary } from '../schemas/index.js'
import { api as defaultApi, describeError, type Api } from './api.js'
import { ClockController } from './controllers/clock-controller.js'
import { threadListStyles } from './thread-list.styles.js'
import './push-toggle.js'

/** Threads whose title (or id) contains every word of the query, case-insensitive. */
export function filterThreads(threads: readonly ThreadSummary[], query: string): ThreadSummary[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean)
  if (!words.length) return [...threads]
  return threads.filter((t) => {
    const hay = `${t.title} ${t.threadId}`.toLowerCase()
    return words.every((w) => hay.includes(w))
  })
}

export type DateGroup = 'Today' | 'Yesterday' | 'Previous 7 days' | 'Previous 30 days' | 'Older'

/** Which of the list's date groups a thread last updated at `ms` is in, by the calendar days of this browser. */
export function dateGroup(ms: number, now = Date.now()): DateGroup {
  const midnight = new Date(now)
  midnight.setHours(0, 0, 0, 0)
  const startOfDay = (daysBack: number) => {
    const d = new Date(midnight)
    d.setDate(d.getDate() - daysBack)
    return d.getTime()
  }
  if (ms >= startOfDay(0)) return 'Today'
  if (ms >= startOfDay(1)) return 'Yesterday'
  if (ms >= startOfDay(7)) return 'Previous 7 days'
  if (ms >= startOfDay(30)) return 'Previous 30 days'
  return 'Older'
}

/** The threads in their date groups, in the order given (most recent first), empty groups left out. */
export function groupByDate(threads: readonly ThreadSummary[], now = Date.now()): Array<{ group: DateGroup; threads: ThreadSummary[] }> {
  const groups: Array<{ group: DateGroup; threads: ThreadSummary[] }> = []
  for (const t of threads) {
    const group = dateGroup(t.updatedAt, now)
    const last = groups.at(-1)
    if (last?.group === group) last.threads.push(t)
    else groups.push({ group, threads: [t] })
  }
  return groups
}

/** How long the search box waits for typing to pause before it asks the server about message contents. */
export const SEARCH_DEBOUNCE_MS = 200

export function relativeTime(ms: number, now = Date.now()): string {
  const s = Math.round((now - ms) / 1000)
  if (s < 45) return 'just now'
  if (s < 3600) return `${Math.round(s / 60)} min ago`
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`
  return new Date(ms).toLocaleDateString()
}

@customElement('thread-list')
export class ThreadList extends LitElement {
  @property({ attribute: false }) threads: ThreadSummary[] = []
  @property({ attribute: 'selected-id' }) selectedId = ''
  @property({ type: Boolean }) loading = false
  @property() error = ''
  @property({ attribute: false }) api: Api = defaultApi
  /** `#/questions` is on screen. */
  @property({ type: Boolean, attribute: 'questions-open' }) questionsOpen = false
  /**
   * The list is the page's main content (a phone showing the list alone): it is the `main`
   * landmark, its top row no banner inside it, and there is no conversation to skip to.
   */
  @property({ type: Boolean, attribute: 'is-main' }) isMain = false

  @state() private query = ''
  /** The thread being renamed, or asked about deleting, in place. */
  @state() private renaming = ''
  @state() private deleting = ''
  @state() private actionError = ''
  /** The server's answer about message contents for `hitsFor` (one hit per thread). */
  @state() private hits = new Map<string, SearchHit>()
  @state() private hitsFor = ''
  /** The thread whose link is the list's one Tab stop (roving focus): the last one focused, else the selected, else the first. */
  @state() private current = ''
  #focusAfter: string | undefined
  #searchTimer: ReturnType<typeof setTimeout> | undefined

  /** "3 min ago" moves on the page's clock, not only when the list is fetched again. */
  #clock = new ClockController(this, { periodMs: 30_000, when: () => this.threads.length > 0 })

  static override styles = threadListStyles

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('isMain')) {
      if (this.isMain) this.setAttribute('role', 'main')
      else this.removeAttribute('role')
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (this.#focusAfter) {
      const sel = this.#focusAfter
      this.#focusAfter = undefined
      const el = this.renderRoot.querySelector(sel) as HTMLElement | null
      el?.focus()
      // The current title, selected: typing replaces it, an arrow key edits it.
      if (el instanceof HTMLInputElement && el.type === 'text') el.select()
    }
    if (changed.has('threads') && (this.renaming || this.deleting)) {
      // The thread went away meanwhile (deleted in another tab): nothing to rename or delete.
      const ids = new Set(this.threads.map((t) => t.threadId))
      if (this.renaming && !ids.has(this.renaming)) this.renaming = ''
      if (this.deleting && !ids.has(this.deleting)) this.deleting = ''
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    clearTimeout(this.#searchTimer)
  }

  #onQuery(query: string) {
    this.query = query
    clearTimeout(this.#searchTimer)
    if (!query.trim()) {
      this.hits = new Map()
      this.hitsFor = ''
      return
    }
    // Not per keystroke: one question once typing pauses; an answer for an older query is dropped.
    this.#searchTimer = setTimeout(async () => {
      try {
        const hits = await this.api.searchThreads(query.trim())
        if (this.query !== query) return
        this.hits = new Map(hits.map((h) => [h.threadId, h]))
        this.hitsFor = query
      } catch {
        // The titles still filter; the contents are searched again with the next keystroke.
      }
    }, SEARCH_DEBOUNCE_MS)
  }

  /** Titles that match at once, and the threads whose messages the server found. */
  #shown(): ThreadSummary[] {
    if (!this.query.trim()) return this.threads
    const byTitle = new Set(filterThreads(this.threads, this.query).map((t) => t.threadId))
    const hits = this.hitsFor === this.query ? this.hits : new Map<string, SearchHit>()
    return this.threads.filter((t) => byTitle.has(t.threadId) || hits.has(t.threadId))
  }

  /** The link that takes the Tab stop among `shown`. */
  #tabStop(shown: readonly ThreadSummary[]): string {
    const ids = shown.map((t) => t.threadId)
    if (ids.includes(this.current)) return this.current
    if (ids.includes(this.selectedId)) return this.selectedId
    return ids[0] ?? ''
  }

  /** Arrow keys move along the threads (and into a thread's Edit and Delete); F2 renames, Delete deletes. */
  #onListKey = (e: KeyboardEvent) => {
    const target = e.composedPath()[0] as HTMLElement
    const li = target.closest?.('li.thread')
    if (!li) return
    const id = (li.querySelector('a[data-thread]') as HTMLElement | null)?.dataset.thread ?? ''
    const stops = [...li.querySelectorAll<HTMLElement>('a[data-thread], .actions button')]
    const links = [...this.renderRoot.querySelectorAll<HTMLElement>('li.thread a[data-thread]')]
    const at = links.findIndex((a) => a.dataset.thread === id)
    const go = (el: HTMLElement | undefined) => {
      if (!el) return
      e.preventDefault()
      this.current = el.closest('li.thread')?.querySelector<HTMLElement>('a[data-thread]')?.dataset.thread ?? this.current
      el.focus()
    }
    switch (e.key) {
      case 'ArrowDown':
        return go(links[Math.min(at + 1, links.length - 1)])
      case 'ArrowUp':
        return go(links[Math.max(at - 1, 0)])
      case 'Home':
        return go(links[0])
      case 'End':
        return go(links.at(-1))
      case 'ArrowRight':
        return go(stops[Math.min(stops.indexOf(target) + 1, stops.length - 1)])
      case 'ArrowLeft':
        return go(stops[Math.max(stops.indexOf(target) - 1, 0)])
      case 'F2':
        e.preventDefault()
        return this.#startRename(id)
      case 'Delete':
        e.preventDefault()
        return this.#startDelete(id)
    }
  }

  /** A thread's link; a search hit's opens it at the message that matched. */
  #href(threadId: string): string {
    const base = `#/threads/${encodeURIComponent(threadId)}`
    const hit = this.hitsFor === this.query ? this.hits.get(threadId) : undefined
    return hit ? `${base}?${new URLSearchParams({ message: hit.messageId })}` : base
  }

  #snippet(hit: SearchHit) {
    const parts: unknown[] = []
    let at = 0
    for (const [start, end] of hit.matches) {
      parts.push(hit.snippet.slice(at, start), html`<mark>${hit.snippet.slice(start, end)}</mark>`)
      at = end
    }
    parts.push(hit.snippet.slice(at))
    return html`<span class="preview hit" data-hit>${hit.kind === 'user' ? 'You: ' : ''}${parts}</span>`
  }

  override render() {
    const shown = this.#shown()
    const tabStop = this.#tabStop(shown)
    const searching = this.query.trim() !== '' && this.hitsFor !== this.query
    const questions = this.threads.reduce((n, t) => n + t.openDialogs, 0)
    const top = html`${this.isMain
        ? nothing
        : html`<a class="skip" href="#/" @click=${this.#skip}>Skip to the conversation</a>`}
      <h1 class="brand"><span class="logo" aria-hidden="true"></span>threadhost</h1>
      <button class="primary" @click=${this.#new}>New thread</button>`
    return html`
      ${this.isMain ? html`<div class="top">${top}</div>` : html`<header class="top">${top}</header>`}
      <div class="search" role="search">
        <input
          type="search"
          aria-label="Search threads"
          placeholder="Search threads"
          .value=${this.query}
          @input=${(e: Event) => this.#onQuery((e.target as HTMLInputElement).value)}
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Escape' && this.query) {
              e.preventDefault()
              this.#onQuery('')
            }
          }}
        />
      </div>
      <nav aria-label="Threads">
        <a class="inbox" href="#/questions" aria-current=${this.questionsOpen ? 'page' : 'false'}>
          <span>Open questions</span>
          ${questions > 0
            ? html`<span class="badge" role="img" aria-label=${`${questions} waiting`}>${questions}</span>`
            : html`<span class="none">none</span>`}
        </a>
        ${this.error ? html`<div class="error" role="alert">${this.error}</div>` : nothing}
        ${this.actionError ? html`<div class="error" role="alert">${this.actionError}</div>` : nothing}
        ${this.threads.length === 0 && !this.loading && !this.error
          ? html`<div class="empty">No threads yet.</div>`
          : nothing}
        ${this.threads.length > 0 && shown.length === 0
          ? html`<div class="empty" role="status">${searching ? `Searching for “${this.query}”…` : `No thread matches “${this.query}”.`}</div>`
          : nothing}
        <div class="groups" @keydown=${this.#onListKey} @focusin=${this.#onFocusIn}>
        ${groupByDate(shown).map(
          ({ group, threads }) => html`<section class="group" aria-label=${group}>
        <h2>${group}</h2>
        <ul>
          ${repeat(
            threads,
            (t) => t.threadId,
            (t) => {
              if (t.threadId === this.renaming) return this.#renameItem(t)
              if (t.threadId === this.deleting) return this.#deleteItem(t)
              const state = t.unavailable ? 'damaged' : t.busy ? 'busy' : t.live ? 'live' : 'cold'
              // "active": its runtime is loaded on the server (the header's "Connected" is about this tab).
              const stateLabel = t.unavailable ? 'damaged' : t.busy ? 'working' : t.live ? 'active' : 'idle'
              const title = t.title || t.threadId
              return html`<li class="thread">
                <a
                  href=${this.#href(t.threadId)}
                  aria-current=${t.threadId === this.selectedId ? 'page' : 'false'}
                  data-thread=${t.threadId}
                  tabindex=${t.threadId === tabStop ? '0' : '-1'}
                  aria-keyshortcuts="ArrowUp ArrowDown F2 Delete"
                >
                  <span class="dot ${state}" title=${stateLabel}></span>
                  <span class="title">${title}</span>
                  ${t.openDialogs > 0
                    ? html`<span
                        class="badge"
                        role="img"
                        aria-label=${`${t.openDialogs} open question${t.openDialogs === 1 ? '' : 's'}`}
                        >${t.openDialogs}</span
                      >`
                    : html`<span></span>`}
                  ${this.hitsFor === this.query && this.hits.has(t.threadId)
                    ? this.#snippet(this.hits.get(t.threadId)!)
                    : t.preview
                      ? html`<span class="preview" data-preview>${t.preview}</span>`
                      : nothing}
                  <span class="sub" title=${`${t.model} in ${t.cwd}`}
                    >${stateLabel} · ${relativeTime(t.updatedAt)} · ${t.model} · ${folderName(t.cwd)}</span
                  >
                </a>
                <span class="actions">
                  <button type="button" class="ghost" tabindex="-1" aria-label=${`Edit title of “${title}”`} title="Edit the title (F2)" data-rename=${t.threadId}
                    @click=${() => this.#startRename(t.threadId)}>Edit</button>
                  <button type="button" class="ghost danger" tabindex="-1" aria-label=${`Delete “${title}”`} title="Delete the thread (Delete)" data-delete=${t.threadId}
                    @click=${() => this.#startDelete(t.threadId)}>Delete</button>
                </span>
              </li>`
            },
          )}
        </ul>
        </section>`,
        )}
        </div>
      </nav>
      <push-toggle></push-toggle>
    `
  }

  /** Whatever thread the focus reaches (a click, a search result) is the Tab stop from then on. */
  #onFocusIn = (e: FocusEvent) => {
    const li = (e.composedPath()[0] as HTMLElement).closest?.('li.thread')
    const id = li?.querySelector<HTMLElement>('a[data-thread]')?.dataset.thread
    if (id) this.current = id
  }

  #startRename(id: string) {
    this.deleting = ''
    this.actionError = ''
    this.renaming = id
    this.#focusAfter = 'li.editing input'
  }

  #startDelete(id: string) {
    this.renaming = ''
    this.actionError = ''
    this.deleting = id
    this.#focusAfter = 'li.confirm button.keep'
  }

  /** Back to the list item's own button, so the keyboard is where it was. */
  #endAction(id: string, which: 'rename' | 'delete') {
    this.renaming = ''
    this.deleting = ''
    this.#focusAfter = `button[data-${which}="${CSS.escape(id)}"]`
  }

  #renameItem(t: ThreadSummary) {
    const title = t.title || t.threadId
    return html`<li class="editing">
      <form @submit=${(e: Event) => this.#rename(e, t.threadId)}>
        <input
          type="text"
          name="title"
          aria-label=${`New title for “${title}”`}
          .value=${t.title === t.threadId ? '' : t.title}
          placeholder=${title}
          maxlength="200"
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Escape') {
              e.preventDefault()
              this.#endAction(t.threadId, 'rename')
            }
          }}
        />
        <button class="primary" type="submit">Save</button>
        <button type="button" @click=${() => this.#endAction(t.threadId, 'rename')}>Cancel</button>
      </form>
    </li>`
  }

  #deleteItem(t: ThreadSummary) {
    const title = t.title || t.threadId
    return html`<li class="confirm" role="group" aria-label=${`Delete “${title}”?`}
      @keydown=${(e: KeyboardEvent) => {
        if (e.key === 'Escape') {
          e.preventDefault()
          this.#endAction(t.threadId, 'delete')
        }
      }}>
      <span>Delete “${title}” and its transcript?</span>
      <span class="row">
        <button type="button" class="danger solid" @click=${() => this.#delete(t.threadId)}>Delete</button>
        <button type="button" class="keep" @click=${() => this.#endAction(t.threadId, 'delete')}>Keep</button>
      </span>
    </li>`
  }

  async #rename(e: Event, id: string) {
    e.preventDefault()
    const input = (e.target as HTMLFormElement).elements.namedItem('title') as HTMLInputElement
    const title = input.value.trim()
    if (!title) return
    try {
      const summary = await this.api.renameThread(id, title)
      this.actionError = ''
      this.#endAction(id, 'rename')
      this.dispatchEvent(new CustomEvent('thread-changed', { bubbles: true, composed: true, detail: { threadId: id, summary } }))
    } catch (err) {
      this.actionError = `Could not rename: ${describeError(err)}`
    }
  }

  async #delete(id: string) {
    try {
      await this.api.deleteThread(id)
      this.actionError = ''
      this.deleting = ''
      this.#focusAfter = 'input[type="search"]'
      this.dispatchEvent(new CustomEvent('thread-deleted', { bubbles: true, composed: true, detail: { threadId: id } }))
    } catch (err) {
      this.actionError = `Could not delete: ${describeError(err)}`
    }
  }

  /** The skip link: the page moves the focus past the list, to its main content. */
  #skip = (e: Event) => {
    e.preventDefault()
    this.dispatchEvent(new CustomEvent('skip-to-main', { bubbles: true, composed: true }))
  }

  #new = () => {
    this.dispatchEvent(new CustomEvent('new-thread', { bubbles: true, composed: true }))
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'thread-list': ThreadList
  }
}

/** The last segment of a workspace path: enough to tell projects apart in a narrow list. */
export function folderName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? path
}
