/**
 * The OpenAPI document against the running server: every route is in it, and the bodies the server
 * really answers validate against the schema the document gives for their status.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { api, is, SseClient, startHarness, type Harness } from './harness.js'

let h: Harness
const tabs: SseClient[] = []


beforeEach(async () => {
  h = await startHarness({ demoDelayMs: 2, inspector: true })
})
afterEach(async () => {
  for (const t of tabs.splice(0)) t.close()
  await h.close()
})

/** Every route the router holds, from fastify's own listing: `METHOD /path/{param}`. */
function registeredRoutes(printed: string): string[] {
  const routes: string[] = []
  const stack: string[] = []
  for (const line of printed.split('\n')) {
    const match = /^([│ ]*)(?:[├└]── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    const depth = match[1].length / 4
    stack.length = depth
    stack.push(match[2])
    const path = stack.join('').replace(/\/\/+/g, '/').replace(/:(\w+)/g, '{$1}')
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) if (method !== 'HEAD') routes.push(`${method} ${path}`)
  }
  return routes
}

describe('the OpenAPI document', () => {
  it('GET /api/openapi.json is OpenAPI 3.1 and lists every registered route but the docs page\'s own assets and /', async () => {
    const doc = (await api(h.url, 'GET', '/api/openapi.json')).body
    expect(doc.openapi).toBe('3.1.0')
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    )
    const routes = registeredRoutes(h.app.printRoutes({ commonPrefix: false }))
    expect(routes).toContain('POST /api/threads/{id}/prompt')
    expect(routes).toContain('GET /api/debug/machines/{machineId}')
    const undocumented = routes.filter((r) => !documented.includes(r))
    expect(undocumented.every((r) => r === 'GET /' || r.startsWith('GET /api/docs'))).toBe(true)
    expect(documented.sort()).toEqual(routes.filter((r) => !undocumented.includes(r)).sort())
    // The SSE routes say what they send.
    expect(Object.keys(doc.paths['/api/threads/{id}/follow'].get.responses['200'].content)).toEqual(['text/event-stream'])
    expect(Object.keys(doc.paths['/api/debug/events'].get.responses['200'].content)).toEqual(['text/event-stream'])
  })

  it('the reference page at /api/docs is served from this process and loads nothing from the network', async () => {
    const page = await fetch(`${h.url}/api/docs`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1])
    expect(assets.length).toBeGreaterThan(2)
    for (const asset of assets) expect(asset).toMatch(/^\/api\/docs\//)
    const init = await (await fetch(`${h.url}/api/docs/static/swagger-initializer.js`)).text()
    expect(init).toMatch(/validatorUrl: null/)
    expect(init.replace(/\/\/ .*$/gm, '')).not.toMatch(/https?:\/\//)
  })

  it('the document and the page sit behind the token like /api', async () => {
    await h.close()
    h = await startHarness({ token: 's3cret' })
    for (const path of ['/api/openapi.json', '/api/docs', '/metrics']) {
      expect((await api(h.url, 'GET', path)).status).toBe(401)
      expect((await api(h.url, 'GET', path, undefined, { authorization: 'Bearer s3cret' })).status).toBe(200)
    }
  })

  it('the answers the server gives validate against the document\'s schema for their status', async () => {
    const doc = (await api(h.url, 'GET', '/api/openapi.json')).body
    const ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats.default(ajv)
    const seen = new Set<string>()
    const check = async (method: string, route: string, path: string, body?: unknown) => {
      const res = await api(h.url, method, path, body)
      const response = doc.paths[route]?.[method.toLowerCase()]?.responses?.[String(res.status)]
      expect(response, `${method} ${route} ${res.status} is in the document`).toBeDefined()
      const schema = response.content?.['application/json']?.schema
      if (res.status === 204) expect(res.body).toBeUndefined()
      else {
        const valid = ajv.validate(schema, res.body)
        expect(valid, `${method} ${route} ${res.status}: ${ajv.errorsText()} in ${JSON.stringify(res.body)}`).toBe(true)
      }
      seen.add(`${method} ${route} ${res.status}`)
      return res
    }
    const T = '/api/threads/{id}'
    await check('POST', '/api/threads', '/api/threads', { id: 'v1', title: 'One' })
    await check('POST', '/api/threads', '/api/threads', { id: 'v1' })
    await check('POST', '/api/threads', '/api/threads', { model: 'nobody/nothing' })
    await check('POST', '/api/threads', '/api/threads', { nonsense: 1 })
    await check('GET', '/api/threads', '/api/threads')
    await check('GET', T, '/api/threads/v1')
    await check('GET', T, '/api/threads/nope')
    await check('PATCH', T, '/api/threads/v1', { title: 'Renamed' })
    await check('GET', '/api/models', '/api/models')
    await check('GET', `${T}/commands`, '/api/threads/v1/commands')
    await check('POST', `${T}/abort`, '/api/threads/nope/abort')
    await check('POST', `${T}/dialog`, '/api/threads/nope/dialog', { id: 'x', value: 'y' })

    const tab = await SseClient.open(`${h.url}/api/threads/v1/follow`)
    tabs.push(tab)
    await check('POST', `${T}/prompt`, '/api/threads/v1/prompt', { message: 'call ui_dialog {"method":"select","title":"Pick","options":["red","green"]}' })
    const asked = await tab.waitFor(is('extension-ui-request'))
    await check('POST', `${T}/prompt`, '/api/threads/v1/prompt', { message: 'queued behind', admission: 'reject' })
    await check('POST', `${T}/prompt`, '/api/threads/v1/prompt', { message: 'queued behind' })
    await check('POST', `${T}/prompt`, '/api/threads/v1/prompt', { message: '/nosuchcommand' })
    await check('POST', `${T}/prompt`, '/api/threads/v1/prompt', { message: 'x'.repeat(100_001) })
    await check('PATCH', T, '/api/threads/v1', { model: 'demo' })
    await check('PUT', `${T}/draft`, '/api/threads/v1/draft', { text: 'typing' })
    await check('POST', `${T}/dialog`, '/api/threads/v1/dialog', { id: asked.data.id, value: 'blue' })
    await check('POST', `${T}/dialog`, '/api/threads/v1/dialog', { id: 'no-such-question', value: 'red' })
    await check('POST', `${T}/dialog`, '/api/threads/v1/dialog', { id: asked.data.id, value: 'green' })
    await check('POST', `${T}/abort`, '/api/threads/v1/abort', { run: 99 })
    await check('POST', `${T}/abort`, '/api/threads/v1/abort')
    await tab.waitFor(is('status', { busy: false, run: 1 }))
    await check('POST', `${T}/abort`, '/api/threads/v1/abort')
    await check('POST', `${T}/prompt`, '/api/threads/v1/prompt', { message: '/name Third' })
    await check('GET', '/api/debug/actors', '/api/debug/actors')
    await check('GET', '/api/debug/machines/{machineId}', '/api/debug/machines/thread')
    await check('GET', '/api/debug/machines/{machineId}', '/api/debug/machines/nothing')
    await check('DELETE', T, '/api/threads/v1')
    await check('DELETE', T, '/api/threads/v1')
    await check('PUT', `${T}/draft`, '/api/threads/v1/draft', { text: 'typing' })

    for (const expected of [
      'POST /api/threads 201', 'POST /api/threads 409', 'POST /api/threads 422', 'POST /api/threads 400',
      `POST ${T}/prompt 202`, `POST ${T}/prompt 409`, `POST ${T}/prompt 422`, `POST ${T}/prompt 413`, `POST ${T}/prompt 200`,
      `GET ${T} 404`, `PATCH ${T} 409`, `POST ${T}/abort 200`, `POST ${T}/abort 404`, `POST ${T}/abort 409`,
      `POST ${T}/dialog 204`, `POST ${T}/dialog 422`, `POST ${T}/dialog 404`, 'GET /api/models 200', `GET ${T}/commands 200`,
      `PUT ${T}/draft 204`, `PUT ${T}/draft 404`, `DELETE ${T} 204`, `DELETE ${T} 404`,
    ]) expect(seen, expected).toContain(expected)
  })
})
