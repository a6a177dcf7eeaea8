/**
 * What a checkpoint of a thread's log holds (thread-mirror.ts keeps and restores it): the mirror as it
 * stood once it had folded the records up to the checkpoint's position, in a numbered format, and how a
 * node reads one — checked for what the fold goes on from, so a damaged or foreign one is refused whole.
 */
import type { ThreadView } from '../../shared/projection.js'

/** A keyed prompt's admission as the log holds it: the receipt its 202 carried. */
export interface KeyedAdmission {
  messageId: string
  fingerprint: string
  run: number
  queued: boolean
}

/**
 * What a checkpoint's state is, as a number: raised by a change to the fold (src/shared/projection.ts)
 * or to what `MirrorState` holds, so that a checkpoint made by another version is passed over. Nodes of
 * two checkpoint formats never share a cluster (record-format.ts checks it at each join, as the record
 * format): the log is trimmed below checkpoints, so a node that cannot read one loses what it held. A
 * version that raises it shows each thread, after the deploy, from its session file from the log's
 * first frame kept — its display before that, open prompts and keyed admissions gone — unless it learns
 * to read the format before its own.
 */
export const CHECKPOINT_FORMAT = 1

/** A checkpoint's `state`: the mirror as it stood once it had folded the records up to the checkpoint's position. */
export interface MirrorState {
  format: number
  view: ThreadView
  openPrompts: [string, string][]
  keyed: [string, KeyedAdmission][]
  keyOf: [string, string][]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/**
 * Whether a restored view has what the fold goes on from: its lists and maps where the fold appends and
 * sets. Not the snapshot's whole schema: its input limits (a title's length, say) are the API's, and an
 * extension's dialog may pass them.
 */
function isView(value: unknown): value is ThreadView {
  if (!isObject(value) || typeof value.seq !== 'number' || !Array.isArray(value.transcript) || !Array.isArray(value.openDialogs)) return false
  const { status, queue, statusItems, widgets, working, changes } = value
  return (
    isObject(status) &&
    typeof status.busy === 'boolean' &&
    typeof status.run === 'number' &&
    isObject(queue) &&
    Array.isArray(queue.steering) &&
    Array.isArray(queue.followUp) &&
    [statusItems, widgets, working].every(isObject) &&
    (changes === undefined || (isObject(changes) && isObject(changes.runs))) &&
    value.transcript.every((entry) => isObject(entry) && typeof entry.kind === 'string') &&
    value.openDialogs.every((dialog) => isObject(dialog) && typeof dialog.id === 'string' && isObject(dialog.dialog))
  )
}
const isPairs = (value: unknown, second: (v: unknown) => boolean): value is [string, never][] =>
  Array.isArray(value) && value.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string' && second(pair[1]))
const isAdmission = (v: unknown): boolean => {
  const a = v as KeyedAdmission | null
  return typeof a === 'object' && a !== null && typeof a.messageId === 'string' && typeof a.fingerprint === 'string' && typeof a.run === 'number' && typeof a.queued === 'boolean'
}

/** The state a checkpoint holds; throws, saying why, for one of another format or shape. */
export function parseMirrorState(state: string): MirrorState {
  const restored = JSON.parse(state) as MirrorState
  if (restored.format !== CHECKPOINT_FORMAT) throw new Error(`its format is ${String(restored.format)}, this node's ${CHECKPOINT_FORMAT}`)
  // Its shape is checked, not each field: a fold that threw on it later would stop the mirror for good.
  if (!isView(restored.view)) throw new Error('its view is not one the fold goes on from')
  const isString = (v: unknown) => typeof v === 'string'
  if (!isPairs(restored.openPrompts, isString) || !isPairs(restored.keyOf, isString) || !isPairs(restored.keyed, isAdmission)) throw new Error('its prompts or keys are not lists of pairs')
  return restored
}
