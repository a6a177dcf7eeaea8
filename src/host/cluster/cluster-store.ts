/**
 * The store a cluster node gives its registry (docs/flows/cluster.md, "Parts"): the node's own store,
 * with what other nodes must know copied out as it is written — thread rows to the engine's index (as
 * written on their own and as each prompt admitted leaves them), and prompts accepted, admitted and
 * settled to the thread's log through its node. A deleted thread's row
 * leaves the index once its `deleted` record is in the log (ClusterNode.threadDeleted), not here.
 */
import type { Log } from '../store/journal.js'
import type { ThreadRow, ThreadStore } from '../store/port.js'
import type { ClusterNode } from './cluster-node.js'

/** `node`: the node once it is made (the registry is opened with this store before the node exists). */
export function clusterStore(store: ThreadStore, node: () => ClusterNode | undefined, log?: Log): ThreadStore {
  // Keyed prompts admitted and not answered by the machine yet: their receipt goes to the log too.
  const keyed = new Set<string>()
  // The revision it was written at goes to the node's directory: a notice of the id older than it is an older thread's.
  const index = (n: ClusterNode, row: ThreadRow) =>
    void n.engine.index.put({ ...row, writer: n.self.name }, n.rowStill(row.threadId)).then(
      (revision) => n.rowIndexed(row.threadId, row.createdAt, revision),
      (e: unknown) => {
        log?.('warn', `cluster: index write failed: ${String(e)}`)
        n.rowIndexed(row.threadId, row.createdAt, undefined)
      },
    )
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'promptLogged') return (threadId: string, messageId: string) => node()?.flushed(threadId, messageId) ?? Promise.resolve(true)
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof value !== 'function') return value
      switch (property) {
        case 'putThread':
          return (row: ThreadRow, options?: { restored?: boolean }) => {
            target.putThread(row)
            const n = node()
            // Not a row put back after a delete that did not go through (the index kept it), nor the one a
            // thread leaves as this node stops it for its next owner: either may be older than the next owner's.
            if (n && !options?.restored && !n.losing(row.threadId)) index(n, row)
          }
        case 'admitPrompt':
          return (...args: Parameters<ThreadStore['admitPrompt']>) => {
            target.admitPrompt(...args)
            const [{ threadId, messageId, text, run }, , claim] = args
            if (claim) keyed.add(messageId)
            node()?.promptAccepted(threadId, messageId, text, claim && { key: claim.key, fingerprint: claim.fingerprint, run })
          }
        case 'promptAdmitted':
          return (...args: Parameters<ThreadStore['promptAdmitted']>) => {
            const [threadId, messageId, { run, queued }] = args
            // Before the store's write: a failed one is logged and the 202 still goes out.
            const n = node()
            if (keyed.delete(messageId)) n?.promptAdmitted(threadId, messageId, run, queued)
            target.promptAdmitted(...args)
            // The row as the prompt left it (its run, last activity, first prompt): every node lists the thread so.
            // Only the owner's: a node that lost the thread meanwhile would write over the next owner's row.
            if (n?.owns(threadId)) index(n, args[3])
          }
        case 'withdrawPrompt':
          return (threadId: string, messageId: string) => {
            keyed.delete(messageId)
            target.withdrawPrompt(threadId, messageId)
            node()?.promptSettled(threadId, messageId, true)
          }
        case 'settlePrompt':
          return (...args: Parameters<ThreadStore['settlePrompt']>) => {
            const known = target.settlePrompt(...args)
            if (known) node()?.promptSettled(args[0], args[1])
            return known
          }
        default:
          return (value as (...a: unknown[]) => unknown).bind(target)
      }
    },
  })
}
