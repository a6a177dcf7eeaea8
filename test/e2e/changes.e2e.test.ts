/**
 * End to end (issue 22): two tabs on one thread working in a git repository see each run's changes
 * live in the Changes panel; one reverts (after a confirmation listing the files), and the other
 * tab sees the run reverted and a Redo offered.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright'
import { api, launch, openThread, send, startServer, type Server } from './harness.js'

describe('changes in two tabs', () => {
  let server: Server
  let browser: Browser
  let repo: string
  let policy: string

  beforeAll(async () => {
    repo = mkdtempSync(join(tmpdir(), 'threadhost-e2e-repo-'))
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' }
    execFileSync('git', ['init', '-q'], { cwd: repo })
    writeFileSync(join(repo, 'app.ts'), 'export const answer = 41\n')
    execFileSync('git', ['add', '.'], { cwd: repo, env })
    execFileSync('git', ['commit', '-q', '-m', 'start'], { cwd: repo, env })
    policy = join(repo, '..', `${repo.split('/').pop()}-policy.json`)
    writeFileSync(policy, JSON.stringify({ tools: { write: 'allow', edit: 'allow' } }))
    server = await startServer({ args: ['--workspace', repo, '--tools-policy', policy, '--demo-delay-ms', '2'] })
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    rmSync(repo, { recursive: true, force: true })
    rmSync(policy, { force: true })
  })

  const panel = (page: Page) => page.locator('changes-view')

  test("a run's changes appear in both tabs; one tab reverts, and the other sees it reverted with Redo offered", async () => {
    const created = await api<{ threadId: string }>(server.url, 'POST', '/api/threads', { title: 'Changes', cwd: repo })
    const threadId = created.body.threadId
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    context.setDefaultTimeout(45_000)
    const a = await context.newPage()
    const b = await context.newPage()
    await openThread(a, server.url, threadId)
    await openThread(b, server.url, threadId)

    await send(a, `call edit ${JSON.stringify({ path: 'app.ts', edits: [{ oldText: '41', newText: '42' }] })}`)
    for (const page of [a, b]) {
      await panel(page).getByText('Changes · 1 file').click()
      await panel(page).getByText('Run 1 · 1 file').waitFor()
    }

    await panel(b).getByRole('button', { name: 'Diff' }).click()
    await panel(b).getByText('+export const answer = 42').waitFor()

    await panel(a).getByRole('button', { name: 'Revert', exact: true }).click()
    const ask = panel(a).getByRole('alertdialog')
    await ask.getByText('app.ts').waitFor()
    await ask.getByRole('button', { name: 'Revert', exact: true }).click()

    await panel(b).getByText('Run 1 · 1 file · reverted').waitFor()
    await panel(b).getByRole('button', { name: 'Redo' }).waitFor()
    expect(readFileSync(join(repo, 'app.ts'), 'utf8')).toBe('export const answer = 41\n')
    await context.close()
  })
})
