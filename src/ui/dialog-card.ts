/**
 * One open question, as a card: confirm, select, input, editor or questionnaire (including the
 * one-question cards of ask_user_question, which offer Skip). The answer is one POST through
 * `submit`; a 422 shows its refusal here, above the buttons, and leaves the card open. The card
 * does not remove itself: it leaves when the follow's dialog-settled names its id.
 *
 * Escape cancels — except on an ask_user_question card, where a cancel also drops every question
 * waiting behind it (ADR-0032), so Escape first asks; a second Escape backs out.
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { DialogAnswerBody, DialogReply, OpenDialog, QuestionAnswer, QuestionnaireQuestion } from '../schemas/index.js'
import { describeError, isNetworkError, isNotFound, refusalOf } from './api.js'
import { dialogTitle } from './thread-store.js'
import { ClockController } from './controllers/clock-controller.js'
import './questionnaire-form.js'
import './terminal-view.js'
import { dialogCardStyles } from './dialog-card.styles.js'

export type DialogSubmit = (body: DialogAnswerBody) => Promise<void>
/** One key or paste (terminal bytes) for the terminal component `dialogId`. */
export type TerminalKeys = (dialogId: string, data: string) => Promise<void>

let uid = 0

/**
 * The server's refusal names questions by their ids (`question 'lang': …`), which mean nothing to a
 * person: name them by their prompts.
 */
export function humanRefusal(refusal: string, questions: readonly QuestionnaireQuestion[]): string {
  const prompt = (id: string) => questions.find((q) => q.id === id)?.prompt
  return refusal
    .replace(/\bquestion '([^']*)'/g, (m, id: string) => (prompt(id) !== undefined ? `“${prompt(id)}”` : m))
    .replace(/'([^']*)' is not a question of this questionnaire/g, 'an answer to a question that was not asked')
}

const ASK_TOOL = 'ask_user_question'

export function formatRemaining(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000))
  const m = Math.floor(s / 60)
  return `${m}:${String(s % 60).padStart(2, '0')}`
}

@customElement('dialog-card')
export class DialogCard extends LitElement {
  @property({ attribute: false }) dialog!: OpenDialog
  @property({ attribute: false }) submit: DialogSubmit = async () => {}
  /** Where a terminal component's keys go. */
  @property({ attribute: false }) keys: TerminalKeys = async () => {}
  /** Clock for the countdown; tests may replace it. */
  @property({ attribute: false }) now: () => number = () => Date.now()
  /** The follow is connected: a "cannot reach the server" refusal from before is over once it is. */
  @property({ type: Boolean }) connected = true

  @state() private sending = false
  @state() private refusal = ''
  /** Escape on an ask_user_question card: asking whether to cancel the whole batch. */
  @state() private confirmingCancel = false
  #refusalIsNetwork = false
  /** The countdown moves with the page's clock, while the question has one. */
  #clock = new ClockController(this, { when: () => this.dialog?.expiresAt !== undefined })
  #uid = `dc${++uid}`

  static override styles = dialogCardStyles

  /** Focus the card's first answer control (the pane moves the focus here when a question arrives). */
  override focus(): void {
    if (this.dialog?.dialog.method === 'terminal') return void this.renderRoot.querySelector('terminal-view')?.focus()
    const target = this.renderRoot.querySelector<HTMLElement>(
      'input:not(:disabled), textarea:not(:disabled), button.primary:not(:disabled), .options button:not(:disabled), button:not(:disabled)',
    )
    target?.focus()
  }

