/**
 * `--cluster`, `--node-name` and `--node-url` (src/server/config.ts), and the NATS tools' variables a
 * node reaches NATS with: checked before anything starts; without them, no cluster.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from '../../src/server/config.js'

describe('cluster flags', () => {
  it('without --cluster the configuration has no cluster: one process, as always', () => {
    expect(parseConfig([], {}).cluster).toBeUndefined()
  })

  it('--cluster nats://HOST:PORT with --node-name makes a node of that name', () => {
    expect(parseConfig(['--cluster', 'nats://127.0.0.1:4222', '--node-name', 'n1'], {}).cluster).toEqual({ url: 'nats://127.0.0.1:4222', access: { servers: ['nats://127.0.0.1:4222'] }, nodeName: 'n1' })
  })

  it('a --cluster that is not a nats URL, a bad node name, or --node-name alone is refused with a line naming the flag', () => {
    expect(() => parseConfig(['--cluster', 'http://x:1'], {})).toThrow(ConfigError)
    expect(() => parseConfig(['--cluster', 'nats://x:1', '--node-name', 'a b'], {})).toThrow(/--node-name/)
    expect(() => parseConfig(['--node-name', 'n1'], {})).toThrow(/--cluster/)
  })

  it('--node-url names where the other nodes reach this one: an http(s) origin, with --cluster only', () => {
    const cluster = ['--cluster', 'nats://127.0.0.1:4222', '--node-name', 'n1']
    expect(parseConfig([...cluster, '--node-url', 'http://10.0.0.7:4317/'], {}).cluster).toEqual({ url: 'nats://127.0.0.1:4222', access: { servers: ['nats://127.0.0.1:4222'] }, nodeName: 'n1', nodeUrl: 'http://10.0.0.7:4317' })
    expect(() => parseConfig([...cluster, '--node-url', '10.0.0.7:4317'], {})).toThrow(/--node-url takes/)
    expect(() => parseConfig([...cluster, '--node-url', 'http://10.0.0.7:4317/api'], {})).toThrow(/--node-url takes/)
    expect(() => parseConfig([...cluster, '--node-url', 'http://10.0.0.7:4317?x'], {})).toThrow(/--node-url takes/)
    expect(() => parseConfig(['--node-url', 'http://10.0.0.7:4317'], {})).toThrow(/--cluster/)
  })

  describe('how the node reaches NATS', () => {
    const dir = mkdtempSync(join(tmpdir(), 'threadhost-nats-config-'))
    const file = (name: string) => {
      const path = join(dir, name)
      writeFileSync(path, 'x')
      return path
    }
    afterAll(() => rmSync(dir, { recursive: true, force: true }))
    const access = (spec: string, env: NodeJS.ProcessEnv = {}) => parseConfig(['--cluster', spec], env).cluster?.access

    it('several servers, comma-separated, are a seed list; tls:// requires TLS of every server', () => {
      expect(access('nats://a:4222,nats://b:4222')).toEqual({ servers: ['nats://a:4222', 'nats://b:4222'] })
      expect(access('tls://a:4222')).toEqual({ servers: ['tls://a:4222'], tls: {} })
      expect(() => access('nats://a:4222,http://b:1')).toThrow(/--cluster takes/)
      expect(() => access('nats://a:4222,')).toThrow(/--cluster takes/)
    })

    it('credentials come from NATS_USER and NATS_PASSWORD, NATS_TOKEN, NATS_NKEY or NATS_CREDS: one way, files readable', () => {
      expect(access('nats://a:1', { NATS_USER: 'th', NATS_PASSWORD: 'pw' })?.auth).toEqual({ user: 'th', pass: 'pw' })
      expect(access('nats://a:1', { NATS_TOKEN: 'tok' })?.auth).toEqual({ token: 'tok' })
      const creds = file('user.creds')
      expect(access('nats://a:1', { NATS_CREDS: creds })?.auth).toEqual({ credsFile: creds })
      const seed = file('user.nk')
      expect(access('nats://a:1', { NATS_NKEY: seed })?.auth).toEqual({ nkeyFile: seed })
      expect(() => access('nats://a:1', { NATS_TOKEN: 'tok', NATS_USER: 'th' })).toThrow(/NATS_TOKEN and NATS_USER: give one way/)
      expect(() => access('nats://a:1', { NATS_PASSWORD: 'pw' })).toThrow(/give NATS_USER too/)
      expect(() => access('nats://a:1', { NATS_CREDS: join(dir, 'missing.creds') })).toThrow(/NATS_CREDS .*missing\.creds: not a file this process can read/)
    })

    it('a URL with credentials in it is refused, saying where they go and without repeating them', () => {
      const refusal = (spec: string) => {
        try {
          access(spec)
        } catch (error) {
          return (error as Error).message
        }
        return 'taken'
      }
      expect(refusal('nats://th:hunter2@a:4222')).toMatch(/NATS_USER and NATS_PASSWORD/)
      // Whatever the shape around it: another scheme, capitals, a slash or an @ in the password, another entry.
      for (const spec of ['nats://th:hunter2@a:4222', 'NATS://th:hunter2@a:4222', 'nats://th:hun/ter2@a:4222', 'nats://th:hunter2@@a:4222', 'nats://a:1,http://th:hunter2@b:2']) {
        const message = refusal(spec)
        expect(message).toMatch(/^--cluster /)
        expect(message).not.toMatch(/hunter2|hun\/ter2|th:/)
      }
    })

    it('a file may start with ~ (the home dir); a directory or a file it cannot read is refused', () => {
      const home = process.env.HOME
      process.env.HOME = dir
      try {
        const creds = file('home.creds')
        expect(access('nats://a:1', { NATS_CREDS: '~/home.creds' })?.auth).toEqual({ credsFile: creds })
      } finally {
        process.env.HOME = home
      }
      expect(() => access('nats://a:1', { NATS_CREDS: dir })).toThrow(/not a file this process can read/)
    })

    it('NATS_CA, NATS_CERT and NATS_KEY require TLS with those files; a certificate needs its key', () => {
      const [ca, cert, key] = [file('ca.pem'), file('cert.pem'), file('key.pem')]
      expect(access('nats://a:1', { NATS_CA: ca })).toEqual({ servers: ['nats://a:1'], tls: { caFile: ca } })
      expect(access('nats://a:1', { NATS_CERT: cert, NATS_KEY: key })?.tls).toEqual({ certFile: cert, keyFile: key })
      expect(() => access('nats://a:1', { NATS_CERT: cert })).toThrow(/give both/)
    })
  })
})
