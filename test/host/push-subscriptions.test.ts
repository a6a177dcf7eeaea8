/**
 * Push subscriptions in a data dir that several processes share (a cluster's nodes): a subscription
 * made through one never erases one made through another, and the one-file list of older versions
 * is moved over once.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { PushSubscriptions } from '../../src/host/push/subscriptions.js'

const run = promisify(execFile)
const MODULE = fileURLToPath(new URL('../../src/host/push/subscriptions.ts', import.meta.url))
const browser = (name: string) => ({ endpoint: `https://push.example/${name}`, keys: { p256dh: `p-${name}`, auth: `a-${name}` } })
const endpoints = (s: PushSubscriptions) => s.list().map((r) => r.endpoint).sort()

describe('push subscriptions in a shared data dir', () => {
  let dir = ''
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('two stores on one dir keep each other\'s subscriptions: each lists both, and a removal through one leaves the other\'s', () => {
    dir = mkdtempSync(join(tmpdir(), 'threadhost-push-subs-'))
    const a = new PushSubscriptions(dir)
    const b = new PushSubscriptions(dir)
    a.add(browser('phone'))
    b.add(browser('laptop'))
    expect(endpoints(a)).toEqual(['https://push.example/laptop', 'https://push.example/phone'])
    expect(endpoints(b)).toEqual(['https://push.example/laptop', 'https://push.example/phone'])
    // A browser subscribing again through the other store gets its new keys everywhere.
    b.add({ ...browser('phone'), keys: { p256dh: 'p-new', auth: 'a-new' } })
    expect(a.list().find((r) => r.endpoint.endsWith('phone'))?.keys).toEqual({ p256dh: 'p-new', auth: 'a-new' })
    expect(a.remove('https://push.example/laptop')).toBe(true)
    expect(b.remove('https://push.example/laptop')).toBe(false)
    expect(endpoints(b)).toEqual(['https://push.example/phone'])
    expect(endpoints(new PushSubscriptions(dir))).toEqual(['https://push.example/phone'])
  })

  it('processes that subscribe at the same moment all keep their subscription, and leave no temporary file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'threadhost-push-subs-'))
    const script = (name: string) =>
      `import(${JSON.stringify(MODULE)}).then((m) => new m.PushSubscriptions(${JSON.stringify(dir)}).add(${JSON.stringify(browser(name))}))`
    const names = ['n1', 'n2', 'n3', 'n4']
    await Promise.all(names.map((name) => run(process.execPath, ['--import', 'tsx', '-e', script(name)])))
    expect(endpoints(new PushSubscriptions(dir))).toEqual(names.map((n) => `https://push.example/${n}`))
    expect(readdirSync(join(dir, 'subscriptions')).filter((f) => !f.endsWith('.json'))).toEqual([])
  })

  it('the one-file list of older versions is moved into the folder once: its subscriptions are kept, and one removed stays removed', () => {
    dir = mkdtempSync(join(tmpdir(), 'threadhost-push-subs-'))
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'subscriptions.json'), JSON.stringify([browser('old-phone'), browser('old-laptop')]))
    const a = new PushSubscriptions(dir)
    expect(endpoints(a)).toEqual(['https://push.example/old-laptop', 'https://push.example/old-phone'])
    expect(readdirSync(dir).sort()).toEqual(['subscriptions'])
    a.remove('https://push.example/old-phone')
    expect(endpoints(new PushSubscriptions(dir))).toEqual(['https://push.example/old-laptop'])
  })
})
