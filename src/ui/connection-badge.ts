/**
 * Connection state of the follow: connecting, connected, reconnecting (or closed), and "not started"
 * for a thread that does not exist yet (its first message creates it). The words are the header's
 * own: the list says whether a thread is *active* (its runtime is loaded), never "connected".
 */
import { LitElement, css, html } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import type { ConnectionState } from './follow-client.js'
import { tokens } from './styles.js'

export type BadgeState = ConnectionState | 'new'

const LABEL: Record<BadgeState, string> = {
  new: 'Not started',
  connecting: 'Connecting',
  live: 'Connected',
  reconnecting: 'Reconnecting',
  closed: 'Offline',
}

@customElement('connection-badge')
export class ConnectionBadge extends LitElement {
  @property({ reflect: true }) state: BadgeState = 'connecting'

  static override styles = [
    tokens,
    css`
      :host {
        display: inline-flex;
      }
      span {
        display: inline-flex;
        align-items: center;
        gap: 0.4rem;
        font-size: 0.75rem;
        font-weight: 500;
        padding: 0.2rem 0.6rem;
        border-radius: 999px;
        background: var(--th-bg-sunk);
        color: var(--th-fg-soft);
        white-space: nowrap;
      }
      span::before {
        content: '';
        width: 0.5rem;
        height: 0.5rem;
        border-radius: 50%;
        background: currentColor;
      }
      :host([state='live']) span {
        color: var(--th-ok);
      }
      :host([state='reconnecting']) span,
      :host([state='connecting']) span {
        color: var(--th-warn);
      }
      :host([state='reconnecting']) span::before,
      :host([state='connecting']) span::before {
        animation: pulse 1s ease-in-out infinite;
      }
      :host([state='closed']) span {
        color: var(--th-danger);
      }
      @keyframes pulse {
        50% {
          opacity: 0.3;
        }
      }
    `,
  ]

  override render() {
    const title = this.state === 'new' ? 'This thread does not exist yet: your first message starts it.' : ''
    return html`<span role="status" aria-label="Connection: ${LABEL[this.state]}" data-state=${this.state} title=${title}
      >${LABEL[this.state]}</span
    >`
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'connection-badge': ConnectionBadge
  }
}
