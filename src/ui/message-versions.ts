/**
 * A user message as one of its versions: the bubble (slotted), the pager (‹ 2 / 3 ›) when an Edit or
 * a Regenerate sent other versions in its place, and the inline editor an Edit opens. Choosing a
 * version or sending an edit is the server's (pi's session tree, in place); this element only says
 * what the person asked for — `version` {messageId} and `edit` {messageId, text} — and `edit-close`
 * once the editor is done with.
 */
import { css, html, LitElement, nothing } from 'lit'
import { customElement, property, query, state } from 'lit/decorators.js'

export interface VersionRequestDetail {
  messageId: string
}
export interface EditRequestDetail {
  messageId: string
  /** Absent: the prompt's own text again (Regenerate). */
  text?: string
}

@customElement('user-turn')
export class UserTurn extends LitElement {
  @property({ attribute: 'message-id' }) messageId = ''
  @property() text = ''
  /** Every version of this prompt (messageIds, oldest first), itself included; absent when it has no other. */
  @property({ attribute: false }) versions: string[] | undefined
  @property({ type: Boolean }) editing = false
  /** Choosing a version and sending an edit wait for the thread: off during a run or while offline. */
  @property({ type: Boolean }) enabled = false
  @state() private draft = ''
  @query('textarea') private textarea?: HTMLTextAreaElement

  static override styles = css`
    /* The whole column's width, so the slotted bubble keeps the transcript's own sizing and alignment. */
    :host {
      display: flex;
      flex-direction: column;
      align-items: flex-end;
      align-self: stretch;
    }
    .pager {
      display: inline-flex;
      align-items: center;
      gap: 0.25rem;
      font-size: 0.8rem;
      color: var(--th-fg-soft);
      margin-top: 0.2rem;
    }
    .pager button {
      font: inherit;
      border: 1px solid transparent;
      background: none;
      color: inherit;
      border-radius: 4px;
      padding: 0 0.35rem;
      cursor: pointer;
    }
    .pager button:hover:not(:disabled),
    .pager button:focus-visible {
      border-color: var(--th-border);
    }
    .pager button:disabled {
      opacity: 0.4;
      cursor: default;
    }
    form {
      display: flex;
      flex-direction: column;
      gap: 0.4rem;
      width: min(100%, 40rem);
    }
    textarea {
      font: inherit;
      min-height: 4rem;
      resize: vertical;
      padding: 0.5rem;
      border-radius: var(--th-radius);
      border: 1px solid var(--th-border);
      background: var(--th-bg);
      color: inherit;
    }
    .actions {
      display: flex;
      justify-content: flex-end;
      gap: 0.4rem;
    }
    .actions button {
      font: inherit;
      padding: 0.25rem 0.75rem;
      border-radius: 6px;
      border: 1px solid var(--th-border);
      background: var(--th-bg);
      color: inherit;
      cursor: pointer;
    }
    .actions button[type='submit'] {
      background: var(--th-accent);
      border-color: var(--th-accent);
      color: var(--th-accent-fg);
    }
  `

  override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('editing') && this.editing) this.draft = this.text
  }

  override updated(changed: Map<string, unknown>): void {
    if (changed.has('editing') && this.editing) {
      this.textarea?.focus()
      this.textarea?.setSelectionRange(this.draft.length, this.draft.length)
    }
  }

  override render() {
    return html`${this.editing ? this.#editor() : html`<slot></slot>`}${this.#pager()}`
  }

  #pager() {
    const versions = this.versions
    if (!versions || versions.length < 2) return nothing
    const at = versions.indexOf(this.messageId)
    const to = (i: number) => () => this.#emit<VersionRequestDetail>('version', { messageId: versions[i] })
    return html`<div class="pager" role="group" aria-label="Versions of this message">
      <button type="button" aria-label="Previous version" ?disabled=${!this.enabled || at <= 0} @click=${to(at - 1)}>‹</button>
      <span class="count" aria-live="polite">${at + 1} / ${versions.length}</span>
      <button type="button" aria-label="Next version" ?disabled=${!this.enabled || at >= versions.length - 1} @click=${to(at + 1)}>›</button>
    </div>`
  }

  #editor() {
    return html`<form aria-label="Edit message" @submit=${this.#send} @keydown=${this.#keys}>
      <textarea aria-label="Edited message" .value=${this.draft} @input=${(e: Event) => (this.draft = (e.target as HTMLTextAreaElement).value)}></textarea>
      <div class="actions">
        <button type="button" @click=${this.#close}>Cancel</button>
        <button type="submit" ?disabled=${!this.enabled || !this.draft.trim()}>Send</button>
      </div>
    </form>`
  }

  #keys = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation()
      this.#close()
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault()
      this.#send(e)
    }
  }

  #send = (e: Event) => {
    e.preventDefault()
    const text = this.draft.trim()
    if (!this.enabled || !text) return
    this.#emit<EditRequestDetail>('edit', { messageId: this.messageId, text })
    this.#close()
  }

  #close = () => this.#emit('edit-close', { messageId: this.messageId })

  #emit<T>(type: string, detail: T): void {
    this.dispatchEvent(new CustomEvent<T>(type, { bubbles: true, composed: true, detail }))
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'user-turn': UserTurn
  }
}
