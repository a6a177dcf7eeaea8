/**
 * axe-core in a real page, for the e2e tests' accessibility checks: one place that loads it and says
 * what it found so a person can act on it.
 */
import { createRequire } from 'node:module'
import type { Page } from 'playwright'

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')

export interface Found {
  id: string
  impact: string | null
  help: string
  nodes: string[]
}

/** axe over the whole document (it walks open shadow roots); the violations, said so a person can act on them. */
export async function violations(page: Page): Promise<Found[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE })
  return page.evaluate(async () => {
    type AxeResult = { violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[] }
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: object): Promise<AxeResult> } }).axe
    const r = await axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => `${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`),
    }))
  })
}
