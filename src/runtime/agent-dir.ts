/**
 * What threadhost found in the user's pi agent dir, for the startup line: read by pi's own loader,
 * exactly as a thread's session will read it. A missing or empty agent dir is normal (a fresh
 * machine): everything is zero and threads run on `demo`.
 */
import { existsSync } from 'node:fs'
import { DefaultResourceLoader, SettingsManager } from '@earendil-works/pi-coding-agent'
import type { PiModels } from './pi-models.js'

export interface AgentDirSurvey {
  agentDir: string
  exists: boolean
  extensions: number
  skills: number
  prompts: number
  /** Models with credentials, the demo not counted. */
  models: number
  /** Problems pi reported while loading (a broken extension, a bad models.json). */
  problems: string[]
}

export async function surveyAgentDir(agentDir: string, cwd: string, models: PiModels): Promise<AgentDirSurvey> {
  const exists = existsSync(agentDir)
  const problems: string[] = []
  const modelsError = models.configError()
  if (modelsError) problems.push(modelsError)
  const available = (await models.list()).length - 1
  if (!exists) return { agentDir, exists, extensions: 0, skills: 0, prompts: 0, models: available, problems }
  // Global resources only: no project is trusted here, and no context file matters for counting.
  const settingsManager = SettingsManager.create(cwd, agentDir, { projectTrusted: false })
  const loader = new DefaultResourceLoader({ cwd, agentDir, settingsManager, noContextFiles: true, packageCommandOutput: 'capture' })
  await loader.reload()
  const extensions = loader.getExtensions()
  for (const e of extensions.errors) problems.push(`extension ${e.path}: ${e.error}`)
  return {
    agentDir,
    exists,
    extensions: extensions.extensions.length,
    skills: loader.getSkills().skills.length,
    prompts: loader.getPrompts().prompts.length,
    models: available,
    problems,
  }
}

export function describeSurvey(s: AgentDirSurvey, defaultModel: string): string {
  const found = s.exists
    ? `${s.extensions} extension(s), ${s.skills} skill(s), ${s.prompts} prompt template(s), ${s.models} model(s) with credentials`
    : `nothing there yet; ${s.models} model(s) with credentials from the environment`
  const lines = [`pi agent dir ${s.agentDir}: ${found}; new threads default to ${defaultModel}`]
  for (const p of s.problems) lines.push(`  problem: ${p}`)
  return lines.join('\n')
}
