/**
 * A terminal component's screen, kept by frames: `diffScreen` makes the frame that turns one screen
 * into the next (the runs of lines that changed), `applyTerminalFrame` applies it. The host diffs,
 * the projection applies (on both sides), so a follower's screen equals the host's by construction.
 * Pure and browser-safe.
 */
import type { TerminalChange, TerminalFrame, TerminalScreen } from '../schemas/index.js'

/** The frame from `before` (none: an empty screen) to `after`: only the lines that differ, in runs. */
export function diffScreen(before: TerminalScreen | undefined, after: TerminalScreen): TerminalFrame {
  const old = before?.lines ?? []
  const changes: TerminalChange[] = []
  let run: TerminalChange | undefined
  for (let i = 0; i < after.lines.length; i++) {
    if (i < old.length && old[i] === after.lines[i]) {
      run = undefined
      continue
    }
    if (!run) changes.push((run = { at: i, lines: [] }))
    run.lines.push(after.lines[i])
  }
  return {
    cols: after.cols,
    rows: after.rows,
    length: after.lines.length,
    changes,
    ...(after.cursor ? { cursor: after.cursor } : {}),
  }
}

/** The screen after `frame`; `screen` is never mutated. */
export function applyTerminalFrame(screen: TerminalScreen | undefined, frame: TerminalFrame): TerminalScreen {
  const lines = (screen?.lines ?? []).slice(0, frame.length)
  while (lines.length < frame.length) lines.push('')
  for (const change of frame.changes) {
    for (let k = 0; k < change.lines.length && change.at + k < frame.length; k++) lines[change.at + k] = change.lines[k]
  }
  return { cols: frame.cols, rows: frame.rows, lines, ...(frame.cursor ? { cursor: frame.cursor } : {}) }
}

/** Whether a frame changes nothing a follower would see (no line, same size and cursor). */
export function isEmptyFrame(before: TerminalScreen | undefined, frame: TerminalFrame): boolean {
  if (!before || frame.changes.length > 0) return false
  const c = before.cursor
  return (
    before.cols === frame.cols &&
    before.rows === frame.rows &&
    before.lines.length === frame.length &&
    c?.row === frame.cursor?.row &&
    c?.col === frame.cursor?.col
  )
}
