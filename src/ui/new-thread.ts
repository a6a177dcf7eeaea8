/**
 * The empty state of "New thread": where the next thread will work (any `--workspace` root) and on
 * which model, and a composer that is there at once — no server thread exists until its first
 * message is sent, so clicking New thread makes nothing, and nothing typed waits on a request. The
 * first Send creates the thread (with the choices) and prompts it; the page then opens the thread,
 * carrying over whatever was typed meanwhile.
 */
import { LitElement, html, nothing } from 'lit'
import { customElement, property, query, state } from 'lit/decorators.js'
import type { ModelList, WorkspaceList } from '../schemas/index.js'
import { api as defaultApi, type Api } from './api.js'
import type { ComposerBox } from './composer-box.js'
import './composer-box.js'
import { saveDraft } from './drafts.js'
import { newThreadStyles } from './new-thread.styles.js'

/** The empty state's draft key: not a thread id (ids never hold `:`), kept across a reload like any draft. */
export const NEW_THREAD_DRAFT = ':new'
/** The last workspace and model chosen here, offered first the next time. */
const CHOICE_KEY = 'threadhost:new-thread'

interface Choice {
  cwd?: string
  model?: string
}

function lastChoice(): Choice {
  try {
    return JSON.parse(globalThis.localStorage?.getItem(CHOICE_KEY) ?? '{}') as Choice
  } catch {
    return {}
  }
}

function keepChoice(choice: Choice): void {
  try {
    globalThis.localStorage?.setItem(CHOICE_KEY, JSON.stringify(choice))
  } catch {}
}

/** The last segment of a path, to tell roots apart in a narrow select. */
const folder = (path: string) => path.split(/[\\/]/).filter(Boolean).at(-1) ?? path

@customElement('new-thread-view')
export class NewThreadView extends LitElement {
  @property({ attribute: false }) api: Api = defaultApi
  @property({ attribute: false }) models: ModelList | undefined

  @state() private workspaces: WorkspaceList | undefined
  @state() private cwd = lastChoice().cwd
  @state() private model = lastChoice().model
  @query('composer-box') private composer!: ComposerBox

  /** The thread the first Send is creating: a second Send meanwhile goes to the same thread. */
  #creating: Promise<string> | undefined

  static override styles = newThreadStyles

  override connectedCallback(): void {
    super.connectedCallback()
    this.api.listWorkspaces().then(
      (w) => (this.workspaces = w),
      () => {}, // the server's default root, unnamed, until it answers
    )
  }

  protected override async firstUpdated(): Promise<void> {
    await this.composer?.updateComplete
    this.composer?.focus()
  }

  override focus(): void {
    this.composer?.focus()
  }

  get #cwd(): string | undefined {
    const roots = this.workspaces?.roots
    if (!roots) return undefined
    return this.cwd && roots.includes(this.cwd) ? this.cwd : this.workspaces!.default
  }

  get #model(): string | undefined {
    const models = this.models
    if (!models) return undefined
    return this.model && models.models.some((m) => m.name === this.model) ? this.model : models.default
  }

  override render() {
    const roots = this.workspaces?.roots ?? []
    const models = this.models?.models ?? []
    return html`<section aria-labelledby="new-heading">
      <a class="back" href="#/">‹ All threads</a>
      <h1 id="new-heading">New thread</h1>
      <p class="hint">It is made when you send its first message.</p>
      <div class="choices">
        ${roots.length > 1
          ? html`<label
              >Workspace
              <select
                .value=${this.#cwd ?? ''}
                @change=${(e: Event) => this.#choose({ cwd: (e.target as HTMLSelectElement).value })}
              >
                ${roots.map((r) => html`<option value=${r} ?selected=${r === this.#cwd} title=${r}>${folder(r)} — ${r}</option>`)}
              </select></label
            >`
          : roots.length === 1
            ? html`<p class="where">Works in <code>${roots[0]}</code></p>`
            : nothing}
        ${models.length > 1
          ? html`<label
              >Model
              <select
                .value=${this.#model ?? ''}
                @change=${(e: Event) => this.#choose({ model: (e.target as HTMLSelectElement).value })}
              >
                ${models.map((m) => html`<option value=${m.name} ?selected=${m.name === this.#model}>${m.label}</option>`)}
              </select></label
            >`
          : nothing}
      </div>
      <composer-box .threadId=${NEW_THREAD_DRAFT} .send=${this.#send}></composer-box>
    </section>`
  }

  #choose(change: Choice) {
    if (change.cwd !== undefined) this.cwd = change.cwd
    if (change.model !== undefined) this.model = change.model
    keepChoice({ cwd: this.cwd, model: this.model })
  }

  /** Creates the thread as chosen (what equals the server's default is left to it), then prompts it. */
  #send = async (text: string) => {
    const first = this.#creating === undefined
    const cwd = this.#cwd
    const model = this.#model
    this.#creating ??= this.api
      .createThread({
        ...(cwd && cwd !== this.workspaces?.default ? { cwd } : {}),
        ...(model && model !== this.models?.default ? { model } : {}),
      })
      .then((r) => r.threadId)
    let threadId: string
    try {
      threadId = await this.#creating
    } catch (err) {
      this.#creating = undefined
      throw err
    }
    try {
      await this.api.prompt(threadId, text)
    } catch (err) {
      if (first) {
        // Its first message was not taken: no empty thread is left behind, and the text is back in the box.
        this.#creating = undefined
        await this.api.deleteThread(threadId).catch(() => {})
      }
      throw err
    }
    if (first) this.#started(threadId)
  }

  /** What was typed while the thread was being made is the new thread's draft; typing goes on there. */
  #started(threadId: string) {
    const composer = this.composer
    if (composer) {
      saveDraft(threadId, composer.draft)
      composer.threadId = threadId
    }
    saveDraft(NEW_THREAD_DRAFT, '')
    this.dispatchEvent(new CustomEvent('thread-started', { bubbles: true, composed: true, detail: { threadId } }))
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'new-thread-view': NewThreadView
  }
}
