/**
 * Every bad input gets a 4xx JSON error and changes nothing: one table of requests, each checked for
 * its status, its `{error}` body (valid for the route in the OpenAPI document), and that neither the
 * thread list nor the data dir moved.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contract } from './contract.js'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ demoDelayMs: 2, inspector: true })
  await api(h.url, 'POST', '/api/threads', { id: 'keep', title: 'Kept' })
  // A live thread with an open question, so the dialog route has something a bad answer could touch.
  const tab = await SseClient.open(`${h.url}/api/threads/keep/follow`)
  await api(h.url, 'POST', '/api/threads/keep/prompt', { message: 'call ui_dialog {"method":"confirm","title":"Go?"}' })
  await tab.waitFor(is('extension-ui-request'))
  tab.close()
})
afterAll(async () => h?.close())

/** Every file under the data dir and a digest of its bytes (SQLite's shared-memory index is not data). */
function dataDirState(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (!p.endsWith('-shm')) out[relative(dir, p)] = `${statSync(p).size}:${createHash('sha1').update(readFileSync(p)).digest('hex')}`
    }
  }
  walk(dir)
  return out
}

/** A raw request, for what fetch will not send (two Host headers). */
function raw(url: string, method: string, path: string, headers: [string, string][], body?: string) {
  const { port } = new URL(url)
  return new Promise<{ status: number; body: unknown; type: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: headers.flat() as unknown as Record<string, string> }, (res) => {
      let text = ''
      res.on('data', (c) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), type: String(res.headers['content-type']) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

type Case = { name: string; method: string; path: string; route: string; body?: string; headers?: Record<string, string>; status: number }
const JSON_TYPE = { 'content-type': 'application/json' }
const T = '/api/threads/{id}'

const cases: Case[] = [
  // Bodies that are JSON but not an object — `null` used to create a thread.
  ...['null', '[]', '"x"', '1', 'true'].flatMap((body): Case[] => [
    { name: `create with ${body}`, method: 'POST', path: '/api/threads', route: '/api/threads', body, headers: JSON_TYPE, status: 400 },
    { name: `prompt with ${body}`, method: 'POST', path: '/api/threads/fresh/prompt', route: `${T}/prompt`, body, headers: JSON_TYPE, status: 400 },
    { name: `abort with ${body}`, method: 'POST', path: '/api/threads/keep/abort', route: `${T}/abort`, body, headers: JSON_TYPE, status: 400 },
    { name: `dialog with ${body}`, method: 'POST', path: '/api/threads/keep/dialog', route: `${T}/dialog`, body, headers: JSON_TYPE, status: 400 },
    { name: `rename with ${body}`, method: 'PATCH', path: '/api/threads/keep', route: T, body, headers: JSON_TYPE, status: 400 },
  ]),
  // Bodies that are not JSON at all, whatever they claim to be: all 400 (never 415).
  ...(
    [
      ['text/plain', '{"id":"plain"}'],
      ['application/x-www-form-urlencoded', 'id=form'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="id"\r\n\r\nmulti\r\n--x--\r\n'],
      ['application/vnd.api+json', '{"id":"vnd"}'],
      ['application/jsonx', '{"id":"jsonx"}'],
      ['application/json; charset=utf-16', '{"id":"utf16"}'],
      ['application/json; charset=iso-8859-1', '{"id":"latin"}'],
      ['application/json', '{"id":'],
      ['application/json', '{"id":"x"} trailing'],
    ] as const
  ).flatMap(([type, body]): Case[] => [
    { name: `create as ${type}: ${body.slice(0, 12)}`, method: 'POST', path: '/api/threads', route: '/api/threads', body, headers: { 'content-type': type }, status: 400 },
    { name: `prompt as ${type}`, method: 'POST', path: '/api/threads/fresh/prompt', route: `${T}/prompt`, body: body.replace('"id"', '"message"'), headers: { 'content-type': type }, status: 400 },
    { name: `dialog as ${type}`, method: 'POST', path: '/api/threads/keep/dialog', route: `${T}/dialog`, body, headers: { 'content-type': type }, status: 400 },
  ]),
  { name: 'create with a body and no content type', method: 'POST', path: '/api/threads', route: '/api/threads', body: '{"id":"untyped"}', status: 400 },
  { name: 'abort with a body and no content type', method: 'POST', path: '/api/threads/keep/abort', route: `${T}/abort`, body: '{}', status: 400 },
  // Shapes the schemas refuse.
  { name: 'create with an unknown field', method: 'POST', path: '/api/threads', route: '/api/threads', body: '{"id":"u1","nonsense":1}', headers: JSON_TYPE, status: 400 },
  { name: 'create with a bad id', method: 'POST', path: '/api/threads', route: '/api/threads', body: '{"id":"../etc"}', headers: JSON_TYPE, status: 400 },
  { name: 'prompt with an empty message', method: 'POST', path: '/api/threads/fresh/prompt', route: `${T}/prompt`, body: '{"message":""}', headers: JSON_TYPE, status: 400 },
  { name: 'prompt with a bad thread id', method: 'POST', path: '/api/threads/-x/prompt', route: `${T}/prompt`, body: '{"message":"hi"}', headers: JSON_TYPE, status: 400 },
  { name: 'abort with a run of 0', method: 'POST', path: '/api/threads/keep/abort', route: `${T}/abort`, body: '{"run":0}', headers: JSON_TYPE, status: 400 },
  { name: 'dialog with no id', method: 'POST', path: '/api/threads/keep/dialog', route: `${T}/dialog`, body: '{"confirmed":true}', headers: JSON_TYPE, status: 400 },
  { name: 'rename with nothing to change', method: 'PATCH', path: '/api/threads/keep', route: T, body: '{}', headers: JSON_TYPE, status: 400 },
  { name: 'draft as text', method: 'PUT', path: '/api/threads/keep/draft', route: `${T}/draft`, body: 'typing', headers: { 'content-type': 'text/plain' }, status: 400 },
  // Queries and headers.
  { name: 'events resumed after two points', method: 'GET', path: '/api/debug/events?after=1&after=2', route: '/api/debug/events', status: 400 },
  { name: 'follow resumed after two points', method: 'GET', path: '/api/threads/keep/follow?after=1&after=2', route: `${T}/follow`, status: 400 },
  { name: 'create with an Idempotency-Key holding a blank', method: 'POST', path: '/api/threads', route: '/api/threads', body: '{"id":"k1"}', headers: { ...JSON_TYPE, 'idempotency-key': 'a b' }, status: 400 },
  { name: 'prompt with an Idempotency-Key of 256 characters', method: 'POST', path: '/api/threads/fresh/prompt', route: `${T}/prompt`, body: '{"message":"hi"}', headers: { ...JSON_TYPE, 'idempotency-key': 'k'.repeat(256) }, status: 400 },
  { name: 'abort with an empty Idempotency-Key', method: 'POST', path: '/api/threads/keep/abort', route: `${T}/abort`, body: '{}', headers: { ...JSON_TYPE, 'idempotency-key': '' }, status: 400 },
]

describe('bad input', () => {
  it('every bad input gets a 4xx JSON error and changes neither the thread list nor the data dir', async () => {
    const check = await contract(h.url)
    const threads = (await api(h.url, 'GET', '/api/threads')).body
    const files = dataDirState(h.dataDir)
    for (const c of cases) {
      const response = await fetch(h.url + c.path, { method: c.method, headers: c.headers ?? {}, body: c.body })
      const text = await response.text()
      expect(response.status, `${c.name}: ${text}`).toBe(c.status)
      expect(response.headers.get('content-type'), c.name).toMatch(/^application\/json/)
      const body = JSON.parse(text)
      expect(typeof body.error, c.name).toBe('string')
      check(c.method, c.route, { status: response.status, body })
    }
    // Two Host headers (fetch sends one) and two Idempotency-Keys.
    const twoHosts = await raw(h.url, 'POST', '/api/threads', [['Host', 'localhost'], ['Host', 'elsewhere.example'], ['Content-Type', 'application/json']], '{"id":"twohost"}')
    expect(twoHosts).toMatchObject({ status: 400, body: { error: expect.any(String) }, type: expect.stringMatching(/^application\/json/) })
    check('POST', '/api/threads', twoHosts)
    const twoKeys = await raw(h.url, 'POST', '/api/threads', [['Host', 'localhost'], ['Idempotency-Key', 'a'], ['Idempotency-Key', 'b'], ['Content-Type', 'application/json']], '{"id":"twokeys"}')
    expect(twoKeys.status).toBe(400)
    check('POST', '/api/threads', twoKeys)

    expect((await api(h.url, 'GET', '/api/threads')).body).toEqual(threads)
    expect(dataDirState(h.dataDir)).toEqual(files)
    // The question the bad answers aimed at is still open.
    expect((await api(h.url, 'GET', '/api/threads/keep')).body).toMatchObject({ openDialogs: 1, busy: true })
  })
})