  protected override updated(changed: PropertyValues): void {
    // A refusal is shown where it is read: scrolled into view if the card is taller than the screen.
    if (changed.has('refusal') && this.refusal) this.renderRoot.querySelector('.refusal')?.scrollIntoView?.({ block: 'nearest' })
    if (changed.has('confirmingCancel') && this.confirmingCancel) {
      this.renderRoot.querySelector<HTMLElement>('.ask-cancel button.danger')?.focus()
    }
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('connected') && this.connected && this.#refusalIsNetwork) {
      this.refusal = ''
      this.#refusalIsNetwork = false
    }
  }

  get cardTitle(): string {
    return this.dialog ? dialogTitle(this.dialog.dialog) : ''
  }

  override render() {
    if (!this.dialog) return nothing
    const d = this.dialog.dialog
    const titleId = `${this.#uid}-title`
    const origin = this.dialog.origin
    return html`<section role="dialog" aria-labelledby=${titleId} @keydown=${this.#onKey}>
      <header>
        <h3 id=${titleId}>${this.cardTitle}</h3>
        ${this.#countdown()}
        ${origin.name || origin.kind === 'extension' ? html`<span class="meta">asked by ${origin.name ?? 'an extension'}</span>` : nothing}
      </header>
      ${this.confirmingCancel ? this.#askCancel() : nothing}
      ${this.#body()}
    </section>`
  }

  #countdown() {
    const at = this.dialog.expiresAt
    if (at === undefined) return nothing
    const left = at - this.now()
    return html`<span class="meta countdown" role="timer" aria-label="Time left"
      >${left > 0 ? `closes in ${formatRemaining(left)}` : 'closing…'}</span
    >`
  }

  /** Above the buttons, so it is seen where the answer was given. */
  #refusal() {
    return this.refusal ? html`<div class="refusal" role="alert">${this.refusal}</div>` : nothing
  }

  #askCancel() {
    return html`<div class="ask-cancel" role="alertdialog" aria-label="Cancel questions">
      <span>Cancel this question and every question waiting after it?</span>
      <button
        class="danger"
        @click=${() => {
          this.confirmingCancel = false
          void this.#cancel()
        }}
      >
        Cancel all questions
      </button>
      <button @click=${this.#keepAnswering}>Keep answering</button>
    </div>`
  }

  #cancelTitle(): string {
    return this.dialog.origin.name === ASK_TOOL ? 'Cancel this question and every question waiting after it' : 'Withdraw the question (Esc)'
  }

  #keepAnswering = () => {
    this.confirmingCancel = false
    void this.updateComplete.then(() => this.focus())
  }

  #cancelButton() {
    return html`<span class="spacer"></span>
      <button class="ghost" title=${this.#cancelTitle()} ?disabled=${this.sending} @click=${this.#cancel}>Cancel</button>`
  }

  #body() {
    const d = this.dialog.dialog
    switch (d.method) {
      case 'confirm':
        return html`${d.message ? html`<p class="message">${d.message}</p>` : nothing}
          ${this.#refusal()}
          <div class="actions">
            <button class="primary" ?disabled=${this.sending} @click=${() => this.#send({ confirmed: true })}>Yes</button>
            <button ?disabled=${this.sending} @click=${() => this.#send({ confirmed: false })}>No</button>
            ${this.#cancelButton()}
          </div>`
      case 'select':
        return html`${this.#refusal()}<div class="actions">
          <div class="options" role="group" aria-label="Options">
            ${d.options.map(
              (o) => html`<button ?disabled=${this.sending} @click=${() => this.#send({ value: o })}>${o}</button>`,
            )}
          </div>
          ${this.#cancelButton()}
        </div>`
      case 'input':
        return html`<form @submit=${this.#submitText}>
          <input
            type="text"
            name="value"
            aria-labelledby=${`${this.#uid}-title`}
            placeholder=${d.placeholder ?? ''}
            ?disabled=${this.sending}
            autocomplete="off"
          />
          ${this.#submitRow()}
        </form>`
      case 'editor':
        return html`<form @submit=${this.#submitText}>
          <textarea
            name="value"
            aria-labelledby=${`${this.#uid}-title`}
            .value=${d.prefill ?? ''}
            ?disabled=${this.sending}
            @keydown=${(e: KeyboardEvent) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) this.#submitText(e)
            }}
          ></textarea>
          ${this.#submitRow()}
        </form>`
      // pi's ctx.ui.custom(): its keys answer it, so it has no buttons (Stop ends it, as any question).
      case 'terminal':
        return html`<terminal-view
          label=${`${this.cardTitle}: the extension's screen`}
          .screen=${this.dialog.screen}
          .typist=${this.dialog.typist}
          .send=${(data: string) => this.keys(this.dialog.id, data)}
        ></terminal-view>`
      case 'questionnaire': {
        const single = !d.title && d.questions.length === 1
        return html`<form @submit=${this.#submitQuestionnaire}>
          <questionnaire-form .questions=${d.questions} ?prompt-is-title=${single} ?disabled=${this.sending}></questionnaire-form>
          ${this.#submitRow(d.questions.every((q) => q.skippable))}
        </form>`
      }
    }
  }

  #submitRow(skippable = false) {
    return html`${this.refusal ? html`<div style="margin-top:0.75rem">${this.#refusal()}</div>` : nothing}
      <div class="actions" style="margin-top:0.75rem">
      <button type="submit" class="primary" ?disabled=${this.sending}>Submit</button>
      ${skippable
        ? html`<button type="button" ?disabled=${this.sending} @click=${this.#skip}>Skip</button>`
        : nothing}
      <span class="spacer"></span>
      <button type="button" class="ghost" title=${this.#cancelTitle()} ?disabled=${this.sending} @click=${this.#cancel}>Cancel</button>
    </div>`
  }

  /** The answers as the contract wants them: one per question (none when this is not a questionnaire). */
  collectAnswers(): QuestionAnswer[] {
    return this.renderRoot.querySelector('questionnaire-form')?.collectAnswers() ?? []
  }

  #onKey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || e.isComposing || this.dialog.dialog.method === 'terminal') return
    e.preventDefault() // the pane's Escape (stop the run) is not for keys pressed on a card
    if (this.sending) return
    if (this.dialog.origin.name === ASK_TOOL) {
      // Cancelling here cancels the whole batch of questions: ask first; Escape again backs out.
      if (this.confirmingCancel) this.#keepAnswering()
      else this.confirmingCancel = true
      return
    }
    void this.#cancel()
  }

  #submitText = (e: Event) => {
    e.preventDefault()
    const field = this.renderRoot.querySelector<HTMLInputElement | HTMLTextAreaElement>('[name=value]')
    void this.#send({ value: field?.value ?? '' })
  }

  #submitQuestionnaire = (e: Event) => {
    e.preventDefault()
    void this.#send({ answers: this.collectAnswers() })
  }

  #skip = () => {
    const d = this.dialog.dialog
    if (d.method !== 'questionnaire') return
    void this.#send({ answers: d.questions.map((q) => ({ id: q.id, skipped: true as const })) })
  }

  #cancel = () => this.#send({ cancelled: true })

  async #send(answer: DialogReply) {
    if (this.sending) return
    this.sending = true
    this.refusal = ''
    this.#refusalIsNetwork = false
    try {
      await this.submit({ id: this.dialog.id, ...answer })
      // Stay disabled: the card leaves when dialog-settled arrives on the follow.
    } catch (err) {
      this.sending = false
      this.confirmingCancel = false
      const d = this.dialog.dialog
      const refusal = refusalOf(err)
      if (refusal !== undefined) this.refusal = d.method === 'questionnaire' ? humanRefusal(refusal, d.questions) : refusal
      else if (isNotFound(err)) this.refusal = 'This question is no longer open: your answer was not taken.'
      else {
        this.#refusalIsNetwork = isNetworkError(err)
        this.refusal = describeError(err)
      }
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'dialog-card': DialogCard
  }
}
