/**
 * A notice over the pane while any of the user's pi extensions failed (to load, or in a handler
 * such as `session_start`) or clash on a tool name: which file, and pi's own words. pi's CLI prints
 * these on its terminal; a browser has none, and an extension that silently does nothing is worse.
 * Dismissed, it stays away until the set of failures changes.
 */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { ExtensionList } from '../schemas/index.js'
import { controls, tokens } from './styles.js'

interface Problem {
  name: string
  text: string
}

export function problemsOf(list: ExtensionList | undefined): Problem[] {
  if (!list) return []
  const name = (path: string) => path.split(/[\\/]/).pop() ?? path
  return [
    ...list.failed.map((f) => ({
      name: name(f.path),
      text: f.event ? `failed on ${f.event}: ${f.error}` : `did not load: ${f.error}`,
    })),
    ...list.clashes.map((c) => ({ name: name(c.path), text: c.message })),
  ]
}

@customElement('extension-notice')
export class ExtensionNotice extends LitElement {
  @property({ attribute: false }) extensions: ExtensionList | undefined
  @state() private dismissed = ''

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: block;
      }
      .notice {
        margin: 0.5rem 1rem 0;
        padding: 0.5rem 0.75rem;
        border: 1px solid var(--th-warn);
        border-radius: 8px;
        background: var(--th-bg-soft);
        font-size: 0.85rem;
        display: flex;
        gap: 0.5rem;
        align-items: flex-start;
      }
      details {
        flex: 1;
        min-width: 0;
      }
      summary {
        cursor: pointer;
        color: var(--th-warn);
        font-weight: 600;
      }
      ul {
        margin: 0.4rem 0 0;
        padding-left: 1.2rem;
      }
      li {
        overflow-wrap: anywhere;
      }
      code {
        font-weight: 600;
      }
    `,
  ]

  override render() {
    const problems = problemsOf(this.extensions)
    const key = JSON.stringify(problems)
    if (!problems.length || key === this.dismissed) return nothing
    const failed = this.extensions!.failed.length
    const clashes = this.extensions!.clashes.length
    const said = [
      failed ? `${failed} extension failure${failed === 1 ? '' : 's'}` : '',
      clashes ? `${clashes} tool-name clash${clashes === 1 ? '' : 'es'}` : '',
    ].filter(Boolean)
    return html`<div class="notice" role="status">
      <details>
        <summary>${said.join(' and ')} — your pi extensions</summary>
        <ul>
          ${problems.map((p) => html`<li><code>${p.name}</code> ${p.text}</li>`)}
        </ul>
      </details>
      <button class="ghost" aria-label="Dismiss the extension notice" @click=${() => (this.dismissed = key)}>✕</button>
    </div>`
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'extension-notice': ExtensionNotice
  }
}
