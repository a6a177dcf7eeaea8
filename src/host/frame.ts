/**
 * SSE frame encoding. A frame is encoded once when it is appended and the same bytes go to every
 * follower, so fan-out costs one write per follower and no JSON work.
 */
import type { Observation, Snapshot } from '../schemas/index.js'

export function encodeFrame(id: number, event: string, data: unknown): Buffer {
  // JSON.stringify never emits a raw newline, so one `data:` line is always enough.
  return Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
}

export const encodeObservation = (o: Observation): Buffer => encodeFrame(o.seq, o.type, o)
export const encodeSnapshot = (s: Snapshot): Buffer => encodeFrame(s.seq, 'snapshot', s)
