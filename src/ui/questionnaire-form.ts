/**
 * A questionnaire's questions, as controls: a radio group (single), a group of checkboxes (multi)
 * or a textbox (text), each labelled by its prompt, with "Other" and its textbox where allowed.
 * `collectAnswers` gives one answer per question, shaped by its mode.
 *
 * It renders into its card's own tree, not a shadow root of its own: its inputs then belong to the
 * card's `<form>` (Enter submits it), its labels and the card's refusal are in one tree, and the
 * card's focus finds them. Its rules are part of the card's styles (questionnaire-form.styles.ts).
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { QuestionAnswer, QuestionnaireQuestion } from '../schemas/index.js'

interface QState {
  value?: string
  values: string[]
  other: string
  otherChosen: boolean
  text: string
}

const blank = (): QState => ({ values: [], other: '', otherChosen: false, text: '' })

let uid = 0

@customElement('questionnaire-form')
export class QuestionnaireForm extends LitElement {
  @property({ attribute: false }) questions: QuestionnaireQuestion[] = []
  /** One question with no title of its own: its prompt is the card's title, so it is not shown twice. */
  @property({ type: Boolean, attribute: 'prompt-is-title' }) promptIsTitle = false
  @property({ type: Boolean }) disabled = false

  @state() private answers: Record<string, QState> = {}
  #uid = `qf${++uid}`

  protected override createRenderRoot(): HTMLElement {
    return this
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // The same questions again (a reconnect's snapshot): what was chosen or typed so far stays.
    if (changed.has('questions')) {
      this.answers = Object.fromEntries(this.questions.map((q) => [q.id, this.answers[q.id] ?? blank()]))
    }
  }

  /** The answers as the contract wants them: one per question, shaped by its mode. */
  collectAnswers(): QuestionAnswer[] {
    return this.questions.map((q) => {
      const st = this.answers[q.id] ?? blank()
      const a: QuestionAnswer = { id: q.id }
      if (q.mode === 'text') a.value = st.text
      else if (q.mode === 'single') {
        if (st.otherChosen) a.other = st.other
        else if (st.value !== undefined) a.value = st.value
      } else {
        a.values = st.values
        if (st.otherChosen) a.other = st.other
      }
      return a
    })
  }

  override render() {
    return this.questions.map((q) => this.#question(q))
  }

  #question(q: QuestionnaireQuestion) {
    const st = this.answers[q.id] ?? blank()
    const id = `${this.#uid}-q-${q.id}`
    const chip = q.label ? html`<span class="chip">${q.label}</span>` : nothing
    const set = (patch: Partial<QState>) => {
      this.answers = { ...this.answers, [q.id]: { ...st, ...patch } }
    }
    if (q.mode === 'text') {
      return html`<div>
        <label class="q-label ${this.promptIsTitle ? 'sr-only' : ''}" for=${id}>${chip}${q.prompt}</label>
        <input
          id=${id}
          type="text"
          .value=${st.text}
          ?disabled=${this.disabled}
          @input=${(e: Event) => set({ text: (e.target as HTMLInputElement).value })}
        />
      </div>`
    }
    const multi = q.mode === 'multi'
    const name = `${id}-choice`
    return html`<fieldset role=${multi ? 'group' : 'radiogroup'}>
      <legend class=${this.promptIsTitle ? 'sr-only' : ''}>${chip}${q.prompt}</legend>
      ${q.options.map(
        (o) => html`<label class="choice">
          <input
            type=${multi ? 'checkbox' : 'radio'}
            name=${name}
            .value=${o.value}
            .checked=${multi ? st.values.includes(o.value) : st.value === o.value && !st.otherChosen}
            ?disabled=${this.disabled}
            @change=${(e: Event) => {
              const on = (e.target as HTMLInputElement).checked
              if (multi) set({ values: on ? [...st.values, o.value] : st.values.filter((v) => v !== o.value) })
              else if (on) set({ value: o.value, otherChosen: false })
            }}
          />
          <span>${o.label}${o.description ? html`<small>${o.description}</small>` : nothing}</span>
        </label>`,
      )}
      ${q.allowOther
        ? html`<label class="choice">
              <input
                type=${multi ? 'checkbox' : 'radio'}
                name=${name}
                .checked=${st.otherChosen}
                ?disabled=${this.disabled}
                @change=${(e: Event) => {
                  const on = (e.target as HTMLInputElement).checked
                  set(multi ? { otherChosen: on } : { otherChosen: on, value: undefined })
                }}
              />
              <span>Other</span>
            </label>
            ${st.otherChosen
              ? html`<input
                  type="text"
                  aria-label=${`Your answer: ${q.prompt}`}
                  .value=${st.other}
                  ?disabled=${this.disabled}
                  @input=${(e: Event) => set({ other: (e.target as HTMLInputElement).value })}
                />`
              : nothing}`
        : nothing}
    </fieldset>`
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'questionnaire-form': QuestionnaireForm
  }
}
