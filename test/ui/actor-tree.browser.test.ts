/** The inspector's list of actors in Chromium: a stopped actor says how it ended — done, stopped, or failed. */
import { afterEach, expect, test } from 'vitest'
import { page } from 'vitest/browser'
import '../../src/ui/inspector/actor-tree.js'
import type { ActorTree } from '../../src/ui/inspector/actor-tree.js'
import { RecordHistory } from '../../src/ui/inspector/history.js'
import type { InspectionRecord } from '../../src/ui/inspector/types.js'

afterEach(() => {
  document.body.innerHTML = ''
})

test('each stopped actor is listed with how it ended, a failed one as failed', async () => {
  const history = new RecordHistory()
  let id = 0
  const record = (actorId: string, body: Partial<InspectionRecord>) => ({ id: ++id, ts: id, threadId: 't1', actorId, ...body }) as InspectionRecord
  for (const [actorId, machineId, status] of [
    ['thread:t1/d1', 'dialog', 'done'],
    ['thread:t1/d2', 'dialog', 'stopped'],
    ['thread:t1/askQueue', 'askQueue', 'error'],
  ] as const) {
    history.add(record(actorId, { kind: 'actor.started', machineId }))
    history.add(record(actorId, { kind: 'actor.stopped', status }))
  }
  const tree = document.createElement('actor-tree') as ActorTree
  tree.stopped = history.stopped()
  document.body.append(tree)
  const list = page.getByRole('list', { name: 'Stopped (history)' })
  await expect.element(list.getByRole('button', { name: 'askQueue askQueue: failed' })).toBeVisible()
  await expect.element(list.getByRole('button', { name: 'dialog d2: stopped' })).toBeVisible()
  await expect.element(list.getByRole('button', { name: 'dialog d1: done' })).toBeVisible()
})
