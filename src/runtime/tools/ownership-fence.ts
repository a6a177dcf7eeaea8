/**
 * Cluster mode's fence on what a thread's runtime does outside the thread's log
 * (src/host/cluster/fence-guard.ts says when a node may no longer act for a thread): a tool call is
 * refused before it starts, and an entry is not appended to the shared session file, once the node
 * is stale. A node that wakes from a freeze runs its pending steps before it learns it was replaced;
 * these checks are synchronous, so none of those steps reaches the workspace or the session file.
 * Without `fence` (one node) neither is installed.
 */
import type { ExtensionFactory, SessionManager } from '@earendil-works/pi-coding-agent'

/** Why this process may no longer act for the thread, or undefined while it may. */
export type RuntimeFence = () => string | undefined

/** Blocks every tool call while the fence gives a reason (asked before and after threadhost's own tool hooks). */
export function ownershipFenceExtension(fence: RuntimeFence): ExtensionFactory {
  return (pi) => {
    pi.on('tool_call', async (event) => {
      const refusal = fence()
      return refusal ? { block: true, reason: `${event.toolName} did not run: ${refusal}.` } : undefined
    })
  }
}

/** A `!` command typed in the composer: refused as the model's tools are, before the policy asks, and again after. */
export function fencedShell(fence: RuntimeFence, permission: (command: string) => Promise<string | undefined>): (command: string) => Promise<string | undefined> {
  const refused = () => {
    const refusal = fence()
    return refusal && `The command did not run: ${refusal}.`
  }
  return async (command) => refused() ?? (await permission(command)) ?? refused()
}

/**
 * pi appends each entry to the session file itself (`SessionManager._persist`, its one write path;
 * `_rewriteFile` for a rewrite). A stale node's entries stay in its memory, never in the file the
 * thread's new owner reads and writes. Returns false where pi no longer has those methods (said in
 * the log by the caller): the fence on tools and the engine's on the log still hold.
 */
export function fenceSessionWrites(manager: SessionManager, fence: RuntimeFence, onSkipped: (why: string) => void): boolean {
  const writes = manager as unknown as { _persist?: (entry: unknown) => void; _rewriteFile?: () => void }
  const persist = writes._persist
  const rewrite = writes._rewriteFile
  if (typeof persist !== 'function' || typeof rewrite !== 'function') return false
  writes._persist = function (this: unknown, entry: unknown) {
    const refusal = fence()
    if (refusal) return onSkipped(refusal)
    persist.call(this, entry)
  }
  writes._rewriteFile = function (this: unknown) {
    const refusal = fence()
    if (refusal) return onSkipped(refusal)
    rewrite.call(this)
  }
  return true
}
