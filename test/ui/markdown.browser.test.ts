/** Model output is untrusted: an image in a reply must not make the page fetch anything by itself. */
import { describe, expect, it } from 'vitest'
import { renderMarkdown } from '../../src/ui/markdown.js'

const host = (html: string) => {
  const div = document.createElement('div')
  div.innerHTML = html
  document.body.append(div)
  return div
}

describe('markdown', () => {
  it('a remote Markdown image becomes a link and is never fetched; a data: image still shows', async () => {
    const secret = `http://127.0.0.1:9/leak?secret=${Math.random()}`
    const div = host(renderMarkdown(`Look ![chart](${secret} "the chart") and ![dot](data:image/png;base64,iVBORw0KGgo=)`))
    expect(div.querySelector(`img[src="${secret}"]`)).toBeNull()
    const link = div.querySelector('a.remote-image') as HTMLAnchorElement
    expect(link.href).toBe(secret)
    expect(link.textContent).toBe('Image: chart')
    expect(link.rel).toBe('noopener noreferrer')
    expect(div.querySelector('img')?.getAttribute('src')).toMatch(/^data:image\/png/)
    await new Promise((r) => setTimeout(r, 50))
    expect(performance.getEntriesByType('resource').some((e) => e.name === secret)).toBe(false)
  })

  it('a raw HTML image with a remote source loses the source (and srcset), so nothing is requested', () => {
    const div = host(renderMarkdown('<img src="https://example.invalid/x.png" srcset="https://example.invalid/y.png 2x" alt="x">'))
    const img = div.querySelector('img')!
    expect(img.hasAttribute('src')).toBe(false)
    expect(img.hasAttribute('srcset')).toBe(false)
  })
})
