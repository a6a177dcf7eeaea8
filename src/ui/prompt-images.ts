/**
 * Images a person adds to a prompt (paste, drop or pick): read as base64 for `POST …/prompt`, each
 * checked here against what the server would refuse, so the refusal is said at once and in words.
 * The limits are the schema's (src/schemas/http.ts), copied: the bundle does not carry TypeBox.
 */
import type { PromptImage } from '../schemas/index.js'

export const IMAGE_TYPES: readonly PromptImage['mimeType'][] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp']
/** The schema's MAX_IMAGE_BYTES and MAX_PROMPT_IMAGES (test/shared/prompt-image-limits.test.ts checks they agree). */
export const IMAGE_LIMIT = 5 * 1024 * 1024
export const MAX_IMAGES = 4

export const dataUrl = (image: PromptImage) => `data:${image.mimeType};base64,${image.data}`

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')} MB`

/** The images among `files`, read; what could not be taken, said in words. */
export async function readImages(files: Iterable<File>, already: number): Promise<{ images: PromptImage[]; problems: string[] }> {
  const images: PromptImage[] = []
  const problems: string[] = []
  for (const file of files) {
    if (!IMAGE_TYPES.includes(file.type as PromptImage['mimeType'])) {
      problems.push(`${file.name || 'that file'} is not a PNG, JPEG, GIF or WebP image`)
      continue
    }
    if (file.size > IMAGE_LIMIT) {
      problems.push(`${file.name || 'the image'} is ${mb(file.size)}; an image may be at most ${mb(IMAGE_LIMIT)}`)
      continue
    }
    if (already + images.length >= MAX_IMAGES) {
      problems.push(`at most ${MAX_IMAGES} images go with one message`)
      break
    }
    images.push({ mimeType: file.type as PromptImage['mimeType'], data: await base64Of(file) })
  }
  return { images, problems }
}

async function base64Of(file: Blob): Promise<string> {
  const url = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(reader.result as string)
    reader.onerror = () => reject(reader.error ?? new Error('the image could not be read'))
    reader.readAsDataURL(file)
  })
  return url.slice(url.indexOf(',') + 1)
}
