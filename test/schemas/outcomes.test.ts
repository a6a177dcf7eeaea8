/**
 * The outcome tables (src/schemas/outcomes.ts) against the route table and the docs: every outcome
 * a command can come to is answered with a status its route documents, every refusal carries a
 * code docs/api.md explains, and the machines refuse with the vocabulary's literals.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { ThreadEmitted } from '../../src/machines/thread.machine.js'
import { apiRoutes, type RouteName, type RouteSpec } from '../../src/schemas/api-routes.js'
import {
  abortOutcomes,
  answerOf,
  answerOutcomes,
  answersIn,
  changesOutcomes,
  createOutcomes,
  editOutcomes,
  ERROR_CODES,
  forkOutcomes,
  guardOutcomes,
  isRefusal,
  lookupOutcomes,
  followOutcomes,
  deleteOutcomes,
  machineOutcomes,
  shortcutOutcomes,
  promptOutcomes,
  restoreOutcomes,
  updateOutcomes,
  versionOutcomes,
  worktreeOutcomes,
  terminalInputOutcomes,
  type AbortRefusal,
  type PromptRefusal,
} from '../../src/schemas/outcomes.js'
import { guarded, refusedWrites, withBody } from '../../src/schemas/responses.js'

const ROOT = resolve(import.meta.dirname, '../..')

type AnyTable = Parameters<typeof answersIn>[0]
/** Which routes answer with which table. */
const answeredBy: Array<[AnyTable, RouteName[]]> = [
  [createOutcomes, ['createThread']],
  [updateOutcomes, ['updateThread']],
  [forkOutcomes, ['forkThread']],
  [promptOutcomes, ['prompt']],
  [abortOutcomes, ['abort']],
  [answerOutcomes, ['answerDialog']],
  [machineOutcomes, ['debugMachine']],
  [shortcutOutcomes, ['runShortcut']],
  [editOutcomes, ['editMessage']],
  [versionOutcomes, ['switchVersion']],
  [changesOutcomes, ['runChanges', 'threadChanges']],
  [restoreOutcomes, ['revert', 'redo']],
  [worktreeOutcomes, ['deleteThread']],
  [deleteOutcomes, ['deleteThread']],
  [terminalInputOutcomes, ['terminalInput']],
  [followOutcomes, ['follow']],
]

const documented = (name: RouteName) => Object.keys((apiRoutes[name] as RouteSpec).response).map(Number)

describe('the outcome tables', () => {
  it('answer every outcome of a command with a status its route documents', () => {
    for (const [table, routes] of answeredBy) {
      for (const route of routes) {
        for (const { kind, answer } of answersIn(table)) expect(documented(route), `${route}: ${kind} → ${answer.status}`).toContain(answer.status)
      }
    }
    // A lookup's `unknown` is a 404 wherever a thread is looked up; `not-live` where only a live one will do.
    for (const route of ['getThread', 'deleteThread', 'listCommands', 'follow', 'reportDraft'] as const) expect(documented(route)).toContain(404)
    expect(new Set(answersIn(lookupOutcomes).map(({ answer }) => answer.status))).toEqual(new Set([404]))
  })

  it('answer what the guards refuse with a status every route of the guards documents', () => {
    const guardedStatuses = Object.keys({ ...withBody, ...refusedWrites }).map(Number)
    // No route answers a URL no route has; a reused key is documented where a key is taken (below);
    // `not-owner` answers only a request marked as passed on by another cluster node, never a route's own.
    const routeless = new Set(['route-not-found', 'idempotency-key-reused', 'not-owner'])
    for (const { kind, answer } of answersIn(guardOutcomes)) if (!routeless.has(kind)) expect(guardedStatuses, kind).toContain(answer.status)
    for (const name of Object.keys(apiRoutes) as RouteName[]) {
      for (const status of Object.keys(guarded).map(Number)) expect(documented(name), `${name} ${status}`).toContain(status)
    }
  })

  it('give the write guards statuses to the routes that take them, from the route table', () => {
    for (const [name, spec] of Object.entries(apiRoutes) as Array<[RouteName, RouteSpec]>) {
      if (spec.durable) expect(documented(name), name).toEqual(expect.arrayContaining([503, 507]))
      if (spec.idempotent) expect(documented(name), name).toContain(422)
    }
    // A stop takes a key but is never refused for the disk.
    expect(apiRoutes.abort).toMatchObject({ idempotent: true })
    expect('durable' in apiRoutes.abort).toBe(false)
  })

  it('give every refusal a code docs/api.md explains, and every code is used', () => {
    const docs = readFileSync(resolve(ROOT, 'docs/api.md'), 'utf8')
    const used = new Set<string>()
    for (const table of [...answeredBy.map(([t]) => t), guardOutcomes, lookupOutcomes]) {
      for (const { answer } of answersIn(table)) if (isRefusal(answer)) used.add(answer.code)
    }
    expect([...used].sort()).toEqual([...ERROR_CODES].sort())
    for (const code of ERROR_CODES) expect(docs, code).toContain(`\`${code}\``)
  })

  it('say of /model during a run that it applies between runs, not that the prompt asked not to be queued', () => {
    const { status, body } = answerOf(promptOutcomes, { kind: 'command-busy', command: 'model' }, { threadId: 't1' })
    expect(status).toBe(409)
    expect(body).toMatchObject({ code: 'THREAD_BUSY', reason: 'busy', error: expect.stringMatching(/\/model applies between runs/) })
    expect((body as { error: string }).error).not.toMatch(/asked not to be queued/)
  })

  it('keep the fields clients read before codes: reason, refusal, suggestions', () => {
    expect(answerOf(promptOutcomes, { kind: 'stale-run' }, { threadId: 't', run: 3 }).body).toMatchObject({ code: 'RUN_STALE', reason: 'stale-run' })
    expect(answerOf(answerOutcomes, { kind: 'refused', refusal: 'no' }, { threadId: 't', dialogId: 'd' }).body).toMatchObject({
      code: 'ANSWER_REFUSED',
      refusal: 'no',
    })
    expect(answerOf(promptOutcomes, { kind: 'unknown-command', name: 'nam', suggestions: ['/name'] }, { threadId: 't' }).body).toMatchObject({
      code: 'UNKNOWN_COMMAND',
      suggestions: ['/name'],
    })
    expect(answerOf(promptOutcomes, { kind: 'rejected', reason: 'shutdown' }, { threadId: 't' })).toMatchObject({
      status: 409,
      body: { code: 'PROMPT_WITHDRAWN', reason: 'shutdown' },
    })
  })

  it('are the literals the thread machine refuses with', () => {
    expectTypeOf<Extract<ThreadEmitted, { type: 'prompt.refused' }>['reason']>().toEqualTypeOf<PromptRefusal>()
    expectTypeOf<Extract<ThreadEmitted, { type: 'abort.refused' }>['reason']>().toEqualTypeOf<AbortRefusal>()
  })
})
