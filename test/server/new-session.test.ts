/**
 * An extension's `ctx.newSession()` on threadhost (issue 19): a new thread like the one it was
 * called in (model, workspace), announced to that thread's followers with a link to it. The other
 * session actions (fork, navigateTree, switchSession) stay unprovided: the runtime tells the user.
 */
import type { ExtensionFactory } from '@earendil-works/pi-coding-agent'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionPaths } from '../../src/runtime/index.js'
import { api, is, SseClient, startHarness } from './harness.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A command that asks for a new session and shows what it was answered. */
const fresh: ExtensionFactory = (pi) => {
  pi.on('session_start', (event, ctx) => {
    if (event.reason === 'new') ctx.ui.notify(`session_start new from ${event.previousSessionFile}`, 'info')
  })
  pi.registerCommand('fresh', {
    description: 'a new session',
    handler: async (_args, ctx) => {
      const answer = await ctx.newSession()
      ctx.ui.notify(`newSession answered ${JSON.stringify(answer)}`, 'info')
    },
  })
}

describe('ctx.newSession()', () => {
  it("makes a new thread with the caller's model and workspace and tells the caller's followers where it is", async () => {
    const h = await startHarness({ extraExtensions: [fresh] })
    cleanups.push(() => h.close())
    await api(h.url, 'POST', '/api/threads', { id: 'origin', title: 'Where it began' })
    const tab = await SseClient.open(`${h.url}/api/threads/origin/follow`)
    cleanups.push(() => tab.close())

    await api(h.url, 'POST', '/api/threads/origin/prompt', { message: '/fresh' })
    const told = await tab.waitFor((f) => f.event === 'notify' && /started a new thread/.test(f.data.message))
    const id = decodeURIComponent(/#\/threads\/(\S+)$/.exec(told.data.message)![1])
    expect((await tab.waitFor((f) => f.event === 'notify' && /newSession answered/.test(f.data.message))).data.message).toContain('{"cancelled":false}')

    const threads = (await api(h.url, 'GET', '/api/threads')).body.threads as Array<{ threadId: string; model: string; cwd: string }>
    const made = threads.find((t) => t.threadId === id)
    const caller = threads.find((t) => t.threadId === 'origin')!
    expect(made).toMatchObject({ model: caller.model, cwd: caller.cwd })
    expect(threads).toHaveLength(2)
  })

  it("the new thread's extensions hear on its first build that it is a new session made from the caller's (session_start new)", async () => {
    const h = await startHarness({ extraExtensions: [fresh] })
    cleanups.push(() => h.close())
    await api(h.url, 'POST', '/api/threads', { id: 'origin' })
    const tab = await SseClient.open(`${h.url}/api/threads/origin/follow`)
    cleanups.push(() => tab.close())
    await api(h.url, 'POST', '/api/threads/origin/prompt', { message: '/fresh' })
    const told = await tab.waitFor((f) => f.event === 'notify' && /started a new thread/.test(f.data.message))
    const id = decodeURIComponent(/#\/threads\/(\S+)$/.exec(told.data.message)![1])
    const made = await SseClient.open(`${h.url}/api/threads/${id}/follow`)
    cleanups.push(() => made.close())
    await api(h.url, 'POST', `/api/threads/${id}/prompt`, { message: 'hello' })
    const began = await made.waitFor((f) => f.event === 'notify' && /^session_start/.test(f.data.message))
    expect(began.data.message).toBe(`session_start new from ${sessionPaths(h.dataDir, 'origin').file}`)
  })
})
