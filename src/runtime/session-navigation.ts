/**
 * A thread's place in pi's session tree: its transcript (the branch at the leaf), moving to another
 * branch (the host's `navigate`, an extension's `ctx.navigateTree`) as pi's tree navigation does it,
 * and keeping the leaf where it was shown, so a restart resumes on the branch people saw.
 */
import type { AgentSession } from '@earendil-works/pi-coding-agent'
import type { TranscriptEntry } from '../schemas/index.js'
import type { NavigateResult, NavigateTarget } from './port.js'
import { foldTranscript } from './transcript.js'
import { anchorAtLeaf, anchorOf, BRANCH_ENTRY, SessionTree } from './session-branches.js'

export interface NavigationHooks {
  /** Runs pi's work as the thread's (extension-output.ts). */
  within<T>(work: () => T): T
  /** The conversation is on another branch now: its transcript, whole. */
  branched(transcript: TranscriptEntry[]): void
  /** Appends one of the host's custom entries to the session file. */
  append(customType: string, data: object): void
}

export class SessionNavigation {
  #tree = new SessionTree()
  /** The session manager `#tree` indexes: pi may give the session another (a new or switched session). */
  #treeOf?: object

  constructor(
    private readonly session: AgentSession,
    private readonly hooks: NavigationHooks,
  ) {}

  /** pi's session tree as it stands now, indexed as far as it grew since the last look. */
  private tree(): SessionTree {
    const manager = this.session.sessionManager
    if (this.#treeOf !== manager) {
      this.#tree = new SessionTree([], { get: (id) => manager.getEntry(id) })
      this.#treeOf = manager
    }
    return this.#tree.update(manager.getEntries())
  }

  transcript(): TranscriptEntry[] {
    const manager = this.session.sessionManager
    const tree = this.tree()
    return foldTranscript(manager.getBranch(), (id) => tree.versionsOf(id))
  }

  async navigate(target: NavigateTarget): Promise<NavigateResult> {
    const tree = this.tree()
    const entry = tree.userEntry('before' in target ? target.before : target.to)
    if (!entry) return { kind: 'unknown-message' }
    // Before a prompt: where it hangs, so the next prompt hangs there too. To a version: where its branch ends.
    const leaf = 'before' in target ? anchorOf(entry, tree.byId) : tree.latestUnder(entry.id)
    return (await this.moveTo(leaf)) ? { kind: 'moved' } : { kind: 'cancelled' }
  }

  /**
   * `ctx.navigateTree()` as pi's RPC mode binds it (pi's navigation, with the extension's options),
   * then the branch is kept for a restart and shown to the people watching.
   */
  async navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean; editorText?: string }> {
    const before = this.session.sessionManager.getLeafId()
    let result: { cancelled: boolean; editorText?: string }
    try {
      result = await this.hooks.within(() => this.session.navigateTree(targetId, options))
    } finally {
      this.keepLeaf()
    }
    if (!result.cancelled && this.session.sessionManager.getLeafId() !== before) this.hooks.branched(this.transcript())
    return { cancelled: result.cancelled, ...(result.editorText ? { editorText: result.editorText } : {}) }
  }

  /** The versions of the prompt pi is about to write at the leaf: those already hanging where it hangs, and itself. */
  versionsHere(messageId: string): string[] | undefined {
    const manager = this.session.sessionManager
    const tree = this.tree()
    const ids = [...tree.versionsAt(anchorAtLeaf(manager.getLeafId(), tree.byId)), messageId]
    return ids.length > 1 ? ids : undefined
  }

  /**
   * pi's tree navigation to exactly `leaf` (`null`: before the first message). pi moves above a user
   * message it is sent to (for its editor), so it is sent to a branch marker written at `leaf`
   * instead, which it takes as it is; extensions hear `session_before_tree` (and may refuse) and
   * `session_tree`, and pi rebuilds the model's context from the new branch. False: refused.
   */
  private async moveTo(leaf: string | null): Promise<boolean> {
    const manager = this.session.sessionManager
    const from = manager.getLeafId()
    if (leaf === from) return true
    const go = (id: string | null) => (id === null ? manager.resetLeaf() : manager.branch(id))
    go(leaf)
    const marker = manager.appendCustomEntry(BRANCH_ENTRY, {})
    go(from)
    try {
      const result = await this.hooks.within(() => this.session.navigateTree(marker))
      if (result.cancelled) return false
    } finally {
      this.keepLeaf()
    }
    this.hooks.branched(this.transcript())
    return true
  }

  /** pi resumes a session file at its last entry: when that is not the leaf, a branch marker at the leaf makes it so. */
  private keepLeaf(): void {
    const manager = this.session.sessionManager
    if (manager.getEntries().at(-1)?.id !== (manager.getLeafId() ?? undefined)) this.hooks.append(BRANCH_ENTRY, {})
  }
}
