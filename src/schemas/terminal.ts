/**
 * A terminal component on the wire (`ctx.ui.custom()`): its screen, and the frames that change it.
 *
 * The host renders the component to ANSI-styled lines at a fixed size; a follower gets the whole
 * screen once (in the snapshot's open question) and then frames that replace only the lines that
 * changed, so a 60-line component redrawing on every keystroke sends the line or two it changed,
 * never the screen. Shared by the server, the projection and the browser's terminal view.
 */
import { Type, type Static } from 'typebox'

/** The size a component is rendered at unless it asks otherwise: a classic terminal's width. */
export const TERMINAL_COLS = 80
export const TERMINAL_ROWS = 24
/** A component may render more lines than the screen holds (pi scrolls); the host keeps at most these. */
export const MAX_TERMINAL_LINES = 500
/** One input is a key or a paste: longer is refused (422). */
export const MAX_TERMINAL_INPUT = 4096
/** How long the tab that typed keeps the input for itself (the others watch). */
export const TERMINAL_LEASE_MS = 3000

export const TerminalCursor = Type.Object({ row: Type.Integer({ minimum: 0 }), col: Type.Integer({ minimum: 0 }) })
export type TerminalCursor = Static<typeof TerminalCursor>

export const TerminalScreen = Type.Object({
  cols: Type.Integer({ minimum: 1 }),
  rows: Type.Integer({ minimum: 1 }),
  /** ANSI-styled lines, each at most `cols` cells wide. */
  lines: Type.Array(Type.String()),
  /** Where the focused component put its cursor; absent: no cursor shown. */
  cursor: Type.Optional(TerminalCursor),
})
export type TerminalScreen = Static<typeof TerminalScreen>

/** Lines `at`, `at+1` … replaced by `lines`. */
export const TerminalChange = Type.Object({ at: Type.Integer({ minimum: 0 }), lines: Type.Array(Type.String()) })
export type TerminalChange = Static<typeof TerminalChange>

/** What a frame carries besides its dialog id: the new size and cursor, the line count, the changed runs. */
export const TerminalFrame = Type.Object({
  cols: Type.Integer({ minimum: 1 }),
  rows: Type.Integer({ minimum: 1 }),
  /** The screen's line count after the frame (lines past it are dropped). */
  length: Type.Integer({ minimum: 0 }),
  changes: Type.Array(TerminalChange),
  cursor: Type.Optional(TerminalCursor),
})
export type TerminalFrame = Static<typeof TerminalFrame>

/** Which tab types into a component, and until when (epoch ms) the others only watch. */
export const TerminalTypist = Type.Object({ tab: Type.String(), until: Type.Number() })
export type TerminalTypist = Static<typeof TerminalTypist>

/** `POST …/dialog/:dialogId/input`: one key or paste as terminal bytes, from the tab `tab`. Checked by the host (422), not by the parser. */
export const TerminalInputBody = Type.Object({
  data: Type.Unknown(),
  tab: Type.Optional(Type.String({ maxLength: 200 })),
})
export type TerminalInputBody = Static<typeof TerminalInputBody>

/** Why an input is refused before the component sees it; undefined when it is one. */
export function terminalInputRefusal(data: unknown): string | undefined {
  if (typeof data !== 'string') return 'data must be a string of terminal bytes'
  if (data.length === 0) return 'data is empty'
  if (data.length > MAX_TERMINAL_INPUT) return `data is over ${MAX_TERMINAL_INPUT} characters`
  return undefined
}
