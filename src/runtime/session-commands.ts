/**
 * What a thread's `/` menu and its keys offer, read from pi's session: extensions' commands, prompt
 * templates, skills and extensions' shortcuts; and a shortcut run as pi's terminal runs it.
 */
import type { AgentSession } from '@earendil-works/pi-coding-agent'
import type { CommandInfo } from '../schemas/index.js'
import { errorText } from './extension-ui.js'

/** pi's resolution of extensions' shortcuts (the last registration of a key wins); no terminal keys are reserved here. */
function shortcuts(session: AgentSession) {
  return session.extensionRunner.getShortcuts({})
}

export function sessionCommands(session: AgentSession): CommandInfo[] {
  const extension = session.extensionRunner
    .getRegisteredCommands()
    .map((c): CommandInfo => ({ name: c.invocationName, description: c.description ?? '', kind: 'extension' }))
  const templates = session.promptTemplates.map((t): CommandInfo => ({ name: t.name, description: t.description, kind: 'template' }))
  const skills = session.resourceLoader.getSkills().skills.map((s): CommandInfo => ({ name: `skill:${s.name}`, description: s.description, kind: 'skill' }))
  const keys = [...shortcuts(session).entries()].map(([key, s]): CommandInfo => ({ name: key, description: s.description ?? '', kind: 'shortcut' }))
  return [...extension, ...templates, ...skills, ...keys]
}

/**
 * Runs the extension shortcut bound to `key` (`within`: as the thread's work); false when none is.
 * The handler gets the extension context; a failure is the extension's, reported as pi reports it.
 */
export function runSessionShortcut(session: AgentSession, key: string, within: (work: () => Promise<void>) => Promise<void>): boolean {
  const shortcut = [...shortcuts(session)].find(([id]) => id === key.toLowerCase())?.[1]
  if (!shortcut) return false
  const runner = session.extensionRunner
  void within(async () => {
    try {
      await shortcut.handler(runner.createContext())
    } catch (error) {
      runner.emitError({ extensionPath: shortcut.extensionPath, event: `shortcut ${key}`, error: errorText(error) })
    }
  })
  return true
}
