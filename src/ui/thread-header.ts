/**
 * The top of a thread pane: its title (renamed in place), where it was forked from, the follow's
 * connection, Inspect, Rename and Delete (asked first); under the row, whatever the pane slots in
 * (the thread's settings), then the delete confirmation and what went wrong or is wrong with the
 * thread. Renaming and deleting are the pane's (`rename`, `deleteThread`): a rejected promise keeps the
 * form or the question open, and the pane says why in `error`.
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { ThreadSummary } from '../schemas/index.js'
import type { BadgeState } from './connection-badge.js'
import { threadHeaderStyles } from './thread-header.styles.js'
import { CONTEXT_WARNING, contextFill, totalsLine, type ThreadTotals } from './thread-totals.js'
import './connection-badge.js'

@customElement('thread-header')
export class ThreadHeader extends LitElement {
  @property({ attribute: 'thread-id' }) threadId = ''
  /** The title as shown (the pane's: the summary's, or the first prompt's). */
  @property() heading = ''
  @property({ attribute: false }) summary: ThreadSummary | undefined
  /** The thread this one was forked from, when the list knows it (absent: deleted, or not loaded yet). */
  @property({ attribute: false }) parent: ThreadSummary | undefined
  @property() connection: BadgeState = 'connecting'
  /** What went wrong with the last rename, delete or fork, in words. */
  @property() error = ''
  @property({ attribute: false }) rename: (title: string) => Promise<void> = async () => {}
  @property({ attribute: false }) deleteThread: () => Promise<void> = async () => {}
  /** What the thread used so far and how full its context is (pi's footer); nothing shown before the first reply. */
  @property({ attribute: false }) totals: ThreadTotals | undefined
  /** Compacts the conversation (`/compact`); offered when the context is nearly full, and only between runs. */
  @property({ attribute: false }) compact: (() => Promise<void>) | undefined
  /** A run is in flight: compaction waits until it ends. */
  @property({ type: Boolean }) busy = false
  @state() private compacting = false

  @state() private renaming = false
  @state() private confirmingDelete = false

  static override styles = threadHeaderStyles

  /** Rename opens with the focus in the title field, the title selected: typing replaces it. */
  protected override updated(changed: PropertyValues): void {
    if (changed.has('renaming') && this.renaming) {
      const input = this.renderRoot.querySelector<HTMLInputElement>('input[name="title"]')
      input?.focus()
      input?.select()
    }
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Another thread: a rename or a delete begun on the one before is over.
    if (changed.has('threadId')) {
      this.renaming = false
      this.confirmingDelete = false
    }
  }

  override render() {
    return html`
      <header>
        <a class="back" href="#/" aria-label="All threads">‹</a>
        ${this.renaming
          ? html`<div class="titles">
              <h2 class="visually-hidden">Rename “${this.heading}”</h2>
              ${this.#renameForm()}
            </div>`
          : html`<div class="titles">
              <h2 title=${this.heading}>${this.heading}</h2>
              ${this.#forkedFrom()}
            </div>`}
        <connection-badge .state=${this.connection}></connection-badge>
        ${this.renaming
          ? nothing
          : html`<a class="inspect" href="#/inspect?thread=${encodeURIComponent(this.threadId)}" title="See this thread's machines live">Inspect</a>
              <button class="ghost" @click=${() => (this.renaming = true)}>Rename</button>
              <button class="ghost danger" @click=${() => (this.confirmingDelete = true)}>Delete</button>`}
      </header>
      <slot></slot>
      ${this.#totals()}
      ${this.confirmingDelete
        ? html`<div class="confirm-delete" role="alertdialog" aria-label="Delete thread">
            <span>Delete “${this.heading}” and its whole transcript? This cannot be undone.</span>
            <button class="danger solid" @click=${this.#delete}>Delete thread</button>
            <button @click=${() => (this.confirmingDelete = false)}>Keep</button>
          </div>`
        : nothing}
      ${this.error ? html`<div class="header-error" role="alert">${this.error}</div>` : nothing}
      ${this.summary?.unavailable
        ? html`<div class="header-error" role="alert" data-unavailable>
            This thread's session file is damaged (${this.summary.unavailable}). Nothing will be sent or written
            to it: repair the file and restart threadhost, or delete the thread.
          </div>`
        : nothing}
    `
  }

  /** pi's footer: tokens and cost so far and the context's fill; a warning with /compact before it is full. */
  #totals() {
    const t = this.totals
    const line = t ? totalsLine(t) : ''
    if (!t || !line) return nothing
    const fill = contextFill(t)
    const full = fill !== undefined && fill >= CONTEXT_WARNING
    return html`<p class="totals" aria-label="Thread totals" title="Tokens read ↑ and written ↓ by every reply, the cost, and how full the model's context is">
        ${line}
        ${fill !== undefined
          ? html`<meter class=${full ? 'full' : ''} min="0" max="1" low="0.6" high=${CONTEXT_WARNING} optimum="0" .value=${fill}
              aria-label="Context window used"></meter>`
          : nothing}
      </p>
      ${full && this.compact
        ? html`<div class="context-warning" role="status">
            <span>The context is ${Math.round(fill * 100)}% full: compact the conversation before the model runs out of room.</span>
            <button class="primary" ?disabled=${this.busy || this.compacting} title=${this.busy ? 'When the run ends' : ''} @click=${this.#compact}>
              ${this.compacting ? 'Compacting…' : 'Compact now'}
            </button>
          </div>`
        : nothing}`
  }

  #compact = async () => {
    if (!this.compact) return
    this.compacting = true
    try {
      await this.compact()
    } catch {
      // The pane says why.
    } finally {
      this.compacting = false
    }
  }

  /** "Forked from <parent>", a link to it while it exists. */
  #forkedFrom() {
    const parentId = this.summary?.parentId
    if (!parentId) return nothing
    return html`<p class="subtitle forked">
      Forked from
      ${this.parent
        ? html`<a href="#/threads/${encodeURIComponent(parentId)}">${this.parent.title}</a>`
        : html`<span>a thread that is gone</span>`}
    </p>`
  }

  #renameForm() {
    return html`<form @submit=${this.#rename}>
      <input
        type="text"
        name="title"
        aria-label="Thread title"
        .value=${this.heading}
        maxlength="200"
        @keydown=${(e: KeyboardEvent) => {
          if (e.key === 'Escape') this.renaming = false
        }}
      />
      <button class="primary" type="submit">Save</button>
      <button type="button" @click=${() => (this.renaming = false)}>Cancel</button>
    </form>`
  }

  #rename = async (e: Event) => {
    e.preventDefault()
    const input = (e.target as HTMLFormElement).elements.namedItem('title') as HTMLInputElement
    const title = input.value.trim()
    if (!title) return
    try {
      await this.rename(title)
      this.renaming = false
    } catch {
      // The pane says why; the form stays for another try.
    }
  }

  #delete = async () => {
    try {
      await this.deleteThread()
      this.confirmingDelete = false
    } catch {
      // The pane says why; the question stays.
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'thread-header': ThreadHeader
  }
}
