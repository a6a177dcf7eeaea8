/**
 * The docs gate: every test a flow document cites must still exist with that exact title, so a
 * renamed or deleted test fails the page that leans on it. A citation is a list item of the form
 *   - `test/path/file.test.ts`: <exact test title>
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')
const flowsDir = join(root, 'docs/flows')
const CITATION = /^\s*- `(test\/[^`]+\.test\.ts)`: (.+?)\s*$/gm

export function citations(markdown: string): { file: string; title: string }[] {
  return [...markdown.matchAll(CITATION)].map((m) => ({ file: m[1], title: m[2] }))
}

/** A title counts when the file holds it as a string literal (quotes or backticks). */
export function cites(source: string, title: string): boolean {
  return [`'${title.replaceAll("'", "\\'")}'`, `"${title}"`, `\`${title}\``].some((literal) => source.includes(literal))
}

const pages = readdirSync(flowsDir).filter((f) => f.endsWith('.md'))

describe('docs gate', () => {
  it('every flow page exists for prompt, abort, dialog, follow and ask-user-question', () => {
    expect(pages).toEqual(expect.arrayContaining(['prompt.md', 'abort.md', 'dialog.md', 'follow.md', 'ask-user-question.md']))
  })

  for (const page of pages) {
    it(`every test cited in docs/flows/${page} exists with that exact title`, () => {
      const found = citations(readFileSync(join(flowsDir, page), 'utf8'))
      expect(found.length, `${page} cites no test`).toBeGreaterThan(0)
      const missing = found.filter(({ file, title }) => {
        try {
          return !cites(readFileSync(join(root, file), 'utf8'), title)
        } catch {
          return true
        }
      })
      expect(missing, `cited in ${page} but not found`).toEqual([])
    })
  }

  it('the gate itself notices a citation whose test is gone', () => {
    const page = "- `test/docs-gate.test.ts`: no test has this title\n- `test/docs-gate.test.ts`: the gate itself notices a citation whose test is gone\n"
    const source = readFileSync(join(root, 'test/docs-gate.test.ts'), 'utf8')
    expect(citations(page).map(({ title }) => cites(source, title))).toEqual([false, true])
  })
})
