/** compactToolResult: pi's tool results (and anything else) → the feed's `ToolResult`, always valid. */
import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { Value } from 'typebox/value'
import { compactToolResult, KEPT_TAIL, MAX_DETAILS_JSON, MAX_RESULT_TEXT } from '../../src/runtime/map-events.js'
import { ToolResult } from '../../src/schemas/index.js'

describe('compactToolResult', () => {
  it('joins the text parts with real newlines, names images without their bytes, and keeps small details', () => {
    const out = compactToolResult({
      content: [
        { type: 'text', text: 'line one\nline two' },
        { type: 'image', data: 'iVBORw0KGgo='.repeat(1000), mimeType: 'image/png' },
        { type: 'text', text: 'line three' },
      ],
      details: { exitCode: 0 },
    })
    expect(out).toEqual({ text: 'line one\nline two\nline three', images: [{ mimeType: 'image/png' }], details: { exitCode: 0 } })
    expect(JSON.stringify(out)).not.toContain('iVBOR')
  })

  it('cuts the middle of long text, keeping its end, says so in its place and counts the cut in `truncated`; drops details that are too big or not JSON-safe', () => {
    const text = 'h'.repeat(MAX_RESULT_TEXT - KEPT_TAIL) + 'x'.repeat(5) + 't'.repeat(KEPT_TAIL)
    const long = compactToolResult({ content: [{ type: 'text', text }], details: 'y'.repeat(MAX_DETAILS_JSON) })
    expect(long.text).toBe(`${'h'.repeat(MAX_RESULT_TEXT - KEPT_TAIL)}[… 5 characters not shown …]\n${'t'.repeat(KEPT_TAIL)}`)
    expect(long.truncated).toBe(5)
    expect(long).not.toHaveProperty('details')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(compactToolResult({ content: [{ type: 'text', text: 'ok' }], details: cyclic })).toEqual({ text: 'ok' })
  })

  it('a missing result is empty text and a bare value is its string', () => {
    expect(compactToolResult(undefined)).toEqual({ text: '' })
    expect(compactToolResult(null)).toEqual({ text: '' })
    expect(compactToolResult('plain')).toEqual({ text: 'plain' })
    expect(compactToolResult(42)).toEqual({ text: '42' })
  })

  test.prop([fc.anything({ maxDepth: 3 })])('whatever a tool returns, the result validates against ToolResult and survives JSON', (input) => {
    const out = compactToolResult(input)
    expect(Value.Errors(ToolResult, out)).toEqual([])
    expect(JSON.parse(JSON.stringify(out))).toEqual(out)
  })

  test.prop([
    fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text'), text: fc.string() }),
        fc.record({ type: fc.constant('image'), data: fc.base64String(), mimeType: fc.constantFrom('image/png', 'image/jpeg') }),
      ),
    ),
    fc.option(fc.jsonValue(), { nil: undefined }),
  ])("pi's own shape validates too", (content, details) => {
    expect(Value.Check(ToolResult, compactToolResult({ content, details }))).toBe(true)
  })
})
