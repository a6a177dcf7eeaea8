/**
 * The layer rule of shared/design.md, checked on every import in src: dependencies point down only,
 * so the browser bundle never reaches Node-only code and the machines stay pure.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = resolve(import.meta.dirname, '../src')

/** What each layer may import from src (besides itself). */
const ALLOWED: Record<string, string[]> = {
  schemas: [],
  shared: ['schemas'],
  machines: ['schemas'],
  runtime: ['schemas', 'machines'],
  host: ['schemas', 'shared', 'machines', 'runtime'],
  server: ['schemas', 'shared', 'machines', 'runtime', 'host'],
  ui: ['schemas', 'shared', 'machines'],
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.ts$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

const layerOf = (file: string) => relative(SRC, file).split(sep)[0]

describe('layers', () => {
  it('every import in src points to its own layer or one below it', () => {
    const violations: string[] = []
    for (const file of files(SRC)) {
      const from = layerOf(file)
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
        const to = layerOf(resolve(file, '..', spec))
        if (to !== from && !ALLOWED[from]?.includes(to)) violations.push(`${relative(SRC, file)} → ${spec}`)
      }
    }
    expect(violations).toEqual([])
  })
})
