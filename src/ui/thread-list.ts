/**
 * The thread list: a search over titles, the open questions across threads, each thread's title,
 * active/busy indicator and question badge, rename and delete in place (keyboard too), and "New thread".
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { ThreadSummary } from '../schemas/index.js'
import { api as defaultApi, describeError, type Api } from './api.js'
import { ClockController } from './controllers/clock-controller.js'
import { threadListStyles } from './thread-list.styles.js'

/** Threads whose title (or id) contains every word of the query, case-insensitive. */
export function filterThreads(threads: readonly ThreadSummary[], query: string): ThreadSummary[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean)
  if (!words.length) return [...threads]
  return threads.filter((t) => {
    const hay = `${t.title} ${t.threadId}`.toLowerCase()
    return words.every((w) => hay.includes(w))
  })
}

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

  @state() private query = ''
  /** The thread being renamed, or asked about deleting, in place. */
  @state() private renaming = ''
  @state() private deleting = ''
  @state() private actionError = ''
  #focusAfter: string | undefined

  /** "3 min ago" moves on the page's clock, not only when the list is fetched again. */
  #clock = new ClockController(this, { periodMs: 30_000, when: () => this.threads.length > 0 })

  static override styles = threadListStyles

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

  override render() {
    const shown = filterThreads(this.threads, this.query)
    const questions = this.threads.reduce((n, t) => n + t.openDialogs, 0)
    return html`
      <header class="top">
        <h1 class="brand"><span class="logo" aria-hidden="true"></span>threadhost</h1>
        <button class="primary" @click=${this.#new}>New thread</button>
      </header>
      <div class="search" role="search">
        <input
          type="search"
          aria-label="Search threads"
          placeholder="Search threads"
          .value=${this.query}
          @input=${(e: Event) => (this.query = (e.target as HTMLInputElement).value)}
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Escape' && this.query) {
              e.preventDefault()
              this.query = ''
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
          ? html`<div class="empty" role="status">No thread titles match “${this.query}”.</div>`
          : nothing}
        <ul>
          ${repeat(
            shown,
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
                  href=${`#/threads/${encodeURIComponent(t.threadId)}`}
                  aria-current=${t.threadId === this.selectedId ? 'page' : 'false'}
                  data-thread=${t.threadId}
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
                  ${t.preview ? html`<span class="preview" data-preview>${t.preview}</span>` : nothing}
                  <span class="sub" title=${`${t.model} in ${t.cwd}`}
                    >${stateLabel} · ${relativeTime(t.updatedAt)} · ${t.model} · ${folderName(t.cwd)}</span
                  >
                </a>
                <span class="actions">
                  <button type="button" class="ghost" aria-label=${`Edit title of “${title}”`} title="Edit the title" data-rename=${t.threadId}
                    @click=${() => this.#startRename(t.threadId)}>Edit</button>
                  <button type="button" class="ghost danger" aria-label=${`Delete “${title}”`} title="Delete the thread" data-delete=${t.threadId}
                    @click=${() => this.#startDelete(t.threadId)}>Delete</button>
                </span>
              </li>`
            },
          )}
        </ul>
      </nav>
    `
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
