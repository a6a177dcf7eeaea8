/**
 * Images in a prompt, through threadhost's HTTP API to pi's real openai-completions provider on
 * loopback (test/server/local-llm.ts): they reach the model as image parts and every follower's
 * user message carries them; a model without image input refuses them (422) and an image over the
 * limit is a 413 naming it — in both cases before anything is stored or run.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Value } from 'typebox/value'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MAX_IMAGE_BYTES, PromptBody, UserMessageObservation, type PromptImage } from '../../src/schemas/index.js'
import { api, SseClient, startHarness, type Harness } from './harness.js'
import { addVisionModel, copyFixtureAgentDir, imageUrls, LocalLlm, MODEL, VISION_MODEL } from './local-llm.js'

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

/** A prompt body built to the schema: the fixture is checked against it, so it cannot drift from the contract. */
function body(message: string, images: PromptImage[]): PromptBody {
  const b: PromptBody = { message, images }
  expect(Value.Check(PromptBody, b)).toBe(true)
  return b
}

let h: Harness
let llm: LocalLlm
let agentDir: string
let workspace: string
const clients: SseClient[] = []

beforeEach(async () => {
  llm = new LocalLlm()
  await llm.start()
  agentDir = await copyFixtureAgentDir(llm.url)
  await addVisionModel(agentDir)
  workspace = await mkdtemp(join(tmpdir(), 'threadhost-images-ws-'))
  h = await startHarness({ agentDir, workspaces: [workspace] })
})
afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h?.close()
  await llm?.close()
  await rm(agentDir, { recursive: true, force: true })
  await rm(workspace, { recursive: true, force: true })
})

const newThread = (id: string, model: string) => api(h.url, 'POST', '/api/threads', { id, model, cwd: workspace })

describe('images in a prompt', () => {
  it('reach the model as image parts, and every follower gets them on the user message', async () => {
    expect((await api(h.url, 'GET', '/api/models')).body.models).toContainEqual(expect.objectContaining({ name: VISION_MODEL, images: true }))
    await newThread('v1', VISION_MODEL)
    const tab = await SseClient.open(`${h.url}/api/threads/v1/follow`)
    clients.push(tab)
    const sent = await api(h.url, 'POST', '/api/threads/v1/prompt', body('what is this?', [{ mimeType: 'image/png', data: PNG }]))
    expect(sent.status).toBe(202)
    const user = await tab.waitFor((f) => f.event === 'user-message')
    expect(Value.Check(UserMessageObservation, user.data)).toBe(true)
    expect(user.data.images).toEqual([{ mimeType: 'image/png', data: expect.any(String) }])
    await tab.waitFor((f) => f.event === 'settled')
    expect(imageUrls(llm.requests.at(-1)!)).toHaveLength(1)
    expect(imageUrls(llm.requests.at(-1)!)[0]).toMatch(/^data:image\/png;base64,/)
  })

  it('to a model without image input are refused 422, saying so, and nothing runs', async () => {
    await newThread('t1', MODEL)
    const refused = await api(h.url, 'POST', '/api/threads/t1/prompt', body('what is this?', [{ mimeType: 'image/png', data: PNG }]))
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe('IMAGES_NOT_SUPPORTED')
    expect(refused.body.error).toContain(MODEL)
    expect(llm.requests).toHaveLength(0)
  })

  it('over the size limit are a 413 naming the limit, and nothing is stored: the thread the prompt would create does not exist', async () => {
    const big = 'A'.repeat(Math.ceil(((MAX_IMAGE_BYTES + 1024) * 4) / 3))
    const refused = await api(h.url, 'POST', '/api/threads/fresh/prompt', { message: 'look', images: [{ mimeType: 'image/png', data: big }] })
    expect(refused.status).toBe(413)
    expect(refused.body).toMatchObject({ code: 'IMAGE_TOO_LARGE', limit: MAX_IMAGE_BYTES })
    expect(refused.body.error).toContain('5 MB')
    expect((await api(h.url, 'GET', '/api/threads/fresh')).status).toBe(404)
    expect(llm.requests).toHaveLength(0)
  })
})
