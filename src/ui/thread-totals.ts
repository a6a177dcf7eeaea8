/**
 * What a thread has used so far, as pi's footer sums it: tokens in and out and the cost over every
 * reply, and how full the model's context window is — the last reply's tokens (what the model read
 * and wrote on its latest call) against the window. Folded from the transcript the pane already has.
 */
import type { TranscriptEntry } from '../schemas/index.js'
import { dollars, tokens } from './reply-usage.js'

export interface ThreadTotals {
  input: number
  output: number
  cost: number
  /** The latest reply's context: what it read and wrote (absent before the first reply that says). */
  contextTokens?: number
  /** The model's context window in tokens (absent: not known). */
  contextWindow?: number
}

/** From this fill on, the pane warns that the context is nearly full and offers /compact. */
export const CONTEXT_WARNING = 0.8

export function threadTotals(transcript: readonly TranscriptEntry[], contextWindow: number | undefined): ThreadTotals {
  const totals: ThreadTotals = { input: 0, output: 0, cost: 0, ...(contextWindow ? { contextWindow } : {}) }
  for (const e of transcript) {
    // After a compaction the context is its summary: how full it is is known again at the next reply.
    if (e.kind === 'notify' && e.compacted) delete totals.contextTokens
    if (e.kind !== 'assistant' || !e.usage) continue
    const u = e.usage
    totals.input += u.input + u.cacheRead + u.cacheWrite
    totals.output += u.output
    totals.cost += u.cost
    // A failed or stopped call says little about the context; pi's footer skips them too.
    if (e.stopReason === 'error' || e.stopReason === 'aborted') continue
    const context = u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite
    if (context > 0) totals.contextTokens = context
  }
  return totals
}

/** The context's fill, 0…1 (capped), when both its tokens and the window are known. */
export function contextFill(t: ThreadTotals): number | undefined {
  if (t.contextTokens === undefined || !t.contextWindow) return undefined
  return Math.min(1, t.contextTokens / t.contextWindow)
}

/** "↑12k ↓3.4k · $0.021 · 41% of 128k", as pi's footer says it; empty before any reply said what it used. */
export function totalsLine(t: ThreadTotals): string {
  if (t.input + t.output === 0 && t.cost === 0) return ''
  const parts = [`↑${tokens(t.input)} ↓${tokens(t.output)}`]
  if (t.cost > 0) parts.push(dollars(t.cost))
  const fill = contextFill(t)
  if (fill !== undefined) parts.push(`${Math.round(fill * 100)}% of ${tokens(t.contextWindow!)}`)
  return parts.join(' · ')
}
