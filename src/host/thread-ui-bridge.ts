/**
 * The UI bridge a thread's runtime is built with (pi's extension UI, `ctx.ui`): questions go to the
 * thread's dialog and ask bridges, fire-and-forget calls become facts on its feed.
 *
 * A base class of the live thread, its methods on the prototype, rather than an object of closures
 * made for every thread: pi holds the bridge for the session's life, and eleven closures with their
 * object were ≈ 0.8 KiB of every idle live thread. The runtime calls them as methods of the bridge.
 */
import type { NotifyLevel, ObservationInput, QuestionnaireQuestion, WidgetPlacement, WorkingState } from '../schemas/index.js'
import type { AskUserResult, DialogRequest, DialogResolution, TerminalRequest, UiBridge } from '../runtime/port.js'
import type { ThreadView } from '../shared/projection.js'
import type { AskBridge } from './ask-bridge.js'
import type { DialogBridge } from './dialog-bridge.js'
import type { TerminalBridge } from './terminal-bridge.js'

/** A thread title is at most this long (as a rename's). */
const MAX_TITLE = 200

/** The map already holds exactly this value for the key (undefined: the key is absent). */
function sameEntry<V>(map: Record<string, V>, key: string, value: V | undefined): boolean {
  if (!Object.hasOwn(map, key)) return value === undefined
  return value !== undefined && JSON.stringify(map[key]) === JSON.stringify(value)
}

export abstract class ThreadUiBridge implements UiBridge {
  /** The editor's text as pi's getEditorText() sees it: the latest a tab reported or an extension set. */
  #editorText = ''

  /** The thread's view now: a call that changes nothing is not shown. */
  protected abstract uiView(): ThreadView
  /** Appends a fact to the thread's feed (dropped once its release has begun). */
  protected abstract uiShow(observation: ObservationInput): void
  protected abstract uiDialogs(): DialogBridge
  protected abstract uiAsks(): AskBridge
  protected abstract uiTerminals(): TerminalBridge

  ask(request: DialogRequest): Promise<DialogResolution> {
    return this.uiDialogs().ask(request)
  }

  askUser(question: QuestionnaireQuestion, options: { signal?: AbortSignal; toolCallId?: string }): Promise<AskUserResult> {
    return this.uiAsks().askUser(question, options)
  }

  // pi's fire-and-forget calls: facts on the feed. Extensions set them from session_start too, so
  // they are taken before the runtime is attached — and dropped once its release has begun.
  notify(message: string, level: NotifyLevel): void {
    this.uiShow({ type: 'notify', message, level })
  }

  setStatus(key: string, text: string | undefined): void {
    if (!sameEntry(this.uiView().statusItems, key, text)) this.uiShow({ type: 'status-item', key, ...(text !== undefined ? { text } : {}) })
  }

  setWidget(key: string, lines: string[] | undefined, placement?: WidgetPlacement): void {
    if (!sameEntry(this.uiView().widgets, key, lines)) this.uiShow({ type: 'widget', key, ...(lines !== undefined ? { lines, ...(placement ? { placement } : {}) } : {}) })
  }

  setWorking(working: WorkingState): void {
    if (JSON.stringify(this.uiView().working) !== JSON.stringify(working)) this.uiShow({ type: 'working', ...working })
  }

  setTitle(title: string): void {
    const clean = title.replace(/\s+/g, ' ').trim().slice(0, MAX_TITLE)
    if (clean) this.uiShow({ type: 'title', title: clean })
  }

  setEditorText(text: string): void {
    this.#editorText = text
    this.uiShow({ type: 'editor-text', text })
  }

  editorText(): string {
    return this.#editorText
  }

  /** A tab's draft as the user types it; the next getEditorText() of an extension reads it. */
  reportDraft(text: string): void {
    this.#editorText = text
  }

  showTerminal(request: TerminalRequest): Promise<DialogResolution> {
    return this.uiTerminals().show(request)
  }
}
