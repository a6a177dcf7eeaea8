/**
 * What a thread's view still shows open when nothing is left to close it — its questions, its run —
 * settled as a stopped thread's are: every open question `dialog-settled aborted`, the run
 * `settled {aborted}`, the thread no longer live. For a thread whose machine is gone: another node
 * lost it (cluster-node.ts), or it failed here (live-thread.ts). Prompts are the caller's: only it
 * knows which were accepted and never run.
 */
import type { ObservationInput } from '../schemas/index.js'
import type { QueuedPrompt } from '../runtime/port.js'
import type { ThreadView } from '../shared/projection.js'

export function openEnds(view: ThreadView): ObservationInput[] {
  const settle: ObservationInput[] = view.openDialogs.map((dialog) => ({ type: 'dialog-settled', id: dialog.id, outcome: 'aborted' }))
  const { live, busy, run } = view.status
  if (busy) settle.push({ type: 'settled', run, aborted: true })
  if (busy || live) settle.push({ type: 'status', live: false, busy: false, run })
  return settle
}

/**
 * A thread whose machine failed (live-thread.ts): the prompts it was carrying into a run pi never got
 * handed back, the failure said, then its open ends — all but a run the failing step had settled already
 * (its `settled` went out; the view stays busy until a `status`).
 */
export function failedEnds(view: ThreadView, failure: { reason: string; message: string; carried: QueuedPrompt[]; settledRun?: number }): ObservationInput[] {
  const { reason, message, carried, settledRun } = failure
  const handedBack: ObservationInput[] = carried.map((p) => ({ type: 'prompt-rejected', messageId: p.messageId, reason, text: p.text, ...(p.images?.length ? { images: p.images } : {}) }))
  const { status } = view
  const ends = openEnds(status.busy && settledRun === status.run ? { ...view, status: { ...status, busy: false } } : view)
  return [...handedBack, { type: 'failure', message }, ...ends]
}
