/**
 * The thread's model, thinking level (reasoning models only) and workspace, under its title. The
 * selects change them for the runs to come, so they are disabled while a run is in flight; a change
 * that is refused (busy, an unusable model) or fails puts the select back and says why.
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, query, state } from 'lit/decorators.js'
import type { ModelList, ThinkingLevel, ThreadSummary, UpdateThreadBody } from '../schemas/index.js'
import { describeError, isConflict, isUnavailable } from './api.js'
import { folderName } from './thread-list.js'
import { threadSettingsStyles } from './thread-settings.styles.js'

/**
 * pi's thinking levels in order. The schema's THINKING_LEVELS would bring TypeBox into the page for
 * six words; the checks below fail to compile if this list and the schema's union ever differ.
 */
const THINKING = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const satisfies readonly ThinkingLevel[]
const thinkingListIsComplete: [Exclude<ThinkingLevel, (typeof THINKING)[number]>] extends [never] ? true : never = true
void thinkingListIsComplete

@customElement('thread-settings')
export class ThreadSettings extends LitElement {
  @property({ attribute: false }) summary: ThreadSummary | undefined
  /** `GET /api/models`, from the page. Without it the row shows the model's name, no picker. */
  @property({ attribute: false }) models: ModelList | undefined
  /** A run is in flight: nothing can be changed until it ends. */
  @property({ type: Boolean }) busy = false
  /** Sends a change (the pane PATCHes the thread and hands the new summary back through `summary`). */
  @property({ attribute: false }) configure: (change: UpdateThreadBody) => Promise<void> = async () => {}

  /** A change in flight: its select keeps the user's pick until the answer. */
  @state() private configuring = false
  @state() private configError = ''
  @query('select[name="model"]') private modelSelect!: HTMLSelectElement | null
  @query('select[name="thinking"]') private thinkingSelect!: HTMLSelectElement | null
  #threadId: string | undefined

  static override styles = threadSettingsStyles

  protected override willUpdate(_: PropertyValues<this>): void {
    // Another thread: nothing said about the one before carries over.
    const id = this.summary?.threadId
    if (id !== undefined && id !== this.#threadId) {
      this.#threadId = id
      this.configuring = false
      this.configError = ''
    }
  }

  /** The selects show the thread as it is, except the one whose change is still being sent. */
  protected override updated(): void {
    if (this.configuring || !this.summary) return
    const model = this.modelSelect
    if (model && model.value !== this.summary.model) model.value = this.summary.model
    const thinking = this.thinkingSelect
    const level = this.summary.thinkingLevel ?? ''
    if (thinking && thinking.value !== level) thinking.value = level
  }

  override render() {
    const s = this.summary
    if (!s) return nothing
    const models = this.models?.models ?? []
    const current = models.find((m) => m.name === s.model)
    const disabled = this.busy || this.configuring
    const hint = this.busy ? 'Can be changed when the run ends' : ''
    // PATCH can set a thinking level but not clear one: "default" (unset) is offered while it is so.
    return html`<div class="settings">
      ${models.length
        ? html`<span class="field">
            <label for="model">Model</label>
            <select id="model" name="model" title=${hint} ?disabled=${disabled} @change=${this.#pickModel}>
              ${current ? nothing : html`<option value=${s.model} selected>${s.model}</option>`}
              ${models.map((m) => html`<option value=${m.name} ?selected=${m === current}>${m.label}</option>`)}
            </select>
          </span>`
        : html`<span class="field"><span>Model</span><span class="value">${s.model}</span></span>`}
      ${current?.reasoning
        ? html`<span class="field">
            <label for="thinking">Thinking</label>
            <select id="thinking" name="thinking" title=${hint} ?disabled=${disabled} @change=${this.#pickThinking}>
              <option value="" ?selected=${!s.thinkingLevel} ?disabled=${!!s.thinkingLevel}>default</option>
              ${THINKING.map((l) => html`<option value=${l} ?selected=${l === s.thinkingLevel}>${l}</option>`)}
            </select>
          </span>`
        : nothing}
      <span class="field folder" title=${s.cwd}><span>Folder</span><span class="value">${folderName(s.cwd)}</span></span>
      ${this.configError ? html`<span class="config-error" role="alert">${this.configError}</span>` : nothing}
      <slot></slot>
    </div>`
  }

  #pickModel = (e: Event) => {
    const model = (e.target as HTMLSelectElement).value
    if (model && model !== this.summary?.model) void this.#configure({ model }, 'model')
  }

  /** Opens the model picker (Ctrl+L, as pi's model selector): `false` when there is none to open now. */
  pickModel(): boolean {
    const select = this.modelSelect
    if (!select || select.disabled) return false
    select.focus()
    try {
      select.showPicker()
    } catch {
      // Not offered here (or not from this event): focused, the arrow keys pick.
    }
    return true
  }

  /** The next thinking level (Shift+Tab, as in pi): `false` when the model does not reason or a run is in flight. */
  cycleThinking(): boolean {
    const s = this.summary
    const current = this.models?.models.find((m) => m.name === s?.model)
    if (!s || !current?.reasoning || this.busy || this.configuring) return false
    const next = THINKING[(THINKING.indexOf(s.thinkingLevel ?? 'off') + 1) % THINKING.length]
    void this.#configure({ thinkingLevel: next }, 'thinking level')
    return true
  }

  #pickThinking = (e: Event) => {
    const level = (e.target as HTMLSelectElement).value as ThinkingLevel | ''
    if (level && level !== this.summary?.thinkingLevel) void this.#configure({ thinkingLevel: level }, 'thinking level')
  }

  /** Refused (busy, unusable model) or failed, the selects go back to what the thread has. */
  async #configure(change: UpdateThreadBody, what: 'model' | 'thinking level') {
    const id = this.#threadId
    this.configuring = true
    this.configError = ''
    try {
      await this.configure(change)
    } catch (err) {
      if (id !== this.#threadId) return
      this.configError = isConflict(err)
        ? `Busy: change the ${what} when the run ends.`
        : isUnavailable(err)
          ? `Unavailable: the ${what} cannot change while this thread's session file is damaged. Repair it and restart threadhost, or delete the thread.`
          : `${what === 'model' ? 'Model' : 'Thinking level'} not changed: ${describeError(err)}`
    } finally {
      if (id === this.#threadId) this.configuring = false
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'thread-settings': ThreadSettings
  }
}
