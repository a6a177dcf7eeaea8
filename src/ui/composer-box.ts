/**
 * The composer: a draft, Send (Enter) and Stop. During a run a prompt is queued — steering by
 * default, or as a follow-up (Alt+Enter always queues a follow-up, as in pi) — and the thread's
 * queue is listed above the box. Stop (Escape, handled by the pane) hands back the prompts that
 * were waiting; they are appended to the draft after anything already typed.
 */
import { LitElement, html, nothing, type PropertyValues } from 'lit'
import { customElement, property, query, state } from 'lit/decorators.js'
import type { CommandInfo, DeliverAs, PromptImage, QueueState } from '../schemas/index.js'
import { describeError, isNetworkError } from './api.js'
import { composerBoxStyles } from './composer-box.styles.js'
import { loadDraft, saveDraft } from './drafts.js'
import { browserCanDeliver, keyIdOf, normalizeKey } from './shortcut-keys.js'
import { paneRequest } from './pane-keys.js'
import { CommandCompletion } from './command-completion.js'
import { dataUrl, IMAGE_TYPES, readImages } from './prompt-images.js'

export type ComposerSend = (text: string, deliverAs: DeliverAs | undefined, images?: PromptImage[]) => Promise<void>
export type ComposerStop = () => Promise<string[]>

/** Restored texts go after what is already typed, in order, one paragraph each. */
export function appendRestored(draft: string, restored: readonly string[]): string {
  const parts = [draft.replace(/\s+$/, ''), ...restored].filter((s) => s.trim() !== '')
  return parts.join('\n\n')
}

const DRAFT_REPORT_MS = 400

@customElement('composer-box')
export class ComposerBox extends LitElement {
  @property({ type: Boolean }) busy = false
  @property({ type: Boolean }) disabled = false
  @property({ attribute: false }) queue: QueueState = { steering: [], followUp: [] }
  @property({ attribute: false }) send: ComposerSend = async () => {}
  @property({ attribute: false }) stop: ComposerStop = async () => []
  /** pi's Alt+Up during a run: the waiting prompts come back (as Stop's do) and the run goes on. */
  @property({ attribute: false }) takeQueue: ComposerStop = async () => []
  /** Told the draft once typing pauses, so extensions reading the editor (getEditorText) see it. */
  @property({ attribute: false }) draftChanged: (text: string) => void = () => {}
  /** The follow is connected: an "unreachable" error from before is over once it is. */
  @property({ type: Boolean }) connected = true
  /** The thread this composer writes to: its draft is kept per thread (drafts.ts). */
  @property({ attribute: false }) threadId: string | undefined
  /** The thread's `/` commands (`GET /api/threads/:id/commands`), asked when the draft starts with `/`. */
  @property({ attribute: false }) loadCommands: (() => Promise<CommandInfo[]>) | undefined
  /**
   * Whether the thread's model takes images (`GET /api/models`): `false` refuses them here, saying
   * so; undefined (not known) leaves it to the server.
   */
  @property({ attribute: false }) imagesAllowed: boolean | undefined
  /** The thread's model, to name it when it takes no images. */
  @property({ attribute: false }) modelName = ''
  /** This thread's prompts, oldest first: Up in an empty box recalls them, newest first (pi's editor history). */
  @property({ attribute: false }) history: readonly string[] = []
  /** Runs an extension's shortcut (`kind: shortcut` among the commands) on the thread: its key pressed here. */
  @property({ attribute: false }) runShortcut: ((key: string) => Promise<void>) | undefined

