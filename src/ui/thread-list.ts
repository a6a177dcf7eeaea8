/** The thread list: title, active/busy indicator, a badge when questions are open, and "New thread". */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { ThreadSummary } from '../schemas/index.js'
import { controls, tokens } from './styles.js'

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

  override render() {
    return html`
      <div class="top">
        <span class="brand"><span class="logo" aria-hidden="true"></span>threadhost</span>
        <button class="primary" @click=${this.#new}>New thread</button>
      </div>
      <nav aria-label="Threads">
        ${this.error ? html`<div class="error" role="alert">${this.error}</div>` : nothing}
        ${this.threads.length === 0 && !this.loading && !this.error
          ? html`<div class="empty">No threads yet.</div>`
          : nothing}
        <ul>
          ${repeat(
            this.threads,
            (t) => t.threadId,
            (t) => {
              const state = t.busy ? 'busy' : t.live ? 'live' : 'cold'
              // "active": its runtime is loaded on the server (the header's "Connected" is about this tab).
              const stateLabel = t.busy ? 'working' : t.live ? 'active' : 'idle'
              return html`<li>
                <a
                  href=${`#/threads/${encodeURIComponent(t.threadId)}`}
                  aria-current=${t.threadId === this.selectedId ? 'page' : 'false'}
                  data-thread=${t.threadId}
                >
                  <span class="dot ${state}" title=${stateLabel}></span>
                  <span class="title">${t.title || t.threadId}</span>
                  ${t.openDialogs > 0
                    ? html`<span
                        class="badge"
                        aria-label=${`${t.openDialogs} open question${t.openDialogs === 1 ? '' : 's'}`}
                        >${t.openDialogs}</span
                      >`
                    : html`<span></span>`}
                  <span class="sub" title=${`${t.model} in ${t.cwd}`}
                    >${stateLabel} · ${relativeTime(t.updatedAt)} · ${t.model} · ${folderName(t.cwd)}</span
                  >
                </a>
              </li>`
            },
          )}
        </ul>
      </nav>
    `
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
