/**
 * pi's theme, as pi's RPC mode hands it to extensions: `ctx.ui.theme` is typed `Theme`, and
 * extensions call `theme.fg(…)`, `theme.bold(…)` while building what they show. pi keeps one theme
 * per process on `globalThis` (so every module loader sees the same one) and its RPC mode
 * initialises it from the user's `theme` setting at start; threadhost does the same on first use.
 * Whatever colours it writes are dropped again before the page sees them (terminal-text.ts).
 */
import { initTheme, type Theme } from '@earendil-works/pi-coding-agent'

/** The key pi stores its theme under (pi's theme.ts: "share theme across module loaders"). */
const PI_THEME = Symbol.for('@earendil-works/pi-coding-agent:theme')

/** pi's current theme; initialised from `themeName` (pi's setting; unset: its system theme) if nothing has yet. */
export function piTheme(themeName?: string): Theme {
  const global = globalThis as Record<symbol, Theme | undefined>
  // pi falls back to its system theme by itself when the named one cannot be loaded.
  if (!global[PI_THEME]) initTheme(themeName, false)
  return global[PI_THEME] as Theme
}
