/** The page: thread list beside the thread pane, routed by `#/threads/<id>`. */
import { LitElement, css, html } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { ModelList, ThreadSummary } from '../schemas/index.js'
import { UNREACHABLE, api as defaultApi, describeError, isNetworkError, type Api } from './api.js'
import { controls, tokens } from './styles.js'
import './thread-list.js'
import './thread-pane.js'

interface LiveStatus {
  threadId: string
  live: boolean
  busy: boolean
  run: number
  openDialogs: number
}

export function threadIdFromHash(hash: string): string {
  const m = /^#\/threads\/([^/?#]+)/.exec(hash)
  if (!m) return ''
  try {
    return decodeURIComponent(m[1])
  } catch {
    return ''
  }
}

@customElement('app-shell')
export class AppShell extends LitElement {
  @property({ attribute: false }) api: Api = defaultApi
  @property({ type: Number, attribute: 'poll-ms' }) pollMs = 3000

  @state() private threads: ThreadSummary[] = []
  @state() private threadId = threadIdFromHash(location.hash)
  /** `#/inspect…` shows the machine inspector (src/ui/inspector), loaded on first visit. */
  @state() private inspecting = location.hash.startsWith('#/inspect')
  @state() private notice = ''
  @state() private loading = true
  @state() private listError = ''
  /** `GET /api/models`, asked once (again on the next poll if it failed): the pane's model picker. */
  @state() private models: ModelList | undefined
  #modelsAsked = false
  #timer: ReturnType<typeof setInterval> | undefined

  static override styles = [
    tokens,
    controls,
    css`
      :host {
        display: grid;
        grid-template-columns: 18rem 1fr;
        height: 100vh;
        height: 100dvh;
        background: var(--th-bg);
      }
      :host([inspecting]) {
        grid-template-columns: 1fr;
      }
      thread-list {
        border-right: 1px solid var(--th-border);
        min-height: 0;
      }
      main {
        min-width: 0;
        min-height: 0;
      }
      .welcome {
        height: 100%;
        display: grid;
        place-content: center;
        text-align: center;
        gap: 0.75rem;
        color: var(--th-fg-soft);
        padding: 2rem;
      }
      .welcome h1 {
        margin: 0;
        font-size: 1.5rem;
        color: var(--th-fg);
      }
      .welcome p {
        margin: 0 0 0.5rem;
      }
      .welcome .notice {
        padding: 0.5rem 0.75rem;
        border-radius: 8px;
        background: var(--th-bg-soft);
        color: var(--th-fg);
      }
      @media (max-width: 720px) {
        :host {
          grid-template-columns: 1fr;
        }
        :host([has-thread]) thread-list {
          display: none;
        }
        :host(:not([has-thread])) main {
          display: none;
        }
        thread-list {
          border-right: 0;
        }
      }
    `,
  ]

  override connectedCallback(): void {
    super.connectedCallback()
    window.addEventListener('hashchange', this.#onHash)
    void this.refresh()
    this.#timer = setInterval(() => void this.refresh(), this.pollMs)
    this.addEventListener('thread-changed', this.#onChanged)
    this.addEventListener('thread-deleted', this.#onDeleted)
    this.addEventListener('new-thread', this.#onNew)
    this.addEventListener('thread-status', this.#onStatus as EventListener)
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    window.removeEventListener('hashchange', this.#onHash)
    clearInterval(this.#timer)
  }

  async refresh(): Promise<void> {
    void this.#loadModels()
    try {
      const threads = await this.api.listThreads()
      // The thread on screen was listed before and is gone now: another tab deleted it.
      const shown = this.threads.find((t) => t.threadId === this.threadId)
      if (shown && !threads.some((t) => t.threadId === this.threadId)) {
        this.notice = `“${shown.title}” was deleted in another tab.`
        location.hash = '#/'
      }
      this.threads = this.#overlay([...threads].sort((a, b) => b.updatedAt - a.updatedAt))
      this.listError = ''
    } catch (err) {
      this.listError = isNetworkError(err) ? UNREACHABLE : `The thread list failed: ${describeError(err)}`
    } finally {
      this.loading = false
    }
  }

  protected override updated(): void {
    this.toggleAttribute('has-thread', !!this.threadId)
    this.toggleAttribute('inspecting', this.inspecting)
    const summary = this.threads.find((t) => t.threadId === this.threadId)
    document.title = this.threadId ? `${summary?.title || this.threadId} · threadhost` : 'threadhost'
  }

  override render() {
    if (this.inspecting) {
      void import('./inspector/inspector-page.js')
      return html`<inspector-page></inspector-page>`
    }
    const summary = this.threads.find((t) => t.threadId === this.threadId)
    return html`
      <thread-list
        .threads=${this.threads}
        selected-id=${this.threadId}
        ?loading=${this.loading}
        error=${this.listError}
      ></thread-list>
      <main>
        ${this.threadId
          ? html`<thread-pane
              thread-id=${this.threadId}
              .summary=${summary}
              .models=${this.models}
              .api=${this.api}
            ></thread-pane>`
          : html`<div class="welcome">
              ${this.notice ? html`<p role="status" class="notice">${this.notice}</p>` : ''}
              <h1>Welcome to threadhost</h1>
              <p>Pick a thread on the left, or start a new one.</p>
              <div><button class="primary" @click=${this.#onNew}>Start a conversation</button></div>
            </div>`}
      </main>
    `
  }

  #onHash = () => {
    if (threadIdFromHash(location.hash)) this.notice = ''
    this.threadId = threadIdFromHash(location.hash)
    this.inspecting = location.hash.startsWith('#/inspect')
  }

  /** The followed thread's status comes from its follow, live; the poll covers the others. */
  #live: LiveStatus | undefined

  #overlay(threads: ThreadSummary[]): ThreadSummary[] {
    const s = this.#live
    if (!s || s.threadId !== this.threadId) return threads
    return threads.map((t) =>
      t.threadId === s.threadId ? { ...t, live: s.live, busy: s.busy, run: s.run, openDialogs: s.openDialogs } : t,
    )
  }

  #onStatus = (e: CustomEvent<LiveStatus>) => {
    this.#live = e.detail
    this.threads = this.#overlay(this.threads)
  }

  async #loadModels(): Promise<void> {
    if (this.models || this.#modelsAsked) return
    this.#modelsAsked = true
    try {
      this.models = await this.api.listModels()
    } catch {
      this.#modelsAsked = false // the pane shows the model's name without a picker until then
    }
  }

  /** A pane that changed its thread hands over the new summary: the list shows it before the poll. */
  #onChanged = (e: Event) => {
    const changed = (e as CustomEvent<{ threadId: string; summary?: ThreadSummary }>).detail?.summary
    if (changed) {
      this.threads = this.#overlay(this.threads.map((t) => (t.threadId === changed.threadId ? { ...t, ...changed } : t)))
    }
    void this.refresh()
  }

  #onDeleted = () => {
    location.hash = '#/'
    void this.refresh()
  }

  /** One thread per press: a second press (or a held key) while one is being made makes none. */
  #creating = false

  #onNew = async () => {
    if (this.#creating) return
    this.#creating = true
    try {
      const { threadId } = await this.api.createThread({})
      // The pane that opens takes the focus into its composer.
      location.hash = `#/threads/${encodeURIComponent(threadId)}`
      await this.refresh()
    } catch (err) {
      this.listError = `Could not create a thread (${describeError(err)})`
    } finally {
      this.#creating = false
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'app-shell': AppShell
  }
}
