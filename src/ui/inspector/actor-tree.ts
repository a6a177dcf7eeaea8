/**
 * The live actors as a tree (thread → its ask-queue and dialogs), and below it the actors that have
 * stopped but still have a recorded history. Arrow keys move between entries; Enter selects.
 */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import { controls, tokens } from '../styles.js'
import type { ActorMeta } from './history.js'
import type { ActorNode } from './types.js'

/** How a stopped actor ended, as the list of stopped actors says it. */
const ENDED: Record<NonNullable<ActorMeta['ended']>, string> = { done: 'done', stopped: 'stopped', error: 'failed' }

export const stateText = (value: unknown): string =>
  value === null || value === undefined ? '—' : typeof value === 'string' ? value : JSON.stringify(value).replace(/["{}]/g, '').replace(/:/g, '.')

export const shortId = (actorId: string): string => {
  const last = actorId.split('/').at(-1)!
  return /^[0-9a-f-]{36}$/.test(last) ? last.slice(0, 8) : last
}

@customElement('actor-tree')
export class ActorTree extends LitElement {
  @property({ attribute: false }) threads: ActorNode[] = []
  @property({ attribute: false }) stopped: ActorMeta[] = []
  @property({ attribute: false }) selected = ''

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: block;
        overflow: auto;
        padding: 0.5rem;
      }
      h2 {
        font-size: 0.75rem;
        text-transform: uppercase;
        letter-spacing: 0.05em;
        color: var(--th-fg-soft);
        margin: 0.75rem 0.25rem 0.25rem;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
      }
      ul ul {
        padding-left: 1rem;
        border-left: 1px solid var(--th-border);
        margin-left: 0.6rem;
      }
      button {
        display: flex;
        width: 100%;
        justify-content: space-between;
        gap: 0.5rem;
        text-align: left;
        border-color: transparent;
        background: transparent;
        padding: 0.3rem 0.5rem;
        margin: 1px 0;
      }
      button[aria-current='true'] {
        background: var(--th-accent-soft);
        border-color: var(--th-accent);
      }
      .machine {
        font-size: 0.75rem;
        color: var(--th-fg-soft);
      }
      .value {
        font-family: var(--th-mono);
        font-size: 0.8rem;
        color: var(--th-accent);
      }
      .gone .value {
        color: var(--th-fg-soft);
      }
      .gone .failed .value {
        color: var(--th-danger);
      }
      .empty {
        color: var(--th-fg-soft);
        padding: 0.25rem 0.5rem;
        font-size: 0.875rem;
      }
    `,
  ]

  override render() {
    return html`
      <h2 id="live">Live actors</h2>
      ${this.threads.length === 0 ? html`<p class="empty">No live thread. Prompt one and it appears here.</p>` : nothing}
      <ul aria-labelledby="live" @keydown=${this.#onKey}>
        ${this.threads.map((t) => this.#node(t))}
      </ul>
      ${this.stopped.length
        ? html`<h2 id="stopped">Stopped (history)</h2>
            <ul aria-labelledby="stopped" class="gone" @keydown=${this.#onKey}>
              ${this.stopped.map((m) => html`<li class=${m.ended === 'error' ? 'failed' : ''}>${this.#button(m.actorId, m.machineId, ENDED[m.ended ?? 'stopped'])}</li>`)}
            </ul>`
        : nothing}
    `
  }

  #node(node: ActorNode): unknown {
    return html`<li>
      ${this.#button(node.actorId, node.machineId, stateText(node.value))}
      ${node.children.length ? html`<ul>${node.children.map((c) => this.#node(c))}</ul>` : nothing}
    </li>`
  }

  #button(actorId: string, machineId: string, value: string) {
    const name = actorId.includes('/') ? shortId(actorId) : actorId
    return html`<button
      data-actor=${actorId}
      aria-current=${this.selected === actorId ? 'true' : 'false'}
      aria-label=${`${machineId} ${name}: ${value}`}
      @click=${() => this.dispatchEvent(new CustomEvent('select-actor', { detail: actorId, bubbles: true, composed: true }))}
    >
      <span><span class="machine">${machineId}</span> <span>${name}</span></span> <span class="value">${value}</span>
    </button>`
  }

  #onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return
    const buttons = [...this.renderRoot.querySelectorAll('button')]
    const at = buttons.indexOf(this.renderRoot.querySelector('button:focus') as HTMLButtonElement)
    const next = buttons[Math.max(0, Math.min(buttons.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))]
    next?.focus()
    e.preventDefault()
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'actor-tree': ActorTree
  }
}
