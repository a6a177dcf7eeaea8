/**
 * Nodes that share a cluster write one record format (RECORD_FORMAT, port.ts) and one checkpoint format
 * (CHECKPOINT_FORMAT, mirror-state.ts): a node checks them each time it joins — at its start, and again
 * after it lost its lease — and leaves at once when a live node writes another. The check comes after
 * the join: of two nodes of different formats that join at once, each sees the other.
 */
import type { Log } from '../store/journal.js'
import { EngineAway, type Membership, type NodeInfo } from './port.js'

/** How often a node that joined again asks the engine for the live nodes' formats until it answers. */
const RETRY_CHECK_MS = 250
/** How long such asks may fail otherwise than with the engine away before the node stops. */
const CHECK_FAILING_MS = 30_000

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

/**
 * After a node joined again: asks until the engine lists the live nodes' formats — nodes of another format
 * may have taken the cluster over while this one was away. A failed ask is asked again (a timeout under
 * load passes). Resolves the error for which the node must stop, once it left: a live node of another
 * format, or 30 s of asks failing otherwise than with the engine away. Undefined: it may serve again, or
 * `current()` turned false meanwhile (a newer rejoin or a stop has the say; the caller asks it again).
 */
export async function formatsOnRejoin(membership: Membership, current: () => boolean, log?: Log): Promise<Error | undefined> {
  let failing = 0
  for (let tries = 0; current(); tries++) {
    try {
      return await leftForOtherFormat(membership)
    } catch (error) {
      failing = error instanceof EngineAway ? 0 : failing + 1
      if (failing * RETRY_CHECK_MS >= CHECK_FAILING_MS) {
        if (!current()) return undefined
        await membership.leave().catch(() => {})
        return new Error(`cluster: the live nodes' formats could not be read for ${CHECK_FAILING_MS / 1000} s (${String(error)})`)
      }
      if (tries % 40 === 0) log?.('warn', `cluster: rejoined; waiting for the engine to list the live nodes' formats before serving again (${String(error)})`)
      await new Promise((resolve) => setTimeout(resolve, RETRY_CHECK_MS))
    }
  }
  return undefined
}
