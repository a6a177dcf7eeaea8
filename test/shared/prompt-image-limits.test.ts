import { describe, expect, it } from 'vitest'
import { MAX_IMAGE_BYTES, MAX_PROMPT_IMAGES, PromptImage } from '../../src/schemas/index.js'
import { IMAGE_LIMIT, IMAGE_TYPES, MAX_IMAGES } from '../../src/ui/prompt-images.js'

describe("the composer's image limits", () => {
  it("are the schema's: the size, the count and the types the server takes", () => {
    expect(IMAGE_LIMIT).toBe(MAX_IMAGE_BYTES)
    expect(MAX_IMAGES).toBe(MAX_PROMPT_IMAGES)
    const schemaTypes = (PromptImage.properties.mimeType.anyOf as { const: string }[]).map((t) => t.const)
    expect([...IMAGE_TYPES].sort()).toEqual(schemaTypes.sort())
  })
})
