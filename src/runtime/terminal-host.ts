/**
 * Hosts one pi terminal component (`ctx.ui.custom()`, a widget, header or footer factory) with no
 * terminal: a stand-in for pi-tui's `TUI` that the component is built with, which renders it to
 * lines at a fixed size and hands each screen on.
 *
 * Renders are coalesced to one per event-loop turn: `requestRender` (the component's own, its
 * editor's, a game's timer) and every input only mark the screen dirty, and one `setImmediate`
 * renders it — so a paste of many keys, or a key whose handler requests three renders, is one frame.
 * pi-tui does the terminal work: width measurement and truncation (`visibleWidth`,
 * `truncateToWidth`), its cursor markers (`CURSOR_MARKER`, `renderFakeCursor`), focus
 * (`isFocusable`) and key parsing in the components themselves (`matchesKey` on the bytes given).
 */
import {
  CURSOR_MARKER,
  isFocusable,
  renderFakeCursor,
  truncateToWidth,
  visibleWidth,
  type Component,
  type OverlayHandle,
  type TUI,
  type TuiInputListener,
} from '@earendil-works/pi-tui'
import { MAX_TERMINAL_LINES, type TerminalCursor, type TerminalScreen } from '../schemas/index.js'

export type HostedComponent = Component & { dispose?(): void }

/** What `tui.stop()` throws: a browser tab has no terminal to hand a program. */
export const TERMINAL_HANDOVER_REFUSED = 'a program that takes over the terminal (tui.stop()) cannot run here: threadhost shows components in browser tabs, not in a terminal'

export interface TerminalSize {
  cols: number
  rows: number
}

/** pi-tui's fake-cursor markers, taken from pi-tui itself (an empty fake cursor is start + end). */
const [FAKE_CURSOR_START, FAKE_CURSOR_END] = (() => {
  const empty = renderFakeCursor('')
  const end = empty.lastIndexOf('\x1b')
  return [empty.slice(0, end), empty.slice(end)]
})()

/**
 * What a terminal shows for these rendered lines: the cursor marker found and removed, fake cursors
 * drawn in reverse video (as pi's TUI does without a hardware cursor), each line cut to `cols`
 * cells and at most MAX_TERMINAL_LINES lines.
 */
export function screenOf(rendered: readonly string[], size: TerminalSize): TerminalScreen {
  let cursor: TerminalCursor | undefined
  const lines = rendered.slice(0, MAX_TERMINAL_LINES).map((raw, row) => {
    let line = String(raw)
    const at = line.indexOf(CURSOR_MARKER)
    if (at >= 0) {
      cursor ??= { row, col: visibleWidth(line.slice(0, at)) }
      line = line.split(CURSOR_MARKER).join('')
    }
    if (line.includes(FAKE_CURSOR_START)) line = line.replaceAll(FAKE_CURSOR_START, '\x1b[7m').replaceAll(FAKE_CURSOR_END, '\x1b[27m')
    return visibleWidth(line) > size.cols ? truncateToWidth(line, size.cols, '') : line
  })
  return { cols: size.cols, rows: size.rows, lines, ...(cursor ? { cursor } : {}) }
}

export interface ComponentHostOptions {
  size: TerminalSize
  /** A new screen (called at most once per event-loop turn, and only while the host is not disposed). */
  onScreen: (screen: TerminalScreen) => void
  /** A component that throws while rendering or taking a key. */
  onError?: (error: unknown) => void
}

export class ComponentHost {
  readonly tui: TUI
  readonly size: TerminalSize
  #root?: HostedComponent
  /** Overlays the component opened on itself (`tui.showOverlay`), topmost last: the topmost is drawn. */
  readonly #overlays: HostedComponent[] = []
  #focused: Component | null = null
  readonly #listeners = new Set<TuiInputListener>()
  /** Keys that came before the component was built (an async factory): given to it once it is. */
  readonly #early: string[] = []
  #scheduled = false
  #disposed = false
  readonly #options: ComponentHostOptions

  constructor(options: ComponentHostOptions) {
    this.#options = options
    this.size = options.size
    this.tui = standInTui(this)
  }

  get disposed(): boolean {
    return this.#disposed
  }

