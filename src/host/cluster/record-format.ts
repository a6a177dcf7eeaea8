/**
 * Nodes that share a cluster write one record format (RECORD_FORMAT, port.ts) and one checkpoint format
 * (CHECKPOINT_FORMAT, mirror-state.ts): a node checks them each time it joins — at its start, and again
 * after it lost its lease — and leaves at once when a live node writes another. The check comes after
 * the join: of two nodes of different formats that join at once, each sees the other.
 */
import type { Membership, NodeInfo } from './port.js'

/** A live node writes another record or checkpoint format than this one's: this one does not join. */
export class OtherRecordFormat extends Error {
  constructor(readonly other: NodeInfo, self: NodeInfo) {
    const differs =
      other.format !== self.format
        ? `writes the cluster's records in format ${other.format} and this threadhost in format ${self.format}`
        : `keeps its log checkpoints in format ${other.checkpointFormat} and this threadhost in format ${self.checkpointFormat}`
    super(`node ${other.name} ${differs}: a change of format goes to every node together (stop them all, then start them all on one version)`)
  }
}

/** Called once this node joined: a live node of another format than its own, once this node left again; undefined when there is none. */
export async function leftForOtherFormat(membership: Membership): Promise<OtherRecordFormat | undefined> {
  const self = membership.self
  const other = (await membership.live()).find((n) => n.format !== self.format || n.checkpointFormat !== self.checkpointFormat)
  if (!other) return undefined
  await membership.leave().catch(() => {})
  return new OtherRecordFormat(other, self)
}
