/**
 * The session actions of an extension command's context (`ctx.waitForIdle()`, `ctx.reload()`,
 * `ctx.newSession()` …) and `ctx.shutdown()`, bound as pi's RPC mode binds them: what the thread's
 * own session can do, it does; what needs the host goes to the host's `ThreadActions` hook. Without
 * pi's bindings every one of them is a silent no-op reporting success, so an extension believes a
 * reload or a new session happened when nothing did.
 */
import type { AgentSession, ExtensionCommandContextActions } from '@earendil-works/pi-coding-agent'
import type { ActionResult, ThreadActions } from './port.js'
import { messageIdOf } from './session-branches.js'

/** What the thread's own runtime does for the command context (pi-adapter.ts). */
export interface OwnActions {
  /** No run, and no prompt an extension sent still on its way to one. */
  waitForIdle(): Promise<void>
  /** pi's tree navigation, the branch then kept and shown to the thread's followers. */
  navigateTree(
    targetId: string,
    options: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string },
  ): Promise<{ cancelled: boolean; editorText?: string }>
}

export interface CommandActionsOptions {
  session: AgentSession
  own: OwnActions
  actions: ThreadActions | undefined
  /** A user message the navigation stepped above goes to the editor, as in pi's terminal. */
  setEditorText(text: string): void
  /** Says something to the people watching the thread (a warning toast). */
  tell(message: string): void
  /** The thread a pi session file belongs to, if it is one of threadhost's. */
  threadOfSessionFile(path: string): string | undefined
}

const CANCELLED: ActionResult = { cancelled: true }

export function commandContextActions(o: CommandActionsOptions): ExtensionCommandContextActions {
  const { session, actions, tell } = o
  const unavailable = (call: string, what: string): ActionResult => {
    tell(`An extension asked to ${what} (${call}), which threadhost cannot do for an extension yet; nothing changed.`)
    return CANCELLED
  }
  return {
    waitForIdle: () => o.own.waitForIdle(),
    // pi's own reload: extensions (a new file too), skills, prompts and context files are loaded again.
    reload: () => session.reload(),
    newSession: async (options) => {
      if (!actions?.newThread) return unavailable('ctx.newSession()', 'start a new session')
      const parent = options?.parentSession ? o.threadOfSessionFile(options.parentSession) : undefined
      return actions.newThread(parent ? { parentThreadId: parent } : {})
    },
    // As pi's fork: the thread's extensions are asked first (session_before_fork), an entry that is
    // not there (or, before, not a user message) is the extension's error; the fork is a new thread.
    fork: async (entryId, options) => {
      if (!actions?.fork) return unavailable('ctx.fork()', 'fork the conversation')
      const position = options?.position ?? 'before'
      const entry = session.sessionManager.getEntry(entryId)
      if (!entry || (position === 'before' && !(entry.type === 'message' && entry.message.role === 'user'))) {
        throw new Error('Invalid entry ID for forking')
      }
      const runner = session.extensionRunner
      if (runner.hasHandlers('session_before_fork')) {
        const asked = await runner.emit({ type: 'session_before_fork', entryId, position })
        if (asked?.cancel) return CANCELLED
      }
      const byId = { get: (id: string) => session.sessionManager.getEntry(id) }
      return actions.fork(position === 'at' ? { throughEntry: entryId } : { beforeMessageId: messageIdOf(entry, byId) })
    },
    navigateTree: async (targetId, options) => {
      const { summarize, customInstructions, replaceInstructions, label } = options ?? {}
      const result = await o.own.navigateTree(targetId, {
        ...(summarize !== undefined ? { summarize } : {}),
        ...(customInstructions !== undefined ? { customInstructions } : {}),
        ...(replaceInstructions !== undefined ? { replaceInstructions } : {}),
        ...(label !== undefined ? { label } : {}),
      })
      if (result.editorText) o.setEditorText(result.editorText)
      return { cancelled: result.cancelled }
    },
    switchSession: async (sessionPath) => {
      if (!actions?.switchSession) return unavailable('ctx.switchSession()', 'switch to another session')
      const threadId = o.threadOfSessionFile(sessionPath)
      return actions.switchSession({ sessionPath, ...(threadId !== undefined ? { threadId } : {}) })
    },
  }
}

/** `ctx.shutdown()`: pi's CLI exits; a server that many threads share does not, and says so. */
export function shutdownNotice(): string {
  return 'An extension asked pi to shut down (ctx.shutdown()); this server is shared by every thread and keeps running. Stop threadhost itself to end it.'
}

