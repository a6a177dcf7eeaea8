/**
 * The session actions of an extension command's context (`ctx.waitForIdle()`, `ctx.reload()`,
 * `ctx.newSession()` …) and `ctx.shutdown()`, bound as pi's RPC mode binds them: what the thread's
 * own session can do, it does; what needs the host goes to the host's `ThreadActions` hook. Without
 * pi's bindings every one of them is a silent no-op reporting success, so an extension believes a
 * reload or a new session happened when nothing did.
 */
import type { AgentSession, ExtensionCommandContextActions } from '@earendil-works/pi-coding-agent'
import type { ActionResult, ThreadActions } from './port.js'

export interface CommandActionsOptions {
  session: AgentSession
  actions: ThreadActions | undefined
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
    waitForIdle: () => session.waitForIdle(),
    // pi's own reload: extensions (a new file too), skills, prompts and context files are loaded again.
    reload: () => session.reload(),
    newSession: async (options) => {
      if (!actions?.newThread) return unavailable('ctx.newSession()', 'start a new session')
      const parent = options?.parentSession ? o.threadOfSessionFile(options.parentSession) : undefined
      return actions.newThread(parent ? { parentThreadId: parent } : {})
    },
    fork: async (entryId, options) => {
      if (!actions?.fork) return unavailable('ctx.fork()', 'fork the conversation')
      return actions.fork({ entryId, position: options?.position ?? 'before' })
    },
    navigateTree: async (targetId, options) => {
      if (!actions?.navigateTree) return unavailable('ctx.navigateTree()', 'move to another point of the conversation')
      const { summarize, customInstructions, replaceInstructions, label } = options ?? {}
      return actions.navigateTree({
        targetId,
        ...(summarize !== undefined ? { summarize } : {}),
        ...(customInstructions !== undefined ? { customInstructions } : {}),
        ...(replaceInstructions !== undefined ? { replaceInstructions } : {}),
        ...(label !== undefined ? { label } : {}),
      })
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

