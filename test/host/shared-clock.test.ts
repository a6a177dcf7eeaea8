import { describe, expect, it } from 'vitest'
import { SHARED_CLOCK } from '../../src/host/shared-clock.js'

describe('the shared clock', () => {
  it('fires what is armed in order of its due time, never what was cleared, and what a firing arms in its turn', async () => {
    const fired: string[] = []
    const done = new Promise<void>((resolve) => {
      SHARED_CLOCK.setTimeout(() => fired.push('a'), 5)
      const b = SHARED_CLOCK.setTimeout(() => fired.push('b'), 5)
      SHARED_CLOCK.setTimeout(() => {
        fired.push('c')
        // Armed from within a firing on the same delay: waits its own turn.
        SHARED_CLOCK.setTimeout(() => {
          fired.push('e')
          resolve()
        }, 5)
      }, 5)
      SHARED_CLOCK.setTimeout(() => fired.push('d'), 1)
      SHARED_CLOCK.clearTimeout(b)
    })
    await done
    expect(fired).toEqual(['d', 'a', 'c', 'e'])
  })

  it('a delay whose every entry was cleared fires nothing', async () => {
    const fired: string[] = []
    SHARED_CLOCK.clearTimeout(SHARED_CLOCK.setTimeout(() => fired.push('x'), 2))
    await new Promise<void>((resolve) => SHARED_CLOCK.setTimeout(() => resolve(), 3))
    await new Promise<void>((resolve) => setTimeout(resolve, 5))
    expect(fired).toEqual([])
  })
})