  /** The component is built: it takes the focus (as pi's `custom()` gives it) and is drawn. */
  mount(component: HostedComponent): void {
    if (this.#disposed) return void component.dispose?.()
    this.#root = component
    this.focus(component)
    for (const data of this.#early.splice(0)) this.input(data)
    this.requestRender()
  }

  /** A key or paste, as terminal bytes: the input listeners first, then the focused component. */
  input(data: string): void {
    if (this.#disposed) return
    if (!this.#root) return void this.#early.push(data)
    let bytes = data
    for (const listener of this.#listeners) {
      const result = listener(bytes)
      if (result?.consume) return this.requestRender()
      if (result?.data !== undefined) bytes = result.data
    }
    try {
      this.#focused?.handleInput?.(bytes)
    } catch (error) {
      this.#options.onError?.(error)
    }
    this.requestRender()
  }

  /** Marks the screen dirty; one render follows in this event-loop turn's check phase. */
  requestRender(): void {
    if (this.#scheduled || this.#disposed) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      if (!this.#disposed && this.#root) this.#options.onScreen(this.render())
    })
  }

  /** The screen now (the topmost overlay if any, else the component). */
  render(): TerminalScreen {
    const shown = this.#overlays.at(-1) ?? this.#root
    let lines: readonly string[] = []
    try {
      lines = shown?.render(this.size.cols) ?? []
    } catch (error) {
      this.#options.onError?.(error)
    }
    return screenOf(lines, this.size)
  }

  focus(component: Component | null): void {
    if (this.#focused && isFocusable(this.#focused)) this.#focused.focused = false
    this.#focused = component
    if (component && isFocusable(component)) component.focused = true
  }

  showOverlay(component: HostedComponent): OverlayHandle {
    this.#overlays.push(component)
    this.focus(component)
    this.requestRender()
    let hidden = false
    const hide = () => {
      const at = this.#overlays.indexOf(component)
      if (at >= 0) this.#overlays.splice(at, 1)
      if (this.#focused === component) this.focus(this.#overlays.at(-1) ?? this.#root ?? null)
      this.requestRender()
    }
    return {
      hide,
      setHidden: (h: boolean) => {
        hidden = h
        if (h) hide()
        else if (!this.#overlays.includes(component)) this.showOverlay(component)
      },
      isHidden: () => hidden,
      focus: () => this.focus(component),
      unfocus: () => this.focus(this.#root ?? null),
      isFocused: () => this.#focused === component,
      getBounds: () => undefined,
    }
  }

  hideOverlay(): void {
    const top = this.#overlays.pop()
    if (top && this.#focused === top) this.focus(this.#overlays.at(-1) ?? this.#root ?? null)
    this.requestRender()
  }

  hasOverlay(): boolean {
    return this.#overlays.length > 0
  }

  addInputListener(listener: TuiInputListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  removeInputListener(listener: TuiInputListener): void {
    this.#listeners.delete(listener)
  }

  /** The component's question ended: no more renders, and the component lets go of its timers. */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    for (const c of [...this.#overlays, this.#root]) {
      try {
        c?.dispose?.()
      } catch (error) {
        this.#options.onError?.(error)
      }
    }
  }
}

/**
 * pi-tui's `TUI` as a component sees it: the size of the shared view, render requests, focus,
 * overlays and input listeners go to the host; what only a real terminal can do (write bytes, raw
 * mode, a colour query, suspending) does nothing.
 */
function standInTui(host: ComponentHost): TUI {
  const nothing = () => {}
  const terminal = {
    get columns() {
      return host.size.cols
    },
    get rows() {
      return host.size.rows
    },
    kittyProtocolActive: false,
    start: nothing,
    stop: nothing,
    drainInput: async () => {},
    write: nothing,
    moveBy: nothing,
    hideCursor: nothing,
    showCursor: nothing,
    clearLine: nothing,
    clearFromCursor: nothing,
    clearScreen: nothing,
    setTitle: nothing,
    setProgress: nothing,
    setProgramStatus: nothing,
  }
  const tui = {
    mode: 'regular',
    children: [] as Component[],
    terminal,
    fullRedraws: 0,
    render: () => host.render().lines,
    invalidate: nothing,
    handleInput: (data: string) => host.input(data),
    addChild: nothing,
    removeChild: nothing,
    clear: nothing,
    getShowHardwareCursor: () => false,
    setShowHardwareCursor: nothing,
    getClearOnShrink: () => false,
    setClearOnShrink: nothing,
    setFocus: (component: Component | null) => host.focus(component),
    showOverlay: (component: HostedComponent) => host.showOverlay(component),
    hideOverlay: () => host.hideOverlay(),
    hasOverlay: () => host.hasOverlay(),
    start: nothing,
    // An extension stops the TUI to hand the process's own terminal to a program (interactive-shell.ts
    // runs `vim` with inherited stdio): here that terminal is the server's, and the program would
    // block every thread. Refused, so the component fails and its question is cancelled.
    stop: () => {
      throw new Error(TERMINAL_HANDOVER_REFUSED)
    },
    renderNow: () => host.requestRender(),
    requestRender: () => host.requestRender(),
    addInputListener: (listener: TuiInputListener) => host.addInputListener(listener),
    removeInputListener: (listener: TuiInputListener) => host.removeInputListener(listener),
    onTerminalColorSchemeChange: () => nothing,
    setTerminalColorSchemeNotifications: nothing,
    setSuspendSignalHandler: nothing,
    queryTerminalColors: async () => ({}),
  }
  return tui as unknown as TUI
}