  @state() draft = ''
  /** Images to go with the next message (paste, drop or pick). */
  @state() images: PromptImage[] = []
  /** Which of `history` the box shows, while it shows it unchanged (Up / Down walk it). */
  #recalled: number | undefined
  @state() deliverAs: DeliverAs = 'steer'
  @state() private stopping = false
  @state() private error = ''
  /** The error shown is "cannot reach the server", which a reconnect makes untrue. */
  #errorIsNetwork = false
  /** Said once, under the box: e.g. which restored texts were queued in another tab. */
  @state() private notice = ''
  @query('textarea') private textarea!: HTMLTextAreaElement
  readonly #completion = new CommandCompletion(this, (c) => {
    this.draft = `/${c.name} `
    void this.updateComplete.then(() => {
      const t = this.textarea
      t?.focus()
      t?.setSelectionRange(this.draft.length, this.draft.length)
    })
  })

  static override styles = composerBoxStyles

  /** Images back into the next message (a Stop's hand-back of a queued prompt, a send that failed). */
  attach(images: readonly PromptImage[]): void {
    if (images.length) this.images = [...this.images, ...images]
  }

  /** Images offered by a paste, a drop or the picker: taken, or refused in words. */
  async #addFiles(files: Iterable<File>) {
    const list = [...files]
    if (list.length === 0) return
    if (this.imagesAllowed === false) {
      this.#setError(new Error(`The model ${this.modelName || 'of this thread'} does not take images: pick one that does, or send the text alone.`))
      return
    }
    const { images, problems } = await readImages(list, this.images.length)
    this.images = [...this.images, ...images]
    this.#setError(problems.length ? new Error(`Not attached: ${problems.join('; ')}.`) : undefined)
  }

  #onPaste = (e: ClipboardEvent) => {
    const files = [...(e.clipboardData?.files ?? [])].filter((f) => f.type.startsWith('image/'))
    if (files.length === 0) return
    e.preventDefault()
    void this.#addFiles(files)
  }

  #onDrop = (e: DragEvent) => {
    const files = e.dataTransfer?.files
    if (!files?.length) return
    e.preventDefault()
    void this.#addFiles(files)
  }

  #onPick = (e: Event) => {
    const input = e.target as HTMLInputElement
    void this.#addFiles(input.files ?? []).finally(() => (input.value = ''))
  }

  #removeImage(i: number) {
    this.images = this.images.filter((_, j) => j !== i)
    this.textarea?.focus()
  }

  /** Put texts back into the draft, after anything already typed. */
  appendToDraft(restored: readonly string[]): void {
    if (!restored.length) return
    this.draft = appendRestored(this.draft, restored)
    void this.updateComplete.then(() => {
      this.#autosize()
      this.textarea?.focus()
    })
  }

  /**
   * An extension's editor text (`editor-text`): it fills the draft only when the draft is empty, so
   * nothing typed is ever overwritten. Returns whether it was taken.
   */
  offerText(text: string): boolean {
    if (this.draft.trim() !== '' || text === '') return false
    this.draft = text
    void this.updateComplete.then(() => this.#autosize())
    return true
  }

  override focus(): void {
    this.textarea?.focus()
  }

  /** Sends what is in the box, as Enter would (a Regenerate's prompt, put in by `fill`). */
  sendDraft(): Promise<void> {
    return this.#send()
  }

  /** Put a text in the box for the person to send or edit (the empty thread's examples). */
  fill(text: string): void {
    this.draft = text
    void this.updateComplete.then(() => {
      this.#autosize()
      const t = this.textarea
      t?.focus()
      t?.setSelectionRange(text.length, text.length)
    })
  }

  /** Something to tell the person about the draft (cleared when they send). */
  say(notice: string): void {
    this.notice = notice
  }

  /** Stop the run (the Stop button, or Escape in the pane): the waiting prompts come back into the draft. */
  stopRun(): Promise<void> {
    return this.#stop()
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('connected') && this.connected && this.#errorIsNetwork) this.#setError(undefined)
    // Another thread: the box shows that thread's draft, never the one typed for the last.
    if (changed.has('threadId') && this.threadId !== undefined) {
      this.draft = loadDraft(this.threadId)
      this.images = []
      this.#recalled = undefined
    }
    // Another thread: its commands are its own.
    this.#completion.changed(changed.has('loadCommands'), changed.has('draft'))
  }

  #setError(err: unknown) {
    this.#errorIsNetwork = err !== undefined && isNetworkError(err)
    this.error = err === undefined ? '' : describeError(err)
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (!changed.has('draft')) return
    if (this.threadId !== undefined) saveDraft(this.threadId, this.draft)
    this.#autosize()
    // Not per keystroke: one report when typing pauses.
    clearTimeout(this.#draftTimer)
    this.#draftTimer = setTimeout(() => this.draftChanged(this.draft), DRAFT_REPORT_MS)
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    clearTimeout(this.#draftTimer)
  }

  #draftTimer?: ReturnType<typeof setTimeout>

  override render() {
    const aria = this.#completion.aria
    const queued = [
      ...this.queue.steering.map((text) => ({ kind: 'Steer', text })),
      ...this.queue.followUp.map((text) => ({ kind: 'Follow-up', text })),
    ]
    return html`
      ${queued.length
        ? html`<ul class="queue" aria-label="Queued prompts">
            ${queued.map((q) => html`<li><span class="kind">${q.kind}</span><span class="text" title=${q.text}>${q.text}</span></li>`)}
          </ul>`
        : nothing}
      ${this.#completion.render()}
      ${this.images.length
        ? html`<ul class="attachments" aria-label="Images to send">
            ${this.images.map(
              (image, i) => html`<li>
                <img src=${dataUrl(image)} alt=${`Image ${i + 1} of ${this.images.length}`} />
                <button type="button" class="ghost" aria-label=${`Remove image ${i + 1}`} @click=${() => this.#removeImage(i)}>×</button>
              </li>`,
            )}
          </ul>`
        : nothing}
      <div class="box" @dragover=${(e: DragEvent) => e.preventDefault()} @drop=${this.#onDrop}>
        <label class="attach" title=${this.imagesAllowed === false ? `${this.modelName || 'This model'} does not take images` : 'Attach images (or paste or drop them)'}>
          <input type="file" accept=${IMAGE_TYPES.join(',')} multiple ?disabled=${this.disabled} @change=${this.#onPick} />
          <span aria-hidden="true">+</span><span class="sr-only">Attach images</span>
        </label>
        <textarea
          rows="1"
          aria-label="Message"
          aria-autocomplete="list"
          aria-controls=${aria.controls}
          aria-activedescendant=${aria.activedescendant}
          placeholder=${this.busy ? 'Queue a message…' : 'Message the agent… (/ for commands)'}
          .value=${this.draft}
          ?disabled=${this.disabled}
          @input=${this.#onInput}
          @keydown=${this.#onKey}
          @paste=${this.#onPaste}
        ></textarea>
        <div class="buttons">
          ${this.busy
            ? html`<button class="danger" title="Stop the run (Esc)" ?disabled=${this.stopping} @click=${this.#stop}>Stop</button>`
            : nothing}
          <button class="primary" ?disabled=${this.disabled || this.draft.trim() === ''} @click=${() => this.#send()}>
            Send
          </button>
        </div>
      </div>
      <div class="row">
        ${this.busy
          ? html`<span>Queue as</span>
              <span class="seg" role="radiogroup" aria-label="Queue as">
                <label
                  ><input
                    type="radio"
                    name="deliver"
                    .checked=${this.deliverAs === 'steer'}
                    @change=${() => (this.deliverAs = 'steer')}
                  />Steer</label
                ><label
                  ><input
                    type="radio"
                    name="deliver"
                    .checked=${this.deliverAs === 'followUp'}
                    @change=${() => (this.deliverAs = 'followUp')}
                  />Follow-up</label
                >
              </span>`
          : nothing}
        ${this.error ? html`<span class="error" role="alert">${this.error}</span>` : nothing}
        ${this.notice ? html`<span class="notice" role="status">${this.notice}</span>` : nothing}
        <span class="hint"
          >${this.busy
            ? 'Enter queues · Alt+Enter as a follow-up · Esc stops'
            : 'Enter to send · Shift+Enter for a new line'}</span
        >
      </div>
    `
  }

  #autosize() {
    const t = this.textarea
    if (!t) return
    t.style.height = 'auto'
    t.style.height = `${t.scrollHeight}px`
  }

  #onInput = (e: Event) => {
    this.draft = (e.target as HTMLTextAreaElement).value
  }

  /**
   * An extension's shortcut pressed in the box runs on the thread. The thread's shortcuts are asked
   * on the first key press with a modifier; that press runs its shortcut once they are known.
   */
  #onShortcut(e: KeyboardEvent): boolean {
    if (!this.runShortcut || this.disabled || e.isComposing || !(e.ctrlKey || e.altKey || e.metaKey)) return false
    const pressed = keyIdOf(e)
    if (!pressed || !browserCanDeliver(pressed)) return false
    const find = () => this.#completion.commands?.find((c) => c.kind === 'shortcut' && normalizeKey(c.name) === pressed)
    const run = (c: CommandInfo) => void this.runShortcut?.(c.name).catch((err: unknown) => this.#setError(err))
    if (!this.#completion.commands) {
      void this.#completion.ask().then(() => {
        const found = find()
        if (found) run(found)
      })
      return false
    }
    const found = find()
    if (!found) return false
    e.preventDefault()
    run(found)
    return true
  }

  /**
   * Up in an empty box (or on a recalled prompt not yet changed) brings back the previous prompt, Down
   * the next one, as pi's editor does; anywhere else the arrows move the caret.
   */
  #onRecall(e: KeyboardEvent): boolean {
    if ((e.key !== 'ArrowUp' && e.key !== 'ArrowDown') || e.altKey || e.shiftKey || e.ctrlKey || e.metaKey || e.isComposing) return false
    const shown = this.#recalled !== undefined && this.draft === this.history[this.#recalled] ? this.#recalled : undefined
    if (shown === undefined && this.draft !== '') return false
    const at = shown ?? this.history.length
    const next = e.key === 'ArrowUp' ? at - 1 : at + 1
    if (next < 0 || (shown === undefined && e.key === 'ArrowDown')) return false
    e.preventDefault()
    if (next >= this.history.length) {
      this.#recalled = undefined
      this.draft = ''
      return true
    }
    this.#recalled = next
    this.fill(this.history[next])
    return true
  }

  #onKey = (e: KeyboardEvent) => {
    // Alt+Up during a run: take the queued prompts back into the box, as pi's editor does; the run goes on.
    if (e.key === 'ArrowUp' && e.altKey && !e.ctrlKey && !e.metaKey && !e.shiftKey && !e.isComposing && this.busy) {
      e.preventDefault()
      void this.#handBack(this.takeQueue)
      return
    }
    if (this.#onShortcut(e)) return
    // Shift+Tab: the next thinking level, as in pi, when the thread's model reasons; otherwise focus moves back as usual.
    if (e.key === 'Tab' && e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey && this.#completion.suggestions.length === 0) {
      if (!this.dispatchEvent(paneRequest('cycle-thinking'))) e.preventDefault()
      return
    }
    if (this.#completion.suggestions.length === 0 && this.#onRecall(e)) return
    if (this.#completion.onKey(e)) return
    if (e.key !== 'Enter' || e.shiftKey || e.isComposing) return
    e.preventDefault()
    // Alt+Enter: a follow-up (delivered when the agent would otherwise stop), as pi's editor does.
    void this.#send(e.altKey ? 'followUp' : undefined)
  }

  #send = async (as?: DeliverAs) => {
    const text = this.draft
    if (!text.trim() || this.disabled) return
    const images = this.images
    this.#setError(undefined)
    this.notice = ''
    this.draft = ''
    this.images = []
    try {
      await this.send(text, this.busy ? (as ?? this.deliverAs) : undefined, images.length ? images : undefined)
    } catch (err) {
      // Nothing was taken: give the text and the images back, before whatever was typed meanwhile.
      this.draft = this.draft ? `${text}\n\n${this.draft}` : text
      this.images = [...images, ...this.images]
      this.#setError(err)
    }
  }

  #stop = () => this.#handBack(this.stop)

  /** Stop, or Alt+Up: what comes back goes after the draft; one at a time. */
  #handBack = async (ask: ComposerStop) => {
    if (this.stopping) return
    this.stopping = true
    this.#setError(undefined)
    try {
      this.appendToDraft(await ask())
    } catch (err) {
      this.#setError(err)
    } finally {
      this.stopping = false
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'composer-box': ComposerBox
  }
}
