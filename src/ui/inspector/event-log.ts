/**
 * One actor's recorded history, newest last. Choosing an entry (click, or arrows then Enter)
 * shows the machine as it was right after it; Escape (or "Follow live") returns to the present.
 */
import { LitElement, css, html } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import { controls, tokens } from '../styles.js'
import { shortId, stateText } from './actor-tree.js'
import type { InspectionRecord } from './types.js'

export function describeRecord(r: InspectionRecord): { glyph: string; text: string; detail: string } {
  switch (r.kind) {
    case 'actor.started':
      return { glyph: '●', text: `started (${r.machineId})`, detail: r.parentId ? `by ${r.parentId}` : '' }
    case 'actor.stopped':
      return { glyph: '■', text: `stopped (${r.status})`, detail: '' }
    case 'event': {
      const { type, ...payload } = r.event
      const keys = Object.keys(payload)
      return {
        glyph: '⇢',
        text: type,
        detail: `${r.origin ? `from ${r.origin.includes('/') ? shortId(r.origin) : r.origin}` : 'from the host'}${keys.length ? ` · ${JSON.stringify(payload).slice(0, 80)}` : ''}`,
      }
    }
    case 'snapshot':
      return {
        glyph: '→',
        text: stateText(r.value),
        detail: `${r.event}${r.status !== 'active' ? ` · ${r.status}` : ''}${r.transitions.length ? ` · ${r.transitions.length} transition${r.transitions.length > 1 ? 's' : ''}` : ''}`,
      }
  }
}

const time = (ts: number) => new Date(ts).toLocaleTimeString(undefined, { hour12: false }) + `.${String(ts % 1000).padStart(3, '0')}`

@customElement('event-log')
export class EventLog extends LitElement {
  @property({ attribute: false }) records: InspectionRecord[] = []
  /** The chosen entry; 0 follows live. */
  @property({ type: Number }) chosen = 0

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: flex;
        flex-direction: column;
        min-height: 0;
      }
      ol {
        list-style: none;
        margin: 0;
        padding: 0.25rem;
        overflow: auto;
        flex: 1;
        font-size: 0.8rem;
      }
      li {
        display: grid;
        grid-template-columns: 1rem 1fr;
        gap: 0 0.4rem;
        padding: 0.25rem 0.4rem;
        border-radius: 6px;
        cursor: pointer;
        border: 1px solid transparent;
      }
      li:hover {
        background: var(--th-bg-sunk);
      }
      li:focus-visible {
        outline: 2px solid var(--th-accent);
      }
      li[aria-selected='true'] {
        background: var(--th-accent-soft);
        border-color: var(--th-accent);
      }
      .glyph {
        color: var(--th-fg-soft);
      }
      .snapshot .text {
        font-family: var(--th-mono);
        color: var(--th-accent);
      }
      .event .text {
        font-weight: 600;
      }
      .detail,
      time {
        grid-column: 2;
        color: var(--th-fg-soft);
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      time {
        font-size: 0.7rem;
      }
    `,
  ]

  override render() {
    return html`<ol role="listbox" aria-label="Recorded history" tabindex="0" @keydown=${this.#onKey}>
      ${this.records.map((r) => {
        const d = describeRecord(r)
        return html`<li
          role="option"
          class=${r.kind === 'snapshot' ? 'snapshot' : r.kind === 'event' ? 'event' : 'actor'}
          data-record=${r.id}
          tabindex="-1"
          aria-selected=${this.chosen === r.id ? 'true' : 'false'}
          @click=${() => this.#choose(r.id)}
        >
          <span class="glyph" aria-hidden="true">${d.glyph}</span><span class="text">${d.text}</span>
          <span class="detail">${d.detail}</span><time>${time(r.ts)}</time>
        </li>`
      })}
    </ol>`
  }

  protected override updated(): void {
    if (this.chosen === 0) {
      const list = this.renderRoot.querySelector('ol')
      if (list) list.scrollTop = list.scrollHeight
    }
  }

  #choose(id: number) {
    this.dispatchEvent(new CustomEvent('choose-record', { detail: id, bubbles: true, composed: true }))
  }

  #onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape') return this.#choose(0)
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End', 'Enter'].includes(e.key)) return
    e.preventDefault()
    const ids = this.records.map((r) => r.id)
    if (ids.length === 0) return
    const at = this.chosen ? ids.indexOf(this.chosen) : ids.length
    const next =
      e.key === 'Home' ? 0 : e.key === 'End' ? ids.length - 1 : e.key === 'ArrowUp' ? Math.max(0, at - 1) : e.key === 'ArrowDown' ? Math.min(ids.length - 1, at + 1) : at
    this.#choose(ids[Math.min(next, ids.length - 1)])
    this.updateComplete.then(() => (this.renderRoot.querySelector(`[data-record="${ids[next]}"]`) as HTMLElement | null)?.scrollIntoView({ block: 'nearest' }))
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'event-log': EventLog
  }
}
