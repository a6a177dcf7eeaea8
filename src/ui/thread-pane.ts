/**
 * One thread, composed: its header (thread-header, with thread-settings under the title row), the
 * extensions' toasts (toast-stack), the transcript, the open questions with the notes of those that
 * left, and the composer. What outlives a render is kept by controllers: the followed thread's store
 * and SSE connection (FollowController), the transcript's scroll (StickToEndController) and where the
 * focus goes as the work moves (FocusController). The pane itself sends what the person does —
 * prompts, stops, answers, renames, forks — and hands the store's one-off news to the composer and the
 * header.
 *
 * Escape in the composer or the transcript stops the run, as in pi's terminal UI.
 */
import { LitElement, html, nothing } from 'lit'
import { customElement, property, query, state } from 'lit/decorators.js'
import { repeat } from 'lit/directives/repeat.js'
import type { CommandInfo, DeliverAs, DialogAnswerBody, ModelList, PromptImage, ThreadSummary, UpdateThreadBody, WidgetPlacement } from '../schemas/index.js'
import { commandFeedback } from './command-feedback.js'
import { api as defaultApi, describeError, isWorktreeHeld, type Api } from './api.js'
import { handBack } from './hand-back.js'
import type { ComposerBox } from './composer-box.js'
import type { DialogCard } from './dialog-card.js'
import type { EventSourceFactory } from './follow-client.js'
import { FollowController } from './controllers/follow-controller.js'
import { StickToEndController } from './controllers/stick-to-end-controller.js'
import { FocusController } from './controllers/focus-controller.js'
import type { ThreadStore, ThreadStoreContext } from './thread-store.js'
import './composer-box.js'
import './dialog-card.js'
import { ansiBlock } from './ansi-block.js'
import { TAB_ID } from './terminal-view.js'
import './toast-stack.js'
import './thread-header.js'
import './thread-settings.js'
import './keyboard-help.js'
import './transcript-view.js'
import './changes-view.js'
import type { ForkRequestDetail } from './transcript-view.js'
import type { EditRequestDetail, VersionRequestDetail } from './message-versions.js'
import { deliver, handOff, takeHandoff, type ForkHandoff } from './fork-handoff.js'
import { threadPaneStyles } from './thread-pane.styles.js'
import { promptTitle, UNTITLED } from '../shared/thread-title.js'
import { paneAction, type PaneAction } from './pane-keys.js'
import { threadTotals } from './thread-totals.js'

@customElement('thread-pane')
export class ThreadPane extends LitElement {
  @property({ attribute: 'thread-id' }) threadId = ''
  @property({ attribute: false }) summary: ThreadSummary | undefined
  /** The thread this one was forked from, when the list knows it (absent: deleted, or not loaded yet). */
  @property({ attribute: false }) parent: ThreadSummary | undefined
  @property({ attribute: false }) api: Api = defaultApi
  @property({ attribute: false }) eventSource: EventSourceFactory | undefined
  /** `GET /api/models`, from the page. Without it the header shows the model's name, no picker. */
  @property({ attribute: false }) models: ModelList | undefined
  /** A message to bring into view once the transcript shows it (a search hit opened it). */
  @property({ attribute: false }) reveal: string | undefined
  /** The thread and message last brought into view: each is brought into view once. */
  #revealed = ''

  @state() private headerError = ''
  /** A fork (Edit or Regenerate) is on its way: one at a time. */
  @state() private forking = false
  /** This thread's `/` commands, asked by the composer when a draft starts with `/` (once per thread). */
  #loadCommands: () => Promise<CommandInfo[]> = async () => []
  @query('composer-box') private composer!: ComposerBox
  @query('.scroll') private scroller!: HTMLElement

