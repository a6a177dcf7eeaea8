/**
 * The client `npm start` serves is dist/client, and the e2e global setup (run under NODE_ENV=test)
 * rebuilds it: it must still be a production build, not lit's development mode.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'

describe('the built client', () => {
  test('dist/client is a production build after the tests built it', () => {
    const dir = join('dist', 'client', 'assets')
    const scripts = readdirSync(dir).filter((f) => f.endsWith('.js') && !f.startsWith('elk.'))
    expect(scripts.length).toBeGreaterThan(0)
    for (const f of scripts) {
      const code = readFileSync(join(dir, f), 'utf8')
      expect(code, f).not.toContain('Lit is in dev mode')
      expect(code, f).not.toContain('lit-html.dev')
    }
  })
})
