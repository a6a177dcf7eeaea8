/**
 * Every browser test starts with empty localStorage: the composer keeps each thread's draft there
 * (src/ui/drafts.ts), and test files share one origin, so a draft one test leaves for thread `t1`
 * would otherwise appear in the next file's `t1` — depending on the order the files happen to run in.
 */
import { beforeEach } from 'vitest'

beforeEach(() => localStorage.clear())
