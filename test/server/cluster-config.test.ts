/** `--cluster`, `--node-name` and `--node-url` (src/server/config.ts): checked before anything starts; without them, no cluster. */
import { describe, expect, it } from 'vitest'
import { ConfigError, parseConfig } from '../../src/server/config.js'

describe('cluster flags', () => {
  it('without --cluster the configuration has no cluster: one process, as always', () => {
    expect(parseConfig([], {}).cluster).toBeUndefined()
  })

  it('--cluster nats://HOST:PORT with --node-name makes a node of that name', () => {
    expect(parseConfig(['--cluster', 'nats://127.0.0.1:4222', '--node-name', 'n1'], {}).cluster).toEqual({ url: 'nats://127.0.0.1:4222', nodeName: 'n1' })
  })

  it('a --cluster that is not a nats URL, a bad node name, or --node-name alone is refused with a line naming the flag', () => {
    expect(() => parseConfig(['--cluster', 'http://x:1'], {})).toThrow(ConfigError)
    expect(() => parseConfig(['--cluster', 'nats://x:1', '--node-name', 'a b'], {})).toThrow(/--node-name/)
    expect(() => parseConfig(['--node-name', 'n1'], {})).toThrow(/--cluster/)
  })

  it('--node-url names where the other nodes reach this one: an http(s) origin, with --cluster only', () => {
    const cluster = ['--cluster', 'nats://127.0.0.1:4222', '--node-name', 'n1']
    expect(parseConfig([...cluster, '--node-url', 'http://10.0.0.7:4317/'], {}).cluster).toEqual({ url: 'nats://127.0.0.1:4222', nodeName: 'n1', nodeUrl: 'http://10.0.0.7:4317' })
    expect(() => parseConfig([...cluster, '--node-url', '10.0.0.7:4317'], {})).toThrow(/--node-url takes/)
    expect(() => parseConfig([...cluster, '--node-url', 'http://10.0.0.7:4317/api'], {})).toThrow(/--node-url takes/)
    expect(() => parseConfig([...cluster, '--node-url', 'http://10.0.0.7:4317?x'], {})).toThrow(/--node-url takes/)
    expect(() => parseConfig(['--node-url', 'http://10.0.0.7:4317'], {})).toThrow(/--cluster/)
  })
})
