/**
 * threadhost hosts the user's own pi, offline: a real agent dir (test/fixtures/agent — an extension
 * file loaded by pi's loader, a prompt template, a skill, AGENTS.md, models.json) and pi's REAL
 * `openai-completions` provider code talking to a tiny chat-completions server on loopback.
 * Everything is driven through threadhost's HTTP/SSE API only.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Frame, type Harness } from './harness.js'

const FIXTURE = join(import.meta.dirname, '../fixtures/agent')
const PROVIDER = 'fixture-local'
const MODEL_ID = 'fixture-chat'
const MODEL = `${PROVIDER}/${MODEL_ID}`
const WORKSPACE_MARKER = 'WORKSPACE-AGENTS-MARKER: this workspace builds with make.'

// ---------------------------------------------------------------------------------------------
// A tiny OpenAI-compatible chat-completions server: streams `chat.completion.chunk`s and keeps
// every request it was sent.
// ---------------------------------------------------------------------------------------------

interface ChatMessage {
  role: string
  content?: string | { type: string; text?: string }[] | null
  tool_calls?: { id: string; function: { name: string; arguments: string } }[]
  tool_call_id?: string
}
interface ChatRequest {
  model: string
  stream?: boolean
  messages: ChatMessage[]
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[]
}

type Reply = { text: string } | { toolCall: { name: string; arguments: object } }

const textOf = (content: ChatMessage['content']): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c) => c.text ?? '').join('') : ''

/** The scripted model: a tool result gets a final text; "use fixture_ask" gets a tool call; anything else an echo. */
function script(request: ChatRequest): Reply {
  const last = request.messages.at(-1)!
  if (last.role === 'tool') return { text: `Thanks, the tool said: ${textOf(last.content)}` }
  const said = textOf(last.content)
  if (said.includes('use fixture_ask')) return { toolCall: { name: 'fixture_ask', arguments: { topic: 'the fixture' } } }
  return { text: `Local model heard: ${said}` }
}

class LocalLlm {
  readonly requests: ChatRequest[] = []
  readonly paths: string[] = []
  private server!: Server
  private calls = 0
  url = ''

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.paths.push(`${req.method} ${req.url}`)
    let raw = ''
    for await (const chunk of req) raw += chunk
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }))
      return
    }
    const request = JSON.parse(raw) as ChatRequest
    this.requests.push(request)
    const reply = script(request)
    const id = `chatcmpl-${++this.calls}`
    const created = Math.floor(Date.now() / 1000)
    const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    res.write(chunk({ role: 'assistant', content: '' }))
    if ('text' in reply) {
      // A few pieces, so the thread sees several deltas.
      for (const piece of reply.text.match(/.{1,8}/gs) ?? []) {
        res.write(chunk({ content: piece }))
        await new Promise((r) => setTimeout(r, 2))
      }
      res.write(chunk({}, 'stop'))
    } else {
      const args = JSON.stringify(reply.toolCall.arguments)
      const cut = Math.floor(args.length / 2)
      res.write(chunk({ tool_calls: [{ index: 0, id: `call_${this.calls}`, type: 'function', function: { name: reply.toolCall.name, arguments: args.slice(0, cut) } }] }))
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(cut) } }] }))
      res.write(chunk({}, 'tool_calls'))
    }
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`,
    )
    res.end('data: [DONE]\n\n')
  }
}

/** The system prompt and the texts of the user messages of one request. */
const systemOf = (r: ChatRequest) => r.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n')
const userTexts = (r: ChatRequest) => r.messages.filter((m) => m.role === 'user').map((m) => textOf(m.content))
const toolNames = (r: ChatRequest) => (r.tools ?? []).map((t) => t.function.name)

// ---------------------------------------------------------------------------------------------

let h: Harness
let llm: LocalLlm
let agentDir: string
let workspace: string
const clients: SseClient[] = []

const follow = async (thread: string) => {
  const client = await SseClient.open(`${h.url}/api/threads/${thread}/follow`)
  clients.push(client)
  return client
}
const prompt = (thread: string, message: string) => api(h.url, 'POST', `/api/threads/${thread}/prompt`, { message })
const answer = (thread: string, body: object) => api(h.url, 'POST', `/api/threads/${thread}/dialog`, body)
const newThread = (id: string) => api(h.url, 'POST', '/api/threads', { id, model: MODEL, cwd: workspace })
const framesOf = (tab: SseClient, event: string) => tab.frames.filter((f) => f.event === event)

beforeEach(async () => {
  llm = new LocalLlm()
  await llm.start()
  // The user's agent dir, copied out of the tree; models.json gets the local server's real port.
  agentDir = await mkdtemp(join(tmpdir(), 'threadhost-user-pi-agent-'))
  await cp(FIXTURE, agentDir, { recursive: true })
  const models = JSON.parse(await readFile(join(agentDir, 'models.json'), 'utf8'))
  models.providers[PROVIDER].baseUrl = llm.url
  await writeFile(join(agentDir, 'models.json'), JSON.stringify(models, null, 2))
  workspace = await mkdtemp(join(tmpdir(), 'threadhost-user-pi-ws-'))
  await writeFile(join(workspace, 'AGENTS.md'), `# Project context\n\n${WORKSPACE_MARKER}\n`)
  h = await startHarness({ agentDir, workspaces: [workspace] })
})

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await h?.close()
  await llm?.close()
  await rm(agentDir, { recursive: true, force: true })
  await rm(workspace, { recursive: true, force: true })
})

