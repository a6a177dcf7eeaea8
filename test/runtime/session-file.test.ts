import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SessionDamaged } from '../../src/runtime/port.js'
import { FakeBridge, piRuntimes, Recorder, tempDir } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A data dir whose thread `t` has two finished runs on disk, written by the real pi runtime. */
async function twoRuns() {
  const tmp = tempDir()
  cleanups.push(tmp.cleanup)
  const pi = await piRuntimes({ dataDir: tmp.dir })
  const runtime = await pi.create({ threadId: 't', model: 'demo', ui: new FakeBridge() })
  const rec = new Recorder(runtime)
  runtime.prompt({ messageId: 'm1', text: 'first' })
  await rec.next('settled')
  runtime.prompt({ messageId: 'm2', text: 'second' })
  await rec.next('settled', 2)
  await runtime.dispose()
  const file = join(tmp.dir, 'sessions', 't', 'session.jsonl')
  return { dir: tmp.dir, file, pi, lines: readFileSync(file, 'utf8').trimEnd().split('\n') }
}

const userTexts = (entries: { kind: string; text?: string }[]) => entries.flatMap((e) => (e.kind === 'user' ? [e.text] : []))

async function refused(promise: Promise<unknown>): Promise<SessionDamaged> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(SessionDamaged)
  return error as SessionDamaged
}

describe('session files: a torn last line is cut, any other damage is refused and never written', () => {
  it('a torn last line is cut off keeping every complete entry, and after a following prompt and a restart the history links up', async () => {
    const { dir, file, pi } = await twoRuns()
    const before = await pi.factory.readTranscript('t')
    appendFileSync(file, '{"type":"message","id":"torn","parentId":"x","message":{"role":"user","cont')
    // A cold read leaves the torn line out and writes nothing.
    const torn = readFileSync(file)
    expect(await pi.factory.readTranscript('t')).toEqual(before)
    expect(readFileSync(file).equals(torn)).toBe(true)

    const runtime = await pi.create({ threadId: 't', model: 'demo', ui: new FakeBridge() })
    const rec = new Recorder(runtime)
    expect(runtime.transcript()).toEqual(before)
    runtime.prompt({ messageId: 'm3', text: 'third' })
    await rec.next('settled')
    await runtime.dispose()

    const restarted = await piRuntimes({ dataDir: dir })
    const after = await restarted.factory.readTranscript('t')
    expect(userTexts(after)).toEqual(['first', 'second', 'third'])
    expect(after.slice(0, before.length)).toEqual(before)
    expect(readFileSync(file, 'utf8')).not.toContain('"torn"')
    expect(readdirSync(join(dir, 'sessions', 't')).some((name) => name.startsWith('session.jsonl.torn-'))).toBe(true)
  })

  it('a last entry whose newline was never written is kept whole, and the next entry starts on a line of its own', async () => {
    const { dir, file, pi } = await twoRuns()
    writeFileSync(file, readFileSync(file, 'utf8').trimEnd())
    const runtime = await pi.create({ threadId: 't', model: 'demo', ui: new FakeBridge() })
    const rec = new Recorder(runtime)
    runtime.prompt({ messageId: 'm3', text: 'third' })
    await rec.next('settled')
    await runtime.dispose()
    const restarted = await piRuntimes({ dataDir: dir })
    expect(userTexts(await restarted.factory.readTranscript('t'))).toEqual(['first', 'second', 'third'])
  })

  it('a header torn during the very first write is no session yet: the thread starts its first one and the torn bytes are kept aside', async () => {
    const tmp = tempDir()
    cleanups.push(tmp.cleanup)
    const pi = await piRuntimes({ dataDir: tmp.dir })
    const sessions = join(tmp.dir, 'sessions', 'new')
    const file = join(sessions, 'session.jsonl')
    mkdirSync(sessions, { recursive: true })
    writeFileSync(file, '{"type":"session","version":3,"id":"abc","timest')
    expect(await pi.factory.readTranscript('new')).toEqual([])
    const runtime = await pi.create({ threadId: 'new', model: 'demo', ui: new FakeBridge() })
    const rec = new Recorder(runtime)
    runtime.prompt({ messageId: 'm1', text: 'hello' })
    await rec.next('settled')
    await runtime.dispose()
    expect(userTexts(await pi.factory.readTranscript('new'))).toEqual(['hello'])
    const aside = readdirSync(sessions).find((name) => name.startsWith('session.jsonl.torn-'))
    expect(aside && readFileSync(join(sessions, aside), 'utf8')).toBe('{"type":"session","version":3,"id":"abc","timest')
  })

  const damages: [string, (lines: string[]) => string[], RegExp][] = [
    ['a damaged header line', (lines) => [lines[0].slice(0, 20) + 'garbage', ...lines.slice(1)], /line 1/],
    ['one changed key in the header', (lines) => [lines[0].replace('"cwd"', '"cwx"'), ...lines.slice(1)], /header line has no cwd/],
    ['an unparsable line in the middle', (lines) => [...lines.slice(0, 3), '{"type":"message",', ...lines.slice(3)], /line 4 is not a JSON entry/],
    [
      'entries whose parent links do not chain',
      (lines) => lines.map((line, i) => (i === 4 ? line.replace(/"parentId":"[^"]+"/, '"parentId":"nowhere"') : line)),
      /line 5 has a parent that is not an earlier entry/,
    ],
  ]
  it('any other damage (a damaged header line, one changed header key, an unparsable line in the middle, parent links that do not chain) makes readTranscript and create reject with SessionDamaged, leaves the file byte-identical, and listPersisted reports it', async () => {
    for (const [what, damage, reason] of damages) {
      const { dir, file, lines } = await twoRuns()
      writeFileSync(file, damage(lines).join('\n') + '\n')
      const bytes = readFileSync(file)
      const pi = await piRuntimes({ dataDir: dir })

      const read = await refused(pi.factory.readTranscript('t'))
      expect(read.threadId, what).toBe('t')
      expect(read.reason, what).toMatch(reason)
      await refused(pi.factory.create({ threadId: 't', model: 'demo', cwd: dir, ui: new FakeBridge() }))
      // A second attempt is refused the same way: nothing was repaired behind the caller's back.
      await refused(pi.factory.create({ threadId: 't', model: 'demo', cwd: dir, ui: new FakeBridge() }))

      const listed = (await pi.factory.listPersisted!()).find((t) => t.threadId === 't')
      expect(listed?.damaged, what).toMatch(reason)
      expect(readFileSync(file).equals(bytes), what).toBe(true)
      expect(readdirSync(join(dir, 'sessions', 't')), what).toEqual(['session.jsonl'])
    }
  })

  it('a missing session file is an empty transcript and an intact one is listed undamaged', async () => {
    const { dir, file } = await twoRuns()
    const pi = await piRuntimes({ dataDir: dir })
    expect(await pi.factory.readTranscript('nobody')).toEqual([])
    const listed = await pi.factory.listPersisted!()
    expect(listed.map((t) => [t.threadId, t.damaged, t.lastRun])).toEqual([['t', undefined, 2]])
    expect(existsSync(file)).toBe(true)
  })
})