  /** The thread this pane shows, followed while the pane is on the page. */
  readonly following = new FollowController(this, {
    threadId: () => this.threadId,
    api: () => this.api,
    eventSource: () => this.eventSource,
    attached: (store, id) => this.#opened(store, id),
    beforeChange: () => this.#atEnd.remember(),
  })
  /** The transcript follows its end unless the person scrolled up. */
  readonly #atEnd = new StickToEndController(this, {
    scroller: () => this.scroller,
    content: () => this.renderRoot.querySelector('transcript-view'),
  })
  readonly #focus = new FocusController(this, {
    composer: () => this.composer,
    cards: () => [...this.renderRoot.querySelectorAll<DialogCard>('dialog-card')],
    openDialogs: () => this.ctx?.view.openDialogs.map((d) => d.id),
  })

  static override styles = threadPaneStyles

  private get ctx(): ThreadStoreContext | undefined {
    return this.following.ctx
  }

  private get store(): ThreadStore | undefined {
    return this.following.store
  }

  /** A thread was opened here: nothing of the one before carries over. Returns what to undo when it closes. */
  #opened(store: ThreadStore, id: string): () => void {
    this.#atEnd.reset()
    this.headerError = ''
    this.#focus.opened()
    this.forking = false
    let commands: Promise<CommandInfo[]> | undefined
    this.#loadCommands = () => {
      commands ??= this.api.listCommands(id).catch((err: unknown) => {
        commands = undefined
        throw err
      })
      return commands
    }
    const handoff = takeHandoff(id)
    if (handoff) void this.#takeHandoff(id, handoff)
    // Said once by the store: handed on to the composer and the header.
    const emitted = [
      store.on('returned', (e) =>
        this.#withComposer(store, (c) => {
          c.appendToDraft(e.texts)
          if (e.images) c.attach(e.images)
        }),
      ),
      store.on('editorText', (e) => this.#withComposer(store, (c) => c.offerText(e.text))),
    ]
    return () => emitted.forEach((sub) => sub.unsubscribe())
  }

  /** The composer of a thread just forked gets its prompt, to edit and send. */
  async #takeHandoff(id: string, handoff: ForkHandoff) {
    await this.updateComplete
    if (id === this.threadId && this.composer) await deliver(this.composer, handoff)
  }

  /** Regenerate on a reply: its prompt sent again in place; Fork: a new thread forked before the prompt, opened here. */
  #onFork = async (e: Event) => {
    const { messageId, mode } = (e as CustomEvent<ForkRequestDetail>).detail
    if (mode === 'regenerate') return this.#newVersion({ messageId })
    if (this.forking) return
    this.forking = true
    const from = this.threadId
    try {
      const receipt = await this.api.forkThread(from, messageId)
      handOff(receipt.thread.threadId, { text: receipt.prompt })
      this.dispatchEvent(new CustomEvent('thread-changed', { bubbles: true, composed: true, detail: { threadId: receipt.thread.threadId, summary: receipt.thread } }))
      location.hash = `#/threads/${encodeURIComponent(receipt.thread.threadId)}`
    } catch (err) {
      if (from === this.threadId) this.headerError = `Could not fork a new thread: ${(err as Error).message}`
    } finally {
      if (from === this.threadId) this.forking = false
    }
  }

  /** An Edit or a Regenerate, in place: a new version of the prompt (message-versions.ts). */
  #newVersion = async (detail: EditRequestDetail) => {
    const id = this.threadId
    try {
      await this.api.editMessage(id, detail.messageId, detail.text)
    } catch (err) {
      if (id === this.threadId) this.headerError = `Could not ${detail.text === undefined ? 'regenerate' : 'send the edit'}: ${(err as Error).message}`
    }
  }

  #onEdit = (e: Event) => void this.#newVersion((e as CustomEvent<EditRequestDetail>).detail)

  /** Another version of a prompt, shown in place. */
  #onVersion = async (e: Event) => {
    const id = this.threadId
    try {
      await this.api.switchVersion(id, (e as CustomEvent<VersionRequestDetail>).detail.messageId)
    } catch (err) {
      if (id === this.threadId) this.headerError = `Could not show that version: ${(err as Error).message}`
    }
  }

  #dismissToast = (id: string) => this.store?.trigger.toastDismissed({ id })

  #jumpToLatest = () => {
    this.#atEnd.jumpToEnd()
    this.composer?.focus()
  }

  /** The composer takes an example (the empty thread's buttons). */
  #onCompose = (e: Event) => {
    const { text, images } = (e as CustomEvent<{ text: string; images?: PromptImage[] }>).detail ?? {}
    if (text) this.composer?.fill(text)
    // A prompt handed back (e.g. after a restart) comes back whole: its images beside its text.
    if (text && images?.length) this.composer?.attach(images)
  }

  #lastStatus = ''

  /** Tell the page what the follow knows first, so the list is live for the followed thread. */
  #announceStatus() {
    const v = this.ctx?.view
    if (!v || !this.ctx?.synced) return
    const detail = { threadId: this.threadId, ...v.status, openDialogs: v.openDialogs.length }
    const key = JSON.stringify(detail)
    if (key === this.#lastStatus) return
    this.#lastStatus = key
    this.dispatchEvent(new CustomEvent('thread-status', { bubbles: true, composed: true, detail }))
  }

  protected override updated(): void {
    this.#announceStatus()
    this.#revealPending()
  }

  #revealPending() {
    const want = this.reveal
    const key = `${this.threadId}\u0000${want}`
    if (!want || this.#revealed === key || !this.ctx?.synced) return
    const transcript = this.renderRoot.querySelector('transcript-view')
    void transcript?.updateComplete.then(() => {
      if (this.#revealed === key || !transcript.reveal(want)) return
      this.#revealed = key
      this.#atEnd.release()
    })
  }

  /**
   * Texts of ours that will never run (withdrawn by another tab's stop, or refused) go back into the
   * draft; an extension's editor text goes in only when the draft is empty. Once the composer is
   * rendered, and only while this store is still the one shown.
   */
  #withComposer(store: ThreadStore, fn: (composer: ComposerBox) => void) {
    void this.updateComplete.then(() => {
      if (this.store === store && this.composer) fn(this.composer)
    })
  }

  /** pi's keys for the pane (pane-keys.ts): Ctrl+O tool output, Ctrl+L the model picker, Shift+Tab (from the composer) the thinking level. */
  #onPaneKey = (e: KeyboardEvent) => {
    this.#onEscape(e)
    const action = e.defaultPrevented ? undefined : paneAction(e)
    if (action && this.#act(action)) e.preventDefault()
  }

  #onPaneAction = (e: Event) => {
    if (this.#act((e as CustomEvent<PaneAction>).detail)) e.preventDefault()
  }

  #act(action: PaneAction): boolean {
    const root = this.renderRoot
    if (action === 'toggle-tools') {
      root.querySelector('transcript-view')?.toggleTools()
      return true
    }
    const settings = root.querySelector('thread-settings')
    return action === 'pick-model' ? (settings?.pickModel() ?? false) : (settings?.cycleThinking() ?? false)
  }

  #onEscape = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing) return
    // A card's Escape is the card's (it cancels the question, or asks first).
    if (e.composedPath().some((n) => (n as Element).localName === 'dialog-card')) return
    if (!this.ctx?.view.status.busy || !this.composer) return
    e.preventDefault()
    void this.composer.stopRun()
  }

  get threadTitle(): string {
    // An extension's live title (a spinner, a phase) shows while the thread is live; it renames nothing.
    const live = this.ctx?.view.liveTitle
    if (live) return live
    const title = this.summary?.title
    if (title && title !== UNTITLED) return title
    // The list's summary may predate the first prompt; the transcript here does not.
    const first = this.ctx?.view.transcript.find((e) => e.kind === 'user')
    return first?.kind === 'user' && first.text.trim() ? promptTitle(first.text) : title || UNTITLED
  }

  override render() {
    const ctx = this.ctx
    if (!this.threadId || !ctx) return nothing
    const view = ctx.view
    return html`
      <thread-header thread-id=${this.threadId} heading=${this.threadTitle} .summary=${this.summary} .parent=${this.parent}
        connection=${this.following.absent && !ctx.synced ? 'new' : this.following.connection} error=${this.headerError}
        .rename=${this.#rename} .deleteThread=${this.#delete}
        .totals=${threadTotals(view.transcript, this.models?.models.find((m) => m.name === this.summary?.model)?.contextWindow)}
        .compact=${this.#compact} ?busy=${view.status.busy}>
        <thread-settings .summary=${this.summary} .models=${this.models} .configure=${this.#configure}
          ?busy=${view.status.busy || (!ctx.synced && !!this.summary?.busy)}>
          <keyboard-help .loadCommands=${this.#loadCommands} .runShortcut=${this.#runShortcut}></keyboard-help>
        </thread-settings>
      </thread-header>
      <toast-stack .toasts=${ctx.toasts} .dismiss=${this.#dismissToast}></toast-stack>
      <div class="scroll-area">
      <div class="scroll" tabindex="0" @scroll=${this.#atEnd.onScroll} @keydown=${this.#onPaneKey}>
        <div class="column">
          <transcript-view .entries=${view.transcript} .pending=${ctx.pending} ?busy=${view.status.busy}
            ?waiting=${view.openDialogs.length > 0} .working=${view.working}
            ?offline=${ctx.synced && !this.following.live} .rejectedTexts=${ctx.rejectedTexts}
            .arrivedAt=${ctx.arrivedAt} model=${this.summary?.model ?? ''} @compose=${this.#onCompose}
            ?forkable=${ctx.synced && this.following.live && !this.forking} @fork=${this.#onFork} @edit=${this.#onEdit} @version=${this.#onVersion}
          ></transcript-view>
          <changes-view thread-id=${this.threadId} .changes=${view.changes} ?busy=${view.status.busy} .api=${this.api}></changes-view>
          <div class="dialogs">
            ${repeat(
              view.openDialogs,
              (d) => d.id,
              (d) => html`<dialog-card .dialog=${d} .submit=${this.#answer} .keys=${this.#keys} ?connected=${this.following.live}></dialog-card>`,
            )}
            ${repeat(
              ctx.notes,
              (n) => `note:${n.id}`,
              (n) => html`<div class="note" role="status" data-dialog=${n.id}>
                <span><strong>${n.title}</strong> — ${n.reason}</span>
                <button class="ghost" aria-label="Dismiss" @click=${() => this.store?.trigger.noteDismissed({ id: n.id })}>
                  ×
                </button>
              </div>`,
            )}
          </div>
        </div>
      </div>
      ${this.#atEnd.scrolledUp
        ? html`<button class="jump" @click=${this.#jumpToLatest}>
            ${view.status.busy ? 'Jump to latest ↓' : 'Scroll to bottom ↓'}
          </button>`
        : nothing}
      </div>
      <div class="column foot" style="width:100%;box-sizing:border-box" @keydown=${this.#onPaneKey} @pane-action=${this.#onPaneAction}>
        ${this.#surface(view.widgets, view.statusItems, view.widgetPlacements, 'aboveEditor')}
        ${this.summary?.unavailable ? nothing : html`<composer-box
          ?busy=${view.status.busy}
          .queue=${view.queue}
          .send=${this.#send}
          .stop=${this.#stop}
          .takeQueue=${this.#takeQueue}
          .draftChanged=${this.#reportDraft}
          .loadCommands=${this.#loadCommands}
          .threadId=${this.threadId}
          .history=${view.transcript.flatMap((e) => (e.kind === 'user' ? [e.text] : []))}
          .imagesAllowed=${this.models?.models.find((m) => m.name === this.summary?.model)?.images}
          .modelName=${this.summary?.model ?? ''}
          .runShortcut=${this.#runShortcut}
          ?connected=${this.following.live}
        ></composer-box>`}
        ${this.#surface(view.widgets, {}, view.widgetPlacements, 'belowEditor')}
      </div>
    `
  }

  /**
   * Extensions' widgets (blocks of lines) and status items (chips) on one side of the composer:
   * above it unless a widget asked for `belowEditor` (pi's placement).
   */
  #surface(
    widgets: Record<string, string[]>,
    statusItems: Record<string, string>,
    placements: Record<string, WidgetPlacement> | undefined,
    side: WidgetPlacement,
  ) {
    const blocks = Object.entries(widgets).filter(([key]) => (placements?.[key] ?? 'aboveEditor') === side)
    const chips = Object.entries(statusItems).filter(([, text]) => text !== '')
    return html`${blocks.length
      ? html`<div class="widgets ${side === 'belowEditor' ? 'below' : ''}" aria-label=${side === 'belowEditor' ? 'Extension widgets below the editor' : 'Extension widgets'}>
          ${blocks.map(([key, lines]) => html`<pre class="widget" data-widget=${key}>${ansiBlock(lines)}</pre>`)}
        </div>`
      : nothing}
    ${chips.length
      ? html`<ul class="chips" aria-label="Extension status">
          ${chips.map(([key, text]) => html`<li data-status=${key} title=${text}>${text}</li>`)}
        </ul>`
      : nothing}`
  }

  /** A model or thinking level for the runs to come (thread-settings says what went wrong, if anything). */
  #configure = async (change: UpdateThreadBody) => {
    const id = this.threadId
    const summary = await this.api.updateThread(id, change)
    if (id !== this.threadId) return
    this.summary = summary
    this.#changed('changed', summary)
  }

  #changed(kind: 'changed' | 'deleted', summary?: ThreadSummary) {
    const detail = { threadId: this.threadId, ...(summary ? { summary } : {}) }
    this.dispatchEvent(new CustomEvent(`thread-${kind}`, { bubbles: true, composed: true, detail }))
  }

  #rename = async (title: string) => {
    try {
      this.summary = await this.api.renameThread(this.threadId, title)
      this.headerError = ''
      this.#changed('changed', this.summary)
    } catch (err) {
      this.headerError = `Could not rename: ${describeError(err)}`
      throw err
    }
  }

  #delete = async () => {
    try {
      await this.api.deleteThread(this.threadId).catch((err: unknown) => {
        // The thread's own worktree holds work: the server's words say what; discarded only when confirmed.
        if (!isWorktreeHeld(err) || !globalThis.confirm(`${err.message}\n\nDelete the thread and discard its worktree?`)) throw err
        return this.api.deleteThread(this.threadId, true)
      })
      this.#changed('deleted')
    } catch (err) {
      this.headerError = `Could not delete: ${describeError(err)}`
      throw err
    }
  }

  /** The header's "Compact now": threadhost's /compact, as if typed. */
  #compact = async () => {
    try {
      await this.#send('/compact', undefined)
    } catch (err) {
      this.headerError = `Could not compact: ${(err as Error).message}`
      throw err
    }
  }

  #runShortcut = async (key: string) => {
    await this.api.runShortcut(this.threadId, key)
  }

  #send = async (text: string, deliverAs: DeliverAs | undefined, images?: PromptImage[]) => {
    // A steer or follow-up is meant for the run this tab shows: the server refuses it (409 stale-run) if another is current.
    const status = this.ctx?.view.status
    const run = deliverAs && status?.busy ? status.run : undefined
    const receipt = await (images?.length
      ? this.api.prompt(this.threadId, text, deliverAs, run, images)
      : run === undefined
        ? this.api.prompt(this.threadId, text, deliverAs)
        : this.api.prompt(this.threadId, text, deliverAs, run))
    if ('command' in receipt) {
      // One of threadhost's own commands: the thread changed (or, for /new, another was made); no run started.
      if (receipt.command === 'new') location.hash = `#/threads/${encodeURIComponent(receipt.thread.threadId)}`
      else this.store?.trigger.noted({ note: { id: `command:${Date.now()}`, ...commandFeedback(receipt), at: Date.now() } })
      this.#changed('changed')
      return
    }
    const prompt = {
      messageId: receipt.messageId,
      text,
      run: receipt.run,
      queued: receipt.queued,
      ...(deliverAs ? { deliverAs } : {}),
      ...(images?.length ? { images } : {}),
    }
    this.store?.trigger.promptSent({ prompt })
    this.#atEnd.stick()
    // The first prompt creates an unknown thread: the follow that found nothing may resume now.
    this.following.retryNow()
    this.#changed('changed')
  }

  #reportDraft = (text: string) => {
    this.api.reportDraft(this.threadId, text).catch(() => {}) // a cold thread has no editor to read
  }

  /**
   * Stop: the server hands back every text that was waiting — this tab's and any other tab's (that
   * tab puts its own back too, when it sees its run settle with them unclaimed).
   */
  #stop = (): Promise<string[]> => this.#handBack((run) => this.api.abort(this.threadId, run))

  /** Alt+Up (pi's): the waiting prompts come back as Stop hands them back, and the run goes on. */
  #takeQueue = (): Promise<string[]> => this.#handBack((run) => this.api.takeQueue(this.threadId, run))

  #handBack = (ask: (run: number | undefined) => Promise<{ restored: string[] }>) =>
    handBack(this.store, this.ctx?.view.status, ask, (images) => this.composer?.attach(images))

  /** A key for a terminal component: typing into it is this tab answering it (its settle note says so). */
  #keys = async (dialogId: string, data: string) => {
    this.store?.trigger.answering({ id: dialogId })
    await this.api.terminalInput(this.threadId, dialogId, data, TAB_ID)
  }

  #answer = (body: DialogAnswerBody) => this.following.answer(this.api, this.threadId, body)
}

declare global {
  interface HTMLElementTagNameMap {
    'thread-pane': ThreadPane
  }
}
