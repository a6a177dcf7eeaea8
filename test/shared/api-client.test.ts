/**
 * The route table (src/schemas/api-routes.ts) against the running server, and the typed client
 * built on it: the table names every route the server documents with the same shapes, the client
 * drives a real server end to end, and the compiler holds a caller to the table's types.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import fastifySwagger from '@fastify/swagger'
import Fastify from 'fastify'
import ts from 'typescript'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { apiRoutes, type RouteSpec } from '../../src/schemas/api-routes.js'
import { ApiError, createApiClient, hasErrorCode, isApiError } from '../../src/shared/api-client.js'
import { startHarness, type Harness } from '../server/harness.js'

const ROOT = resolve(import.meta.dirname, '../..')

type Operation = { parameters?: unknown[]; requestBody?: unknown; responses?: Record<string, unknown> }
type Document = { paths: Record<string, Record<string, Operation>> }

/** What @fastify/swagger documents for the table alone: the same conversion the server's document goes through. */
async function documentOfTable(): Promise<Document> {
  const app = Fastify()
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  await app.register(fastifySwagger, { openapi: { openapi: '3.1.0', info: { title: 'the table', version: '0' } } })
  for (const spec of Object.values(apiRoutes) as RouteSpec[]) {
    const { params, querystring, body, headers, response } = spec
    const schema = Object.fromEntries(Object.entries({ params, querystring, body, headers, response }).filter(([, s]) => s !== undefined))
    app.route({ method: spec.method, url: spec.path, schema, handler: async () => ({}) })
  }
  await app.ready()
  const doc = app.swagger() as unknown as Document
  await app.close()
  return doc
}

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })))

/** Parameters in a stable order: the document lists them in the order the schemas were given. */
const comparable = (op: Operation) => ({
  parameters: [...(op.parameters ?? [])].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  requestBody: op.requestBody,
  responses: op.responses,
})

let h: Harness
/** A real server (with the inspector's routes, as `npm start` on loopback has them) for each test of the block. */
function withServer(): void {
  beforeEach(async () => {
    h = await startHarness({ demoDelayMs: 2, inspector: true })
  })
  afterEach(async () => {
    await h.close()
  })
}

describe('the route table', () => {
  withServer()

  it('names every route of /api/openapi.json with its method and path, and nothing else', async () => {
    const live = (await (await fetch(`${h.url}/api/openapi.json`)).json()) as Document
    const table = Object.values(apiRoutes).map((spec: RouteSpec) => `${spec.method} ${spec.path.replace(/:(\w+)/g, '{$1}')}`)
    expect(new Set(table).size).toBe(table.length)
    expect(table.sort()).toEqual(operations(live).map((o) => o.key).sort())
  })

  it('gives each route the params, query, body and response schemas the server documents, status by status', async () => {
    const live = new Map(operations((await (await fetch(`${h.url}/api/openapi.json`)).json()) as Document).map((o) => [o.key, o.op]))
    const ours = operations(await documentOfTable())
    expect(ours.length).toBe(live.size)
    for (const { key, op } of ours) {
      expect(live.has(key), `${key} is served`).toBe(true)
      expect(comparable(op), key).toEqual(comparable(live.get(key)!))
    }
  })
})

