/**
 * Checks real answers against the server's own OpenAPI document: the status is documented for the
 * route, and the body validates against the schema the document gives for it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { expect } from 'vitest'
import { api } from './harness.js'

export async function contract(url: string, headers: Record<string, string> = {}) {
  const doc = (await api(url, 'GET', '/api/openapi.json', undefined, headers)).body
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  /** `route` is the document's path (`/api/threads/{id}/prompt`). */
  return (method: string, route: string, res: { status: number; body: unknown }) => {
    const response = doc.paths[route]?.[method.toLowerCase()]?.responses?.[String(res.status)]
    expect(response, `${method} ${route} ${res.status} is in the document`).toBeDefined()
    if (res.status === 204) return expect(res.body).toBeUndefined()
    const valid = ajv.validate(response.content?.['application/json']?.schema, res.body)
    expect(valid, `${method} ${route} ${res.status}: ${ajv.errorsText()} in ${JSON.stringify(res.body)}`).toBe(true)
  }
}
