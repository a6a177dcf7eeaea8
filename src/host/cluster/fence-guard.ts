/**
 * Fencing what the engine cannot see (docs/flows/cluster.md, "The fencing rule"): a thread's tools
 * and its pi session file. The engine refuses a stale owner's appends, but a node that wakes from a
 * freeze runs its pending timers and I/O — the model stream goes on, a tool call starts, pi appends
 * to the shared session file — before the refusal of its next append, or its lease check, comes
 * back. So each of those steps asks first, synchronously: a node whose lease is not current (its
 * last renewal is older than the self-fence margin) or that no longer owns the thread refuses it.
 *
 * Only cluster mode builds one; the single-node path never asks anything.
 */

/** Why this node may no longer act for the thread, or undefined while it may. */
export type FenceGuard = (threadId: string) => string | undefined

/**
 * `node` is read at each question, not once: a node that rejoins under a new identity (a new lease)
 * answers for the threads it owns from then on.
 */
export function fenceGuard(node: { name: () => string; leaseCurrent: () => boolean; owns: (threadId: string) => boolean }): FenceGuard {
  return (threadId) => {
    if (!node.leaseCurrent()) return `node ${node.name()}'s lease is not current (not renewed within the self-fence margin); another node may own thread ${threadId} now`
    if (!node.owns(threadId)) return `node ${node.name()} no longer owns thread ${threadId}`
    return undefined
  }
}