describe('the typed client', () => {
  withServer()

  it('creates a thread, prompts it and reads it back from a real server, without following it', async () => {
    const th = createApiClient({ baseUrl: h.url })
    const { threadId } = await th.call('createThread', { body: { title: 'From a script' } })
    const receipt = await th.call('prompt', { params: { id: threadId }, body: { message: 'hello' } })
    expect(receipt).toEqual({ threadId, messageId: expect.any(String), run: 1, queued: false })
    expect(await th.call('getThread', { params: { id: threadId } })).toMatchObject({ threadId, title: 'From a script', run: 1 })
    expect((await th.call('listThreads')).threads.map((t) => t.threadId)).toEqual([threadId])
    expect((await th.call('listModels')).default).toBe('demo')
    // A command answers 200 with its own receipt, through the same call.
    expect(await th.call('prompt', { params: { id: threadId }, body: { message: '/name Renamed' } })).toMatchObject({
      command: 'name',
      thread: { title: 'Renamed' },
    })
    expect(await th.call('deleteThread', { params: { id: threadId } })).toBeUndefined()
  })

  it('answers a 404 and a 422 as typed errors carrying the status and the body, and `request` as replies', async () => {
    const th = createApiClient({ baseUrl: h.url })
    const missing = await th.call('getThread', { params: { id: 'nope' } }).catch((err: unknown) => err)
    expect(isApiError(missing, 'getThread')).toBe(true)
    expect(isApiError(missing, 'prompt')).toBe(false)
    expect(missing).toMatchObject({ status: 404, body: { error: 'no thread nope' }, message: 'no thread nope' })

    const { threadId } = await th.call('createThread')
    const refused = await th.call('prompt', { params: { id: threadId }, body: { message: '/nam Typo' } }).catch((err: unknown) => err)
    if (!isApiError(refused, 'prompt') || refused.status !== 422) throw refused
    expect(refused.body.suggestions).toContain('/name')

    const reply = await th.request('createThread', { body: { model: 'nobody/nothing' } })
    expect(reply).toMatchObject({ status: 422, ok: false, body: { error: expect.any(String) } })
  })

  it('carries the stable code of every error answer, for a caller to switch on instead of the status', async () => {
    const th = createApiClient({ baseUrl: h.url })
    const missing = await th.call('getThread', { params: { id: 'nope' } }).catch((err: unknown) => err)
    expect(missing).toMatchObject({ code: 'THREAD_NOT_FOUND' })
    expect(hasErrorCode(missing, 'THREAD_NOT_FOUND', 'THREAD_NOT_LIVE')).toBe(true)
    const { threadId } = await th.call('createThread')
    const idle = await th.call('abort', { params: { id: threadId } }).catch((err: unknown) => err)
    expect(hasErrorCode(idle, 'THREAD_NOT_LIVE', 'THREAD_IDLE')).toBe(true)
    expect(hasErrorCode(idle, 'RUN_STALE')).toBe(false)
    const reply = await th.request('prompt', { params: { id: threadId }, body: { message: '/nam Typo' } })
    expect(reply).toMatchObject({ status: 422, body: { code: 'UNKNOWN_COMMAND' } })
    // Not threadhost's answer (a proxy's page): no code, and nothing matches.
    expect(hasErrorCode(new ApiError(502, { error: 'Bad Gateway' }), 'RUNTIME_FAILED')).toBe(false)
  })

  it('sends the Idempotency-Key it is given, so a repeated create runs once', async () => {
    const th = createApiClient({ baseUrl: h.url })
    const first = await th.call('createThread', { body: { title: 'Once' }, idempotencyKey: 'script-create-1' })
    const again = await th.call('createThread', { body: { title: 'Once' }, idempotencyKey: 'script-create-1' })
    expect(again).toEqual(first)
    expect((await th.call('listThreads')).threads).toHaveLength(1)
  })

  it('builds the follow URL an EventSource needs, and sends the bearer token when it has one', async () => {
    await h.close()
    h = await startHarness({ token: 'a-token-of-16-chars-or-more' })
    const anonymous = createApiClient({ baseUrl: h.url })
    expect(await anonymous.request('listThreads')).toMatchObject({ status: 401, ok: false })
    const th = createApiClient({ baseUrl: h.url, token: 'a-token-of-16-chars-or-more' })
    expect(await th.call('listThreads')).toEqual({ threads: [] })
    expect(th.url('follow', { params: { id: 'a b' }, query: { after: '3', token: 't' } })).toBe(`${h.url}/api/threads/a%20b/follow?after=3&token=t`)
  })
})

describe('the client\'s types', () => {
  // The compiler takes seconds on TypeBox's types; this is not a timing assertion.
  it('holds a caller to the table at compile time (test/shared/api-client.types.ts compiles clean)', { timeout: 120_000 }, () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
    const program = ts.createProgram([join(ROOT, 'test/shared/api-client.types.ts')], config!.options)
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    expect(diagnostics).toEqual([])
  })
})

describe('the README', () => {
  withServer()

  it('its "Scripting threadhost" script runs as written against a server', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## Scripting threadhost'))
    const script = /```ts\n([\s\S]*?)```/.exec(section)?.[1]
    expect(script).toMatch(/createApiClient/)
    const dir = await mkdtemp(join(tmpdir(), 'threadhost-script-'))
    try {
      // The README's script sits in the checkout; this copy sits in a temp dir, so its import points back.
      const file = join(dir, 'hello.mts')
      await writeFile(file, script!.replaceAll("'./src/", `'${ROOT}/src/`))
      const child = spawn(process.execPath, ['--import', 'tsx', file], {
        cwd: ROOT,
        env: { ...process.env, THREADHOST_URL: h.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const code = await new Promise<number | null>((done) => child.on('exit', done))
      expect(output).toMatch(/^thread \S+ is on run 1/m)
      expect(code, output).toBe(0)
      expect((await createApiClient({ baseUrl: h.url }).call('listThreads')).threads).toHaveLength(1)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
