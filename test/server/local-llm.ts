/**
 * The user's own pi, offline, for the server tests and the e2e tests: a tiny OpenAI-compatible
 * chat-completions server on loopback (pi's REAL `openai-completions` provider talks to it), and a
 * temp copy of the fixture agent dir (test/fixtures/agent) whose models.json points at it.
 */
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const FIXTURE_AGENT_DIR = join(import.meta.dirname, '../fixtures/agent')
export const PROVIDER = 'fixture-local'
export const MODEL_ID = 'fixture-chat'
export const MODEL = `${PROVIDER}/${MODEL_ID}`

export interface ChatMessage {
  role: string
  content?: string | { type: string; text?: string; image_url?: { url: string } }[] | null
  tool_calls?: { id: string; function: { name: string; arguments: string } }[]
  tool_call_id?: string
}
export interface ChatRequest {
  model: string
  stream?: boolean
  messages: ChatMessage[]
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[]
}

export type Reply = { text: string } | { toolCall: { name: string; arguments: object } }

export const textOf = (content: ChatMessage['content']): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((c) => c.text ?? '').join('') : ''

/** The scripted model: a tool result gets a final text; "use fixture_ask" gets a tool call; anything else an echo. */
export function script(request: ChatRequest): Reply {
  const last = request.messages.at(-1)!
  if (last.role === 'tool') return { text: `Thanks, the tool said: ${textOf(last.content)}` }
  const said = textOf(last.content)
  if (said.includes('use fixture_ask')) return { toolCall: { name: 'fixture_ask', arguments: { topic: 'the fixture' } } }
  return { text: `Local model heard: ${said}` }
}

const usageOf = (u = { prompt_tokens: 10, completion_tokens: 5 }) => ({ ...u, total_tokens: u.prompt_tokens + u.completion_tokens })

/** Streams `chat.completion.chunk`s scripted by `script` and keeps every request it was sent. */
export class LocalLlm {
  readonly requests: ChatRequest[] = []
  readonly paths: string[] = []
  /**
   * Answers the next requests with these failures: a status and message, as a provider that refuses;
   * or `cut`, a reply that starts streaming this text and then loses its connection mid-reply.
   */
  readonly failures: ({ status: number; message: string } | { cut: string })[] = []
  /** The next replies think first: each streams this reasoning (`reasoning_content`) before its text. */
  readonly reasoning: string[] = []
  /** What the next replies say they used (prompt and completion tokens); otherwise 10 and 5. */
  readonly usage: { prompt_tokens: number; completion_tokens: number }[] = []
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
    const failure = this.failures.shift()
    if (failure && 'status' in failure) {
      res.writeHead(failure.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: failure.message, type: 'invalid_request_error' } }))
      return
    }
    const reply = script(request)
    const id = `chatcmpl-${++this.calls}`
    const created = Math.floor(Date.now() / 1000)
    const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
    res.write(chunk({ role: 'assistant', content: '' }))
    if (failure) {
      res.write(chunk({ content: failure.cut }))
      // The connection drops mid-reply: no finish, no [DONE].
      await new Promise((r) => setTimeout(r, 20))
      res.destroy()
      return
    }
    const reasoning = this.reasoning.shift()
    if (reasoning !== undefined) {
      for (const piece of reasoning.match(/.{1,8}/gs) ?? []) {
        res.write(chunk({ reasoning_content: piece }))
        await new Promise((r) => setTimeout(r, 5))
      }
    }
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
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [], usage: usageOf(this.usage.shift()) })}\n\n`,
    )
    res.end('data: [DONE]\n\n')
  }
}

/**
 * The user's agent dir, copied out of the tree to a fresh temp dir (the caller removes it);
 * models.json gets the local server's real URL. Nothing is written under test/fixtures.
 */
export async function copyFixtureAgentDir(llmUrl: string): Promise<string> {
  const agentDir = await mkdtemp(join(tmpdir(), 'threadhost-user-pi-agent-'))
  await cp(FIXTURE_AGENT_DIR, agentDir, { recursive: true })
  const models = JSON.parse(await readFile(join(agentDir, 'models.json'), 'utf8'))
  models.providers[PROVIDER].baseUrl = llmUrl
  await writeFile(join(agentDir, 'models.json'), JSON.stringify(models, null, 2))
  return agentDir
}

/** The system prompt and the texts of the user messages of one request. */
export const systemOf = (r: ChatRequest) =>
  r.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n')
export const userTexts = (r: ChatRequest) => r.messages.filter((m) => m.role === 'user').map((m) => textOf(m.content))
export const toolNames = (r: ChatRequest) => (r.tools ?? []).map((t) => t.function.name)

/** A model of the same provider that takes images (pi's `input: ['text', 'image']`). */
export const VISION_MODEL_ID = 'fixture-vision'
export const VISION_MODEL = `${PROVIDER}/${VISION_MODEL_ID}`

/** Adds VISION_MODEL to an agent dir copied by `copyFixtureAgentDir` (never to test/fixtures). */
export async function addVisionModel(agentDir: string): Promise<void> {
  const file = join(agentDir, 'models.json')
  const models = JSON.parse(await readFile(file, 'utf8'))
  const chat = models.providers[PROVIDER].models[0]
  models.providers[PROVIDER].models.push({ ...chat, id: VISION_MODEL_ID, name: 'Fixture local vision', input: ['text', 'image'] })
  await writeFile(file, JSON.stringify(models, null, 2))
}

/** The image parts of one request's user messages, as data URLs. */
export const imageUrls = (r: ChatRequest): string[] =>
  r.messages.flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content.flatMap((c) => (c.type === 'image_url' && c.image_url ? [c.image_url.url] : [])) : []))

