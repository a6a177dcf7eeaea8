/**
 * One thread's open questions, answered in place (the open-questions view): the thread is followed
 * like a pane follows it, each open question is its card, and a question that leaves says why —
 * answered here and how, or in another tab and what it chose ("answered in another tab: us-east").
 */
import { LitElement, css, html, nothing } from 'lit'
import { customElement, property } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { DialogAnswerBody } from '../schemas/index.js'
import { api as defaultApi, type Api } from './api.js'
import { FollowController } from './controllers/follow-controller.js'
import type { EventSourceFactory } from './follow-client.js'
import { tokens } from './styles.js'
import './dialog-card.js'

@customElement('thread-questions')
export class ThreadQuestions extends LitElement {
  @property({ attribute: 'thread-id' }) threadId = ''
  @property({ attribute: false }) api: Api = defaultApi
  @property({ attribute: false }) eventSource: EventSourceFactory | undefined

  readonly following = new FollowController(this, {
    threadId: () => this.threadId,
    api: () => this.api,
    eventSource: () => this.eventSource,
  })

  static override styles = [
    tokens,
    css`
      :host {
        display: grid;
        gap: 0.6rem;
      }
      .note {
        font-size: 0.85rem;
        color: var(--th-fg-soft);
        border: 1px solid var(--th-border);
        border-radius: 10px;
        padding: 0.5rem 0.75rem;
      }
      .note strong {
        color: var(--th-fg);
        font-weight: 600;
      }
    `,
  ]

  override render() {
    const ctx = this.following.ctx
    if (!ctx?.synced) return nothing
    return html`${repeat(
      ctx.view.openDialogs,
      (d) => d.id,
      (d) => html`<dialog-card .dialog=${d} .submit=${this.#answer} ?connected=${this.following.live}></dialog-card>`,
    )}
    ${repeat(
      ctx.notes,
      (n) => `note:${n.id}`,
      (n) => html`<div class="note" role="status" data-dialog=${n.id}><strong>${n.title}</strong> — ${n.reason}</div>`,
    )}`
  }

  /** As the pane answers (FollowController.answer). */
  #answer = (body: DialogAnswerBody) => this.following.answer(this.api, this.threadId, body)
}

declare global {
  interface HTMLElementTagNameMap {
    'thread-questions': ThreadQuestions
  }
}
