/** The page: thread list beside the thread pane, routed by `#/threads/<id>`. */
import { LitElement, html, nothing } from 'lit'
import { customElement, property, state } from 'lit/decorators.js'
import type { ExtensionList, ModelList, ThreadSummary } from '../schemas/index.js'
import { UNREACHABLE, api as defaultApi, describeError, isNetworkError, isNotFound, type Api } from './api.js'
import './thread-list.js'
import './thread-pane.js'
import './new-thread.js'
import type { NewThreadView } from './new-thread.js'
import './extension-notice.js'
import './thread-questions.js'
import { appShellStyles } from './app-shell.styles.js'

interface LiveStatus {
  threadId: string
  live: boolean
  busy: boolean
  run: number
  openDialogs: number
}

/** Desktop notifications are opt-in: the person turned them on here (and the browser allowed them). */
const NOTIFY_KEY = 'threadhost.notify'
function notifyWanted(): boolean {
  try {
    return globalThis.localStorage?.getItem(NOTIFY_KEY) === '1'
  } catch {
    return false
  }
}
const notificationsOffered = () => typeof globalThis.Notification === 'function'

/** The tab's title: "(N) " first while N questions wait in any thread, so a background tab says so. */
export function tabTitle(questions: number, threadTitle?: string): string {
  const base = threadTitle ? `${threadTitle} · threadhost` : 'threadhost'
  return questions > 0 ? `(${questions}) ${base}` : base
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

/** The message a link names in `#/threads/<id>?message=<messageId>` (a search hit), or ''. */
export function messageFromHash(hash: string): string {
  const m = /^#\/threads\/[^/?#]+\?(.*)$/.exec(hash)
  return m ? (new URLSearchParams(m[1]).get('message') ?? '') : ''
}

@customElement('app-shell')
export class AppShell extends LitElement {
  @property({ attribute: false }) api: Api = defaultApi
  @property({ type: Number, attribute: 'poll-ms' }) pollMs = 3000

  @state() private threads: ThreadSummary[] = []
  @state() private threadId = threadIdFromHash(location.hash)
  /** A message to bring into view in the thread (a search hit was opened). */
  @state() private revealMessage = messageFromHash(location.hash)
  /** `#/inspect…` shows the machine inspector (src/ui/inspector), loaded on first visit. */
  @state() private inspecting = location.hash.startsWith('#/inspect')
  /** `#/questions`: every thread with an open question, to jump to. */
  @state() private questionsOpen = location.hash.startsWith('#/questions')
  /** `#/new`: the empty state of a thread not made yet (new-thread.ts). */
  @state() private composing = location.hash.startsWith('#/new')
  /** The thread the URL names does not exist (the server said so): a not-found view instead of a pane. */
  @state() private missing = ''
  /** On a phone the list and the pane take turns; whichever shows is the page's main content. */
  @state() private phone = false
  #phoneQuery = globalThis.matchMedia?.('(max-width: 720px)')
  #onPhone = () => (this.phone = !!this.#phoneQuery?.matches)
  @state() private notify = notifyWanted() && notificationsOffered() && Notification.permission === 'granted'
  @state() private notifyNote = ''
  /** Open questions per thread at the last look, to see new ones arrive; undefined before the first list. */
  #questionCounts: Map<string, number> | undefined
  @state() private notice = ''
  @state() private loading = true
  @state() private listError = ''
  /** `GET /api/models`, asked once (again on the next poll if it failed): the pane's model picker. */
  @state() private models: ModelList | undefined
  #modelsAsked = false
  /** `GET /api/extensions`, with each poll: a failure shows once a thread's session met it. */
  @state() private extensions: ExtensionList | undefined
  #timer: ReturnType<typeof setInterval> | undefined

  static override styles = appShellStyles

  override connectedCallback(): void {
    super.connectedCallback()
    window.addEventListener('hashchange', this.#onHash)
    this.#phoneQuery?.addEventListener('change', this.#onPhone)
    this.#onPhone()
    void this.refresh()
    this.#timer = setInterval(() => void this.refresh(), this.pollMs)
    this.addEventListener('thread-changed', this.#onChanged)
    this.addEventListener('thread-deleted', this.#onDeleted)
    this.addEventListener('new-thread', this.#onNew)
    this.addEventListener('thread-started', this.#onStarted)
    this.addEventListener('skip-to-main', this.#skipToMain)
    this.addEventListener('thread-status', this.#onStatus as EventListener)
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback()
    window.removeEventListener('hashchange', this.#onHash)
    this.#phoneQuery?.removeEventListener('change', this.#onPhone)
    clearInterval(this.#timer)
  }

  async refresh(): Promise<void> {
    void this.#loadModels()
    void this.#loadExtensions()
    try {
      const threads = await this.api.listThreads()
      // The thread on screen was listed before and is gone now: another tab deleted it.
      const shown = this.threads.find((t) => t.threadId === this.threadId)
      if (shown && !threads.some((t) => t.threadId === this.threadId)) {
        this.notice = `“${shown.title}” was deleted in another tab.`
        location.hash = '#/'
      }
      this.threads = this.#overlay([...threads].sort((a, b) => b.updatedAt - a.updatedAt))
      this.#noticeQuestions()
      this.listError = ''
      void this.#checkMissing()
    } catch (err) {
      this.listError = isNetworkError(err) ? UNREACHABLE : `The thread list failed: ${describeError(err)}`
    } finally {
      this.loading = false
    }
  }

  protected override updated(): void {
    // On a phone the list or the pane shows, not both: the questions view counts as a pane.
    this.toggleAttribute('has-thread', !!this.threadId || this.questionsOpen || this.composing)
    this.toggleAttribute('inspecting', this.inspecting)
    const summary = this.threads.find((t) => t.threadId === this.threadId)
    const questions = this.threads.reduce((n, t) => n + t.openDialogs, 0)
    document.title = tabTitle(questions, this.threadId ? summary?.title || this.threadId : undefined)
  }

  /**
   * A question arrived in a thread that is not on screen (another thread, or this tab is hidden):
   * a desktop notification, when the person turned them on. The first list is the baseline.
   */
  #noticeQuestions() {
    const before = this.#questionCounts
    this.#questionCounts = new Map(this.threads.map((t) => [t.threadId, t.openDialogs]))
    if (!before || !this.notify || !notificationsOffered() || Notification.permission !== 'granted') return
    for (const t of this.threads) {
      if (t.openDialogs <= (before.get(t.threadId) ?? 0)) continue
      const onScreen = t.threadId === this.threadId && document.visibilityState === 'visible'
      if (onScreen) continue
      try {
        const n = new Notification(`A question is waiting in “${t.title || t.threadId}”`, {
          body: `${t.openDialogs} open question${t.openDialogs === 1 ? '' : 's'} · threadhost`,
          tag: `threadhost:${t.threadId}`,
        })
        n.onclick = () => {
          window.focus()
          location.hash = `#/threads/${encodeURIComponent(t.threadId)}`
          n.close()
        }
      } catch {
        // Some browsers allow notifications only from a service worker: the tab title still says it.
      }
    }
  }

  #toggleNotify = async () => {
    if (this.notify) {
      this.notify = false
      this.notifyNote = ''
      try {
        localStorage.removeItem(NOTIFY_KEY)
      } catch {}
      return
    }
    const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission()
    if (permission === 'granted') {
      this.notify = true
      this.notifyNote = ''
      try {
        localStorage.setItem(NOTIFY_KEY, '1')
      } catch {}
    } else {
      this.notifyNote = 'This browser blocks notifications from this page; allow them in its site settings to turn them on.'
    }
  }

  /** Threads the open-questions view showed since it opened: one answered stays, to say how (thread-questions). */
  #inbox = new Set<string>()

  #questions() {
    for (const t of this.threads) if (t.openDialogs > 0) this.#inbox.add(t.threadId)
    const waiting = this.threads.filter((t) => this.#inbox.has(t.threadId))
    return html`<section class="questions" aria-labelledby="questions-heading">
      <h1 id="questions-heading">Open questions</h1>
      ${waiting.length === 0
        ? html`<p>No question is waiting in any thread.</p>`
        : html`<ul>
            ${waiting.map(
              (t) => html`<li>
                <a href=${`#/threads/${encodeURIComponent(t.threadId)}`}>
                  <h2 class="q-title">${t.title || t.threadId}</h2>
                  <span class="q-count">${t.openDialogs > 0 ? `${t.openDialogs} open question${t.openDialogs === 1 ? '' : 's'}` : 'nothing waiting now'}</span>
                </a>
                <thread-questions thread-id=${t.threadId} .api=${this.api}></thread-questions>
              </li>`,
            )}
          </ul>`}
      ${notificationsOffered()
        ? html`<p class="notify">
            <button aria-pressed=${this.notify ? 'true' : 'false'} @click=${this.#toggleNotify}>
              Desktop notifications for new questions: ${this.notify ? 'on' : 'off'}
            </button>
            ${this.notifyNote ? html`<span role="status">${this.notifyNote}</span>` : nothing}
          </p>`
        : nothing}
    </section>`
  }

  /** The URL names a thread the list does not hold: asked once of the server, a 404 shows the not-found view. */
  #asked = ''
  async #checkMissing(): Promise<void> {
    const id = this.threadId
    if (!id || this.threads.some((t) => t.threadId === id)) {
      if (this.missing && this.missing !== id) this.missing = ''
      return
    }
    if (this.#asked === id) return
    this.#asked = id
    try {
      await this.api.getThread(id)
    } catch (err) {
      if (isNotFound(err) && this.threadId === id) this.missing = id
      else this.#asked = ''
    }
  }

  #notFound() {
    return html`<section class="not-found" aria-labelledby="missing-heading">
      <h1 id="missing-heading">No such thread</h1>
      <p>There is no thread “${this.missing}” here: it may have been deleted, or the link is wrong.</p>
      <p class="ways">
        <a href="#/">Back to all threads</a>
        <button class="primary" @click=${this.#onNew}>Start a new thread</button>
      </p>
    </section>`
  }

  /** The list's skip link: past the list, to the page's main content (the next Tab goes into it). */
  #skipToMain = () => {
    this.renderRoot.querySelector('main')?.focus()
  }

  override render() {
    if (this.inspecting) {
      void import('./inspector/inspector-page.js')
      return html`<main><inspector-page></inspector-page></main>`
    }
    const summary = this.threads.find((t) => t.threadId === this.threadId)
    const listIsMain = this.phone && !this.threadId && !this.questionsOpen && !this.composing
    return html`
      <thread-list
        ?is-main=${listIsMain}
        .threads=${this.threads}
        .api=${this.api}
        ?questions-open=${this.questionsOpen}
        selected-id=${this.threadId}
        ?loading=${this.loading}
        error=${this.listError}
      ></thread-list>
      <main tabindex="-1">
        ${this.phone && this.threadId ? html`<h1 class="visually-hidden">threadhost</h1>` : nothing}
        <extension-notice .extensions=${this.extensions}></extension-notice>
        ${this.questionsOpen && !this.threadId
          ? this.#questions()
          : this.composing && !this.threadId
          ? html`<new-thread-view .api=${this.api} .models=${this.models}></new-thread-view>`
          : this.threadId && this.missing === this.threadId
          ? this.#notFound()
          : this.threadId
          ? html`<thread-pane
              thread-id=${this.threadId}
              .summary=${summary}
              .parent=${summary?.parentId ? this.threads.find((t) => t.threadId === summary.parentId) : undefined}
              .models=${this.models}
              .api=${this.api}
              .reveal=${this.revealMessage || undefined}
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
    this.revealMessage = messageFromHash(location.hash)
    this.inspecting = location.hash.startsWith('#/inspect')
    this.questionsOpen = location.hash.startsWith('#/questions')
    this.composing = location.hash.startsWith('#/new')
    void this.#checkMissing()
    if (!this.questionsOpen) this.#inbox.clear()
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
    this.#noticeQuestions()
  }

  async #loadExtensions(): Promise<void> {
    try {
      this.extensions = await this.api.listExtensions()
    } catch {
      // The list's own error already says when the server cannot be reached.
    }
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

  /** The thread on screen was deleted (from its pane or the list): back to the start. Another: just gone from the list. */
  #onDeleted = (e: Event) => {
    const id = (e as CustomEvent<{ threadId?: string }>).detail?.threadId
    if (id === undefined || id === this.threadId) location.hash = '#/'
    if (id !== undefined) this.threads = this.threads.filter((t) => t.threadId !== id)
    void this.refresh()
  }

  /**
   * New thread opens the empty state (new-thread.ts) at once, in this task, so the keys typed right
   * after the click land in its composer: nothing is created until the first message is sent.
   */
  #onNew = () => {
    this.threadId = ''
    this.questionsOpen = false
    this.composing = true
    this.notice = ''
    if (location.hash !== '#/new') location.hash = '#/new'
    void this.updateComplete.then(() => this.renderRoot.querySelector<NewThreadView>('new-thread-view')?.focus())
  }

  /** The empty state's first message made the thread: it opens here, in this task, its composer next. */
  #onStarted = (e: Event) => {
    const id = (e as CustomEvent<{ threadId: string }>).detail.threadId
    this.composing = false
    this.threadId = id
    location.hash = `#/threads/${encodeURIComponent(id)}`
    void this.refresh()
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'app-shell': AppShell
  }
}
