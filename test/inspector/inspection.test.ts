import { afterEach, describe, expect, it } from 'vitest'
import { ATTACHED, digest, type InspectionRecord } from '../../src/host/inspection.js'
import { confirm, of, openDialogId, tick, world, type World } from './setup.js'

let w: World
afterEach(() => w?.close())

/** An ask_user_question call's question (the thread's ask-queue shows it). */
const question = { id: 'q1', prompt: 'Pick', mode: 'single' as const, options: [{ value: 'a', label: 'a' }], allowOther: false }

const connect = (after?: number, thread?: string) => {
  const seen: InspectionRecord[] = []
  const c = w.inspection.connect((r) => seen.push(r), after, thread)
  return { seen, ...c }
}

describe('inspection records', () => {
  it('a prompt is recorded as an event from the host, then a snapshot: the new state, the transition taken, a context digest', async () => {
    w = await world({ now: () => 1234 })
    const { seen } = connect()
    await w.prompt('t1', 'hello')
    const thread = of(seen, 'thread:t1')
    const prompt = thread.find((r) => r.kind === 'event' && r.event.type === 'PROMPT')!
    expect(prompt).toMatchObject({ kind: 'event', threadId: 't1', ts: 1234, event: { type: 'PROMPT', text: 'hello' } })
    expect(prompt).not.toHaveProperty('origin')
    const after = thread[thread.indexOf(prompt) + 1]
    // Partial on the context only: other fields of the thread's context may come and go.
    expect(after).toMatchObject({
      id: prompt.id + 1,
      ts: 1234,
      threadId: 't1',
      actorId: 'thread:t1',
      kind: 'snapshot',
      event: 'PROMPT',
      value: 'running',
      status: 'active',
      context: { threadId: 't1', run: 1, dialogs: [], pending: [] },
      transitions: ['thread.idle|PROMPT|1'],
    })
  })

  it('a thread that starts while watched is announced with its machine and current state, and its ask-queue once it asks', async () => {
    w = await world()
    const { seen } = connect()
    await w.prompt('t1', 'hello')
    expect(seen.find((r) => r.actorId === 'thread:t1' && r.kind === 'actor.started')).toMatchObject({ machineId: 'thread', systemId: 'thread:t1' })
    // The ask-queue is spawned at the thread's first turn, not with the thread.
    expect(seen.find((r) => r.actorId === 'thread:t1/askQueue')).toBeUndefined()
    void w.runtimes.get('t1').ui.askUser(question, {})
    expect(seen.find((r) => r.actorId === 'thread:t1/askQueue' && r.kind === 'actor.started')).toMatchObject({
      machineId: 'askQueue',
      parentId: 'thread:t1',
      systemId: 'askQueue:t1',
    })
    expect(seen.find((r) => r.actorId === 'thread:t1/askQueue' && r.kind === 'snapshot')).toMatchObject({ value: 'idle' })
  })

  it('a dialog: started by the thread, ANSWER comes from the thread actor, it settles, then it is recorded stopped', async () => {
    w = await world()
    await w.prompt('t1', 'hello')
    const { seen } = connect()
    void w.runtimes.get('t1').ui.ask(confirm)
    const dialogId = openDialogId(w, 't1')
    const path = `thread:t1/${dialogId}`
    expect(await w.registry.answer('t1', { id: dialogId, confirmed: true })).toEqual({ kind: 'answered' })
    await tick()
    const dialog = of(seen, path)
    expect(dialog[0]).toMatchObject({ kind: 'actor.started', machineId: 'dialog', parentId: 'thread:t1' })
    expect(dialog.find((r) => r.kind === 'snapshot' && r.value === 'open')).toMatchObject({
      context: { id: dialogId, spec: { method: 'confirm', title: 'Deploy?' } },
    })
    const answer = dialog.find((r) => r.kind === 'event' && r.event.type === 'ANSWER')
    expect(answer).toMatchObject({ origin: 'thread:t1', event: { type: 'ANSWER', answer: { confirmed: true } } })
    expect(dialog.find((r) => r.kind === 'snapshot' && r.event === 'ANSWER')).toMatchObject({
      value: 'settled',
      status: 'done',
      transitions: ['dialog.open|ANSWER|0'],
      context: { outcome: 'answered' },
    })
    expect(dialog.at(-1)).toMatchObject({ kind: 'actor.stopped', status: 'done' })
    // The thread heard it from the dialog and forgot it.
    expect(of(seen, 'thread:t1').find((r) => r.kind === 'event' && r.event.type === `xstate.done.actor.${dialogId}`)).toMatchObject({
      origin: path,
    })
  })

  it('attaching to a thread already running reads every actor as it is now', async () => {
    w = await world()
    await w.prompt('t1', 'hello')
    // An ask_user_question call: the ask-queue shows it as a dialog.
    void w.runtimes.get('t1').ui.askUser(question, {})
    const { seen } = connect()
    const dialogId = openDialogId(w, 't1')
    expect(seen.filter((r) => r.kind === 'actor.started').map((r) => r.actorId)).toEqual([
      'thread:t1',
      'thread:t1/askQueue',
      `thread:t1/${dialogId}`,
    ])
    expect(seen.filter((r) => r.kind === 'snapshot').map((r) => [r.actorId, r.kind === 'snapshot' && r.event, r.kind === 'snapshot' && r.value])).toEqual([
      ['thread:t1', ATTACHED, 'running'],
      ['thread:t1/askQueue', ATTACHED, 'showing'],
      [`thread:t1/${dialogId}`, ATTACHED, 'open'],
    ])
  })

  it('a retired thread and its children are recorded stopped', async () => {
    w = await world()
    await w.prompt('t1', 'hello')
    void w.runtimes.get('t1').ui.askUser(question, {})
    const dialogId = openDialogId(w, 't1')
    const { seen } = connect()
    await w.registry.delete('t1')
    await tick()
    expect(seen.filter((r) => r.kind === 'actor.stopped').map((r) => r.actorId).sort()).toEqual(
      ['thread:t1', 'thread:t1/askQueue', `thread:t1/${dialogId}`].sort(),
    )
    expect(w.inspection.attachedThreads).toEqual([])
  })

  it('a client gets the retained records after its resume point, of its thread only, then the live ones', async () => {
    w = await world()
    const first = connect()
    await w.prompt('t1', 'one')
    await w.prompt('t2', 'two')
    const mark = first.seen.at(-1)!.id
    w.runtimes.get('t1').settle()
    const resumed = connect(mark, 't1')
    expect(resumed.replay.length).toBeGreaterThan(0)
    expect(resumed.replay.every((r) => r.id > mark && r.threadId === 't1')).toBe(true)
    expect(connect(undefined, 't2').replay.map((r) => r.id)).toEqual(first.seen.filter((r) => r.threadId === 't2').map((r) => r.id))
  })
})

