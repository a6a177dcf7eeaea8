/**
 * A queued prompt's images across a crash, on a real threadhost process: the prompt is journaled
 * with its images before its 202, so after a SIGKILL recovery hands it back whole — its text and its
 * images — to every follower and every later snapshot (docs/flows/prompt.md).
 */
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Value } from 'typebox/value'
import { afterEach, describe, expect, it } from 'vitest'
import { PromptBody, TranscriptEntry, type PromptImage } from '../../src/schemas/index.js'
import { startProcess } from '../support/spawn-server.js'
import { api, is, SseClient } from './harness.js'
import { addVisionModel, copyFixtureAgentDir, VISION_MODEL } from './local-llm.js'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A 1×1 PNG and a 1×1 GIF. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const GIF = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'

/** A prompt body built to the schema: the fixture is checked against it, so it cannot drift from the contract. */
function body(message: string, images: PromptImage[], deliverAs?: 'steer' | 'followUp'): PromptBody {
  const b: PromptBody = { message, images, ...(deliverAs ? { deliverAs } : {}) }
  expect(Value.Check(PromptBody, b)).toBe(true)
  return b
}

/** A model endpoint that starts every reply and never finishes it: the run stays in flight, so the next prompt queues. */
async function hangingModel(): Promise<string> {
  const open = new Set<ServerResponse>()
  const server: Server = createServer((req, res) => {
    req.resume()
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`)
    open.add(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(async () => {
    for (const res of open) res.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

describe('a prompt handed back after a crash', () => {
  it('a queued prompt with images, SIGKILLed before it ran, comes back after the restart with its text and its images', async () => {
    const agentDir = await copyFixtureAgentDir(await hangingModel())
    await addVisionModel(agentDir)
    const dataDir = await mkdtemp(join(tmpdir(), 'threadhost-images-crash-'))
    cleanups.push(() => rm(agentDir, { recursive: true, force: true }), () => rm(dataDir, { recursive: true, force: true }))
    const args = ['--port', '0', '--data-dir', dataDir]

    const first = startProcess(args, { agentDir, cleanups })
    const url = await first.url
    expect((await api(url, 'POST', '/api/threads', { id: 'pics', model: VISION_MODEL })).status).toBe(201)
    const tab = await SseClient.open(`${url}/api/threads/pics/follow`)
    cleanups.push(() => tab.close())
    expect((await api(url, 'POST', '/api/threads/pics/prompt', { message: 'start' })).status).toBe(202)
    await tab.waitFor(is('status', { busy: true, run: 1 }))
    const images: PromptImage[] = [
      { mimeType: 'image/png', data: PNG },
      { mimeType: 'image/gif', data: GIF },
    ]
    const queued = await api(url, 'POST', '/api/threads/pics/prompt', body('what are these two?', images, 'followUp'))
    expect(queued.status).toBe(202)
    expect(queued.body.queued).toBe(true)
    first.child.kill('SIGKILL')
    await first.exit
    tab.close()

    const second = startProcess(args, { agentDir, cleanups })
    const url2 = await second.url
    const follower = await SseClient.open(`${url2}/api/threads/pics/follow`)
    cleanups.push(() => follower.close())
    const snapshot = await follower.waitFor(is('snapshot'))
    const handedBack = (snapshot.data.transcript as { kind: string; messageId?: string }[]).find(
      (e) => e.kind === 'rejected' && e.messageId === queued.body.messageId,
    )
    expect(handedBack).toEqual({ kind: 'rejected', messageId: queued.body.messageId, reason: 'restart', text: 'what are these two?', images })
    expect(Value.Check(TranscriptEntry, handedBack)).toBe(true)
    second.child.kill('SIGKILL')
  }, 60_000)
})