describe("the user's own models.json", () => {
  it('GET /api/models lists the model from models.json as <provider>/<id>, next to demo', async () => {
    const { status, body } = await api(h.url, 'GET', '/api/models')
    expect(status).toBe(200)
    const names = body.models.map((m: { name: string }) => m.name)
    expect(names).toContain('demo')
    expect(body.models).toContainEqual(
      expect.objectContaining({ name: MODEL, provider: PROVIDER, id: MODEL_ID, label: 'Fixture local chat', contextWindow: 32000, reasoning: false }),
    )
  })

  it('a thread can be created on that model (201); an unknown model is refused with 422 naming it', async () => {
    expect(await newThread('m1')).toMatchObject({ status: 201, body: { threadId: 'm1' } })
    expect(await api(h.url, 'GET', '/api/threads/m1')).toMatchObject({ status: 200, body: { model: MODEL, cwd: workspace } })
    const unknown = await api(h.url, 'POST', '/api/threads', { id: 'm2', model: `${PROVIDER}/no-such-model` })
    expect(unknown.status).toBe(422)
    expect(unknown.body.error).toContain(`${PROVIDER}/no-such-model`)
    expect((await api(h.url, 'GET', '/api/threads/m2')).status).toBe(404)
  })

  it("a prompt on the local model streams that server's reply into the thread, through pi's real openai-completions provider", async () => {
    await newThread('chat')
    const tab = await follow('chat')
    expect(await prompt('chat', 'hello local model')).toMatchObject({ status: 202, body: { run: 1, queued: false } })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    const expected = 'Local model heard: hello local model'
    const deltas = framesOf(tab, 'assistant-delta')
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.map((f) => f.data.text).join('')).toBe(expected)
    expect(framesOf(tab, 'assistant-end').at(-1)!.data).toMatchObject({ text: expected, stopReason: 'stop' })
    expect(framesOf(tab, 'settled')).toEqual([expect.objectContaining({ data: expect.objectContaining({ run: 1, aborted: false }) })])
    expect(framesOf(tab, 'error')).toEqual([])
    // The request pi sent: streamed, to the model id from models.json, with the user's text.
    expect(llm.paths).toEqual(['POST /v1/chat/completions'])
    expect(llm.requests[0]).toMatchObject({ model: MODEL_ID, stream: true })
    expect(userTexts(llm.requests[0])).toEqual(['hello local model'])
  })
})

