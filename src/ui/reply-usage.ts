/** The line under a reply: which model wrote it and what it used, e.g. "demo · 1.2k in / 340 out · $0.0031". */
import type { ReplyUsage } from '../schemas/index.js'

/** 950 → "950", 1234 → "1.2k", 25_000 → "25k", 1_250_000 → "1.3M". */
export function tokens(n: number): string {
  if (n < 1000) return String(Math.round(n))
  const [value, unit] = n < 1_000_000 ? [n / 1000, 'k'] : [n / 1_000_000, 'M']
  return `${value < 10 ? value.toFixed(1).replace(/\.0$/, '') : Math.round(value)}${unit}`
}

/** Dollars: cents for a cent or more, else four significant places (a reply often costs a fraction of a cent). */
export function dollars(cost: number): string {
  return cost >= 0.01 ? `$${cost.toFixed(2)}` : `$${Number(cost.toPrecision(2))}`
}

/** Empty when the runtime said nothing; tokens only when some were counted, cost only when not zero. */
export function usageLine(reply: { model?: string; usage?: ReplyUsage }): string {
  const parts: string[] = []
  if (reply.model) parts.push(reply.model)
  const u = reply.usage
  // What the model read: cached prompt tokens too (a provider counts them apart from `input`).
  const read = u ? u.input + u.cacheRead + u.cacheWrite : 0
  if (u && read + u.output > 0) parts.push(`${tokens(read)} in / ${tokens(u.output)} out`)
  if (u && u.cost > 0) parts.push(dollars(u.cost))
  return parts.join(' · ')
}
