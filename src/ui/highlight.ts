/**
 * Syntax highlighting for code blocks, with highlight.js — its core and a few common languages,
 * loaded on demand: the first code block anywhere asks for it, and the page that never shows code
 * never loads it. Until it is there a block is plain text; when it arrives, `onHighlighterReady`
 * listeners re-render (Markdown is rendered to a string, so the highlighted string simply replaces
 * the plain one).
 *
 * highlight.js escapes what it is given and emits only `<span class="hljs-…">`: its output still
 * goes through DOMPurify with the rest of the Markdown.
 */
import type { HLJSApi } from 'highlight.js'

let hljs: HLJSApi | undefined
let loading: Promise<HLJSApi | undefined> | undefined
const listeners = new Set<() => void>()

/** Names a fence may use for the languages we load, and what highlight.js calls them. */
const ALIASES: Record<string, string> = {
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'bash',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  py: 'python',
  html: 'xml',
  svg: 'xml',
  yml: 'yaml',
  md: 'markdown',
  rs: 'rust',
  golang: 'go',
  patch: 'diff',
}

export function loadHighlighter(): Promise<HLJSApi | undefined> {
  loading ??= (async () => {
    try {
      const [core, bash, javascript, typescript, json, python, xml, css, yaml, markdown, diff, rust, go, sql] = await Promise.all([
        import('highlight.js/lib/core'),
        import('highlight.js/lib/languages/bash'),
        import('highlight.js/lib/languages/javascript'),
        import('highlight.js/lib/languages/typescript'),
        import('highlight.js/lib/languages/json'),
        import('highlight.js/lib/languages/python'),
        import('highlight.js/lib/languages/xml'),
        import('highlight.js/lib/languages/css'),
        import('highlight.js/lib/languages/yaml'),
        import('highlight.js/lib/languages/markdown'),
        import('highlight.js/lib/languages/diff'),
        import('highlight.js/lib/languages/rust'),
        import('highlight.js/lib/languages/go'),
        import('highlight.js/lib/languages/sql'),
      ])
      const h = core.default
      const langs = { bash, javascript, typescript, json, python, xml, css, yaml, markdown, diff, rust, go, sql }
      for (const [name, mod] of Object.entries(langs)) h.registerLanguage(name, mod.default)
      h.configure({ ignoreUnescapedHTML: true })
      hljs = h
      for (const l of [...listeners]) l()
      return h
    } catch {
      loading = undefined // a failed chunk load: plain text now, another try with the next block
      return undefined
    }
  })()
  return loading
}

/** Called once the highlighter has loaded (code shown before then can now be coloured). */
export function onHighlighterReady(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

export const highlighterReady = () => hljs !== undefined

/** The language a fence or a file name asks for, if it is one we highlight. */
export function languageOf(name: string | undefined): string | undefined {
  if (!name) return undefined
  const n = name.trim().toLowerCase()
  return ALIASES[n] ?? (['bash', 'javascript', 'typescript', 'json', 'python', 'xml', 'css', 'yaml', 'markdown', 'diff', 'rust', 'go', 'sql'].includes(n) ? n : undefined)
}

/** The language of a file, from its extension (`src/a.ts` → typescript). */
export function languageOfPath(path: string): string | undefined {
  const ext = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]
  return ext === 'json' ? 'json' : ext === 'sh' ? 'bash' : ext === 'htm' ? 'xml' : languageOf(ext)
}

/**
 * Highlighted HTML for `code` in `language`, or undefined while the highlighter is not loaded (the
 * first call starts loading it) or the language is not one we have.
 */
export function highlight(code: string, language: string | undefined): string | undefined {
  const lang = languageOf(language)
  if (!lang) return undefined
  if (!hljs) {
    void loadHighlighter()
    return undefined
  }
  try {
    return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value
  } catch {
    return undefined
  }
}