describe("the user's agent dir reaches the model", () => {
  it("the system prompt carries the agent dir's AGENTS.md, the workspace's AGENTS.md and the skill; the tools include the extension's tool", async () => {
    await newThread('ctx')
    const tab = await follow('ctx')
    await prompt('ctx', 'what do you know?')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    const [request] = llm.requests
    const system = systemOf(request)
    expect(system).toContain('GLOBAL-AGENTS-MARKER')
    expect(system).toContain(WORKSPACE_MARKER)
    expect(system).toContain('fixture-lore')
    expect(system).toContain('FIXTURE-SKILL-MARKER')
    expect(toolNames(request)).toContain('fixture_ask')
    const tool = request.tools!.find((t) => t.function.name === 'fixture_ask')!
    expect(tool.function.parameters).toMatchObject({ type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] })
  })

  it("a /greet prompt is expanded by pi's prompt template before it reaches the model", async () => {
    await newThread('tpl')
    const tab = await follow('tpl')
    await prompt('tpl', '/greet Ada grumpy')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    const expanded = 'Please write a warm greeting for Ada, in a grumpy mood. (expanded by the greet template)'
    expect(userTexts(llm.requests[0])).toEqual([expanded])
    expect(framesOf(tab, 'assistant-end').at(-1)!.data.text).toBe(`Local model heard: ${expanded}`)
  })

  it("the extension's tool asks its questions as cards answered over HTTP, and its result reaches the model", async () => {
    await newThread('ask')
    const tab = await follow('ask')
    await prompt('ask', 'please use fixture_ask')
    const asked: Frame[] = []
    const next = async () => {
      const f = await tab.waitFor((f) => f.event === 'extension-ui-request' && !asked.some((a) => a.data.id === f.data.id))
      asked.push(f)
      return f
    }

    const select = await next()
    expect(select.data).toMatchObject({ blocking: true, origin: { kind: 'extension' }, dialog: { method: 'select', title: 'Colour for the fixture?', options: ['red', 'green', 'blue'] } })
    expect(await answer('ask', { id: select.data.id, value: 'purple' })).toMatchObject({ status: 422 })
    expect((await answer('ask', { id: select.data.id, value: 'green' })).status).toBe(204)

    const confirm = await next()
    expect(confirm.data.dialog).toEqual({ method: 'confirm', title: 'Go ahead?', message: 'Use green for the fixture' })
    expect((await answer('ask', { id: confirm.data.id, confirmed: true })).status).toBe(204)

    const input = await next()
    expect(input.data.dialog).toEqual({ method: 'input', title: 'Your name?', placeholder: 'e.g. Ada' })
    expect((await answer('ask', { id: input.data.id, value: 'Grace' })).status).toBe(204)

    const editor = await next()
    expect(editor.data.dialog).toEqual({ method: 'editor', title: 'Any notes?', prefill: 'prefilled notes' })
    expect((await answer('ask', { id: editor.data.id, value: 'ship it\non Friday' })).status).toBe(204)

    await tab.waitFor(is('status', { busy: false, run: 1 }))
    for (const a of asked) expect(tab.frames.find(is('dialog-settled', { id: a.data.id }))?.data.outcome).toBe('answered')
    expect(tab.frames.find(is('notify'))?.data).toMatchObject({ message: 'fixture_ask asked about the fixture', level: 'info' })
    const result = 'colour=green go=true name=Grace notes=ship it\non Friday'
    expect(framesOf(tab, 'tool-start')[0].data).toMatchObject({ name: 'fixture_ask', args: { topic: 'the fixture' } })
    expect(framesOf(tab, 'tool-end')[0].data).toMatchObject({
      isError: false,
      result: { text: result, details: { colour: 'green', go: true, name: 'Grace', notes: 'ship it\non Friday' } },
    })

    // The second request to the local server carries the tool call and its result.
    expect(llm.requests).toHaveLength(2)
    const followUp = llm.requests[1].messages
    const call = followUp.find((m) => m.role === 'assistant' && m.tool_calls?.length)!
    expect(call.tool_calls![0].function).toMatchObject({ name: 'fixture_ask' })
    expect(JSON.parse(call.tool_calls![0].function.arguments)).toEqual({ topic: 'the fixture' })
    const toolResult = followUp.find((m) => m.role === 'tool')!
    expect(toolResult.tool_call_id).toBe(call.tool_calls![0].id)
    expect(textOf(toolResult.content)).toBe(result)
    expect(framesOf(tab, 'assistant-end').at(-1)!.data.text).toBe(`Thanks, the tool said: ${result}`)
  })

  it("the extension's /fixture-hello command runs in pi, notifies the thread and never reaches the model", async () => {
    await newThread('cmd')
    const tab = await follow('cmd')
    expect((await prompt('cmd', '/fixture-hello Ada')).status).toBe(202)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.frames.find(is('notify'))?.data).toMatchObject({ message: 'Hello Ada from the fixture extension', level: 'info' })
    expect(tab.frames.find(is('prompt-handled'))?.data).toMatchObject({ text: '/fixture-hello Ada' })
    expect(tab.frames.find(is('settled'))?.data).toMatchObject({ run: 1, aborted: false })
    expect(tab.events()).not.toContain('user-message')
    expect(tab.events()).not.toContain('assistant-start')
    expect(llm.requests).toEqual([])
  })

  it("cancelling the extension's cards hands it pi's own cancel values, and the run still ends normally", async () => {
    await newThread('nope')
    const tab = await follow('nope')
    await prompt('nope', 'please use fixture_ask')
    const seen = new Set<string>()
    for (const method of ['select', 'confirm', 'input', 'editor']) {
      const card = await tab.waitFor((f) => f.event === 'extension-ui-request' && !seen.has(f.data.id))
      seen.add(card.data.id)
      expect(card.data.dialog.method).toBe(method)
      expect((await answer('nope', { id: card.data.id, cancelled: true })).status).toBe(204)
    }
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    for (const id of seen) expect(tab.frames.find(is('dialog-settled', { id }))?.data.outcome).toBe('cancelled')
    const result = 'colour=(none) go=false name=(none) notes=(none)'
    expect(textOf(llm.requests[1].messages.find((m) => m.role === 'tool')!.content)).toBe(result)
    expect(tab.frames.find(is('settled'))?.data).toMatchObject({ run: 1, aborted: false })
  })
})
