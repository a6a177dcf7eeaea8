/**
 * Extensions' `notify` frames, as toasts over the pane: a status each (an alert for errors), with a
 * Dismiss button. They leave on their own too (the thread store's effects time them out).
 */
import { LitElement, html, nothing } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { Toast } from './thread-store.js'
import { toastStackStyles } from './toast-stack.styles.js'

/** A thread's address in a notice (`#/threads/<id>`, e.g. the thread an extension's ctx.newSession() made) becomes a link to it. */
function withThreadLinks(message: string) {
  const parts = message.split(/(#\/threads\/[^\s/?#]+)/)
  return parts.map((part, i) => (i % 2 ? html`<a href=${part}>open it</a>` : part))
}

@customElement('toast-stack')
export class ToastStack extends LitElement {
  @property({ attribute: false }) toasts: Toast[] = []
  @property({ attribute: false }) dismiss: (id: string) => void = () => {}

  static override styles = toastStackStyles

  override render() {
    if (this.toasts.length === 0) return nothing
    return html`<div class="toasts" role="region" aria-label="Notifications">
      ${repeat(
        this.toasts,
        (t) => t.id,
        (t) => html`<div class="toast ${t.level}" role=${t.level === 'error' ? 'alert' : 'status'}>
          <span>${withThreadLinks(t.message)}</span>
          <button class="ghost" aria-label="Dismiss" @click=${() => this.dismiss(t.id)}>×</button>
        </div>`,
      )}
    </div>`
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'toast-stack': ToastStack
  }
}