describe('history bound', () => {
  it('each actor keeps only its last N records; the newest survive, in order', async () => {
    w = await world({ historySize: 5 })
    connect()
    await w.prompt('t1', 'one')
    for (let i = 0; i < 10; i++) {
      w.runtimes.get('t1').settle()
      await w.prompt('t1', `again ${i}`)
    }
    const history = w.inspection.history('thread:t1')
    expect(history).toHaveLength(5)
    const ids = history.map((r) => r.id)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    expect(history.at(-1)).toMatchObject({ kind: 'snapshot', value: 'running', context: { run: 11 } })
    expect(w.inspection.records(0, 't1').filter((r) => r.actorId === 'thread:t1')).toHaveLength(5)
  })

  it('stopped actors are forgotten oldest first beyond the retired bound; live ones never', async () => {
    w = await world({ retiredActors: 2 })
    connect()
    await w.prompt('t1', 'one')
    // A question through the ask-queue (spawned by it), cancelled: the queue stays, live.
    void w.runtimes.get('t1').ui.askUser(question, {})
    w.registry.answer('t1', { id: openDialogId(w, 't1'), cancelled: true })
    await tick()
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      void w.runtimes.get('t1').ui.ask(confirm)
      const id = openDialogId(w, 't1')
      ids.push(id)
      w.registry.answer('t1', { id, confirmed: true })
      await tick()
    }
    expect(ids.map((id) => w.inspection.history(`thread:t1/${id}`).length > 0)).toEqual([false, false, true, true])
    expect(w.inspection.history('thread:t1').length).toBeGreaterThan(0)
    expect(w.inspection.history('thread:t1/askQueue').length).toBeGreaterThan(0)
  })
})

describe('digest', () => {
  it('keeps a context small: short strings, a few items, a few levels, no functions or actors', () => {
    const long = 'x'.repeat(200)
    const d = digest({ s: long, list: Array.from({ length: 10 }, (_, i) => i), deep: { a: { b: { c: { d: 1 } } } }, f: () => 1, u: undefined }) as Record<string, unknown>
    expect((d.s as string).length).toBe(80)
    expect(d.list).toEqual([0, 1, 2, 3, 4, 5, '…+4'])
    expect(d.deep).toEqual({ a: { b: '{…}' } })
    expect(d.f).toBe('[function]')
    expect('u' in d).toBe(false)
    expect(JSON.parse(JSON.stringify(d))).toEqual(d)
  })
})
