/**
 * The VAPID key pair in a data dir that several processes share (a cluster's nodes): however many
 * start at once, they all end up with the one pair first written, and none fails to start.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { vapidKeys } from '../../src/host/push/vapid.js'

const run = promisify(execFile)
const VAPID = fileURLToPath(new URL('../../src/host/push/vapid.ts', import.meta.url))

describe('the push keys in a shared data dir', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('processes that make the keys at the same moment all get the first pair written, and leave no temporary file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'threadhost-push-keys-'))
    const pushDir = join(dir, 'push')
    const script = `import(${JSON.stringify(VAPID)}).then((m) => process.stdout.write(m.vapidKeys(${JSON.stringify(pushDir)}).publicKey))`
    const made = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ['--import', 'tsx', '-e', script]).then((r) => r.stdout)),
    )
    expect(new Set(made).size).toBe(1)
    expect(vapidKeys(pushDir).publicKey).toBe(made[0])
    expect(readdirSync(pushDir)).toEqual(['vapid.json'])
  })
})
