/**
 * The thread list: a search over titles, the open questions across threads, each thread's title,
 * active/busy indicator and question badge, rename and delete in place (keyboard too), and "New thread".
 */
import { LitElement, css, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { ThreadSummary } from '../schemas/index.js'
import { api as defaultApi, describeError, type Api } from './api.js'
import { controls, tokens } from './styles.js'

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

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: flex;
        flex-direction: column;
        min-height: 0;
        height: 100%;
        background: var(--th-bg-soft);
      }
      .top {
        display: flex;
        align-items: center;
        gap: 0.5rem;
        padding: 0.7rem 0.9rem;
        min-height: 3.25rem;
        box-sizing: border-box;
        border-bottom: 1px solid var(--th-border);
      }
      .brand {
        margin: 0;
        font-size: 1rem;
        font-weight: 700;
        letter-spacing: -0.01em;
        flex: 1;
        display: flex;
        align-items: center;
        gap: 0.45rem;
      }
      .logo {
        width: 1.35rem;
        height: 1.35rem;
        border-radius: 6px;
        background: linear-gradient(135deg, var(--th-accent), #06b6d4);
      }
      nav {
        flex: 1;
        overflow-y: auto;
        padding: 0.5rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
        display: grid;
        gap: 2px;
      }
      a {
        display: grid;
        grid-template-columns: auto 1fr auto;
        align-items: center;
        column-gap: 0.6rem;
        padding: 0.55rem 0.65rem;
        border-radius: 8px;
        color: inherit;
        text-decoration: none;
      }
      a:hover {
        background: var(--th-bg-sunk);
      }
      a[aria-current='page'] {
        background: var(--th-accent-soft);
      }
      .title {
        font-size: 0.9rem;
        font-weight: 500;
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .sub {
        grid-column: 2 / 4;
        font-size: 0.75rem;
        color: var(--th-fg-soft);
      }
      .preview {
        grid-column: 2 / 4;
        font-size: 0.78rem;
        color: var(--th-fg-soft);
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .dot {
        width: 0.5rem;
        height: 0.5rem;
        border-radius: 50%;
        background: var(--th-border);
        grid-row: span 2;
      }
      .dot.live {
        background: var(--th-ok);
      }
      .dot.damaged {
        background: var(--th-danger);
      }
      .dot.busy {
        background: var(--th-accent);
        box-shadow: 0 0 0 3px var(--th-accent-soft);
        animation: pulse 1.2s ease-in-out infinite;
      }
      @keyframes pulse {
        50% {
          opacity: 0.4;
        }
      }
      .badge {
        font-size: 0.7rem;
        font-weight: 700;
        min-width: 1.2rem;
        text-align: center;
        padding: 0.05rem 0.35rem;
        border-radius: 999px;
        background: var(--th-warn);
        color: var(--th-bg);
      }
      .search {
        padding: 0.5rem 0.5rem 0;
      }
      .search input {
        width: 100%;
        font: inherit;
        font-size: 0.85rem;
        color: var(--th-fg);
        background: var(--th-bg);
        border: 1px solid var(--th-border);
        border-radius: 8px;
        padding: 0.4rem 0.6rem;
        box-sizing: border-box;
      }
      .search input:focus-visible,
      li input:focus-visible {
        outline: 2px solid var(--th-accent);
        outline-offset: 1px;
      }
      a.inbox {
        display: flex;
        justify-content: space-between;
        margin: 0 0 0.4rem;
        font-size: 0.85rem;
        font-weight: 500;
      }
      a.inbox .none {
        font-size: 0.75rem;
        color: var(--th-fg-soft);
      }
      li.thread {
        position: relative;
      }
      .actions {
        position: absolute;
        top: 0.35rem;
        right: 0.35rem;
        display: flex;
        gap: 2px;
        opacity: 0;
        padding: 0.1rem;
        border-radius: 8px;
        background: var(--th-bg-sunk);
      }
      /* Over the badge while the pointer or the keyboard is on the thread (the pane has them too). */
      li.thread:hover .actions,
      li.thread:focus-within .actions {
        opacity: 1;
      }
      /* A touch screen has no hover to reveal them: an invisible button would still take a tap. */
      @media (hover: none) {
        .actions {
          opacity: 1;
        }
        li.thread a {
          padding-right: 7.5rem;
        }
      }
      .actions button {
        font-size: 0.72rem;
        padding: 0.1rem 0.35rem;
        background: var(--th-bg);
      }
      li.editing,
      li.confirm {
        padding: 0.45rem 0.55rem;
        border-radius: 8px;
        background: var(--th-bg);
        border: 1px solid var(--th-border);
        display: grid;
        gap: 0.35rem;
        font-size: 0.85rem;
      }
      li.confirm {
        background: var(--th-danger-soft);
        color: var(--th-danger);
      }
      li form,
      li .row {
        display: flex;
        gap: 0.3rem;
      }
      li form input {
        flex: 1;
        min-width: 0;
        font-size: 0.85rem;
        padding: 0.25rem 0.45rem;
      }
      li .row button,
      li form button {
        font-size: 0.78rem;
        padding: 0.2rem 0.5rem;
      }
      .empty,
      .error {
        padding: 1rem;
        font-size: 0.85rem;
        color: var(--th-fg-soft);
      }
      .error {
        color: var(--th-danger);
      }
    `,
  ]

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
