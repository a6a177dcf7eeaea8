/**
 * threadhost hosts the user's own pi, offline: a real agent dir (test/fixtures/agent — an extension
 * file loaded by pi's loader, a prompt template, a skill, AGENTS.md, models.json) and pi's REAL
 * `openai-completions` provider code talking to a tiny chat-completions server on loopback.
 * Everything is driven through threadhost's HTTP/SSE API only.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Frame, type Harness } from './harness.js'
import { copyFixtureAgentDir, LocalLlm, MODEL, MODEL_ID, PROVIDER, systemOf, textOf, toolNames, userTexts } from './local-llm.js'

const WORKSPACE_MARKER = 'WORKSPACE-AGENTS-MARKER: this workspace builds with make.'

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
  agentDir = await copyFixtureAgentDir(llm.url)
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
    expect(framesOf(tab, 'failure')).toEqual([])
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

describe("the rest of the extension's ctx.ui, and pi's commands", () => {
  it("the extension's /fixture-status puts its status item, widget, title and editor text on the follow; a late follower's snapshot keeps the status item, widget and live title; the title renames nothing", async () => {
    await newThread('shown')
    const tab = await follow('shown')
    expect((await prompt('shown', '/fixture-status')).status).toBe(202)
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(framesOf(tab, 'status-item').map((f) => f.data)).toEqual([expect.objectContaining({ key: 'fixture', text: 'ready' })])
    expect(framesOf(tab, 'widget').map((f) => f.data)).toEqual([expect.objectContaining({ key: 'fixture', lines: ['line one', 'line two'] })])
    expect(framesOf(tab, 'title').map((f) => f.data)).toEqual([expect.objectContaining({ title: 'Fixture title' })])
    expect(framesOf(tab, 'editor-text').map((f) => f.data)).toEqual([expect.objectContaining({ text: 'from the fixture' })])
    expect(tab.frames.find(is('prompt-handled'))?.data).toMatchObject({ text: '/fixture-status' })
    expect(llm.requests).toEqual([])

    // A tab that opens now gets the status item and the widget in its snapshot (they are state, not moments).
    const late = await follow('shown')
    const snapshot = await late.waitFor(is('snapshot'))
    expect(snapshot.data.statusItems).toEqual({ fixture: 'ready' })
    expect(snapshot.data.widgets).toEqual({ fixture: ['line one', 'line two'] })
    expect(snapshot.data).not.toHaveProperty('editorText')

    // The title is the extension's live title (issue 19: setTitle shows, it never renames or writes the thread).
    expect(snapshot.data.liveTitle).toBe('Fixture title')
    expect((await api(h.url, 'GET', '/api/threads/shown')).body.title).not.toBe('Fixture title')
  })

  it("GET …/commands lists threadhost's own commands, then the extension's commands, the /greet template and the skill, each with its kind", async () => {
    await newThread('cmds')
    const { status, body } = await api(h.url, 'GET', '/api/threads/cmds/commands')
    expect(status).toBe(200)
    const commands: { name: string; description: string; kind: string }[] = body.commands
    expect(commands.slice(0, 3).map((c) => [c.name, c.kind])).toEqual([
      ['name', 'threadhost'],
      ['model', 'threadhost'],
      ['thinking', 'threadhost'],
    ])
    expect(commands).toEqual(
      expect.arrayContaining([
        { name: 'fixture-hello', description: 'Say hello from the fixture extension', kind: 'extension' },
        { name: 'fixture-status', description: 'Put the fixture status, widget, title and editor text on screen', kind: 'extension' },
        { name: 'greet', description: 'Greet someone warmly', kind: 'template' },
        expect.objectContaining({ name: 'skill:fixture-lore', kind: 'skill', description: expect.stringContaining('Fixture lore') }),
      ]),
    )
  })

  it('a mistyped /fixture-helo is refused with 422 suggesting /fixture-hello, and nothing runs or reaches the model', async () => {
    await newThread('typo')
    const tab = await follow('typo')
    const refused = await prompt('typo', '/fixture-helo Ada')
    expect(refused.status).toBe(422)
    expect(refused.body.error).toContain('fixture-helo')
    expect(refused.body.suggestions).toContain('/fixture-hello')
    // The thread stays idle at run 0: the right command afterwards is run 1.
    expect((await prompt('typo', '/fixture-hello Ada')).body).toMatchObject({ run: 1 })
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    expect(tab.frames.filter(is('notify')).map((f) => f.data.message)).toEqual(['Hello Ada from the fixture extension'])
    expect(tab.events()).not.toContain('user-message')
    expect(llm.requests).toEqual([])
  })
})
