#!/usr/bin/env node
// Draws the app's icons into src/ui/public/icons (vite copies them to dist/client as they are):
// an indigo tile with three lines of a conversation, as PNGs for the web manifest and iOS, and as SVG.
// Run by hand when the drawing changes (`node scripts/make-icons.mjs`); the files are committed.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateSync } from 'node:zlib'

const out = join(dirname(fileURLToPath(import.meta.url)), '../src/ui/public/icons')
const INDIGO = [0x4f, 0x46, 0xe5]
const WHITE = [0xff, 0xff, 0xff]
// In a unit square: the lines of the conversation (x, y, width, height), inside the maskable safe zone.
const LINES = [
  [0.26, 0.3, 0.48, 0.1],
  [0.26, 0.45, 0.34, 0.1],
  [0.26, 0.6, 0.42, 0.1],
]

function insideRounded(x, y, x0, y0, w, h, r) {
  if (x < x0 || y < y0 || x > x0 + w || y > y0 + h) return false
  const cx = Math.min(Math.max(x, x0 + r), x0 + w - r)
  const cy = Math.min(Math.max(y, y0 + r), y0 + h - r)
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r
}

/** RGBA pixels of the icon at `size`; `maskable` fills the whole square (the platform cuts its own shape). */
function draw(size, maskable) {
  const pixels = Buffer.alloc(size * size * 4)
  const S = 4 // samples per axis, for smooth edges
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let tile = 0
      let line = 0
      for (let sy = 0; sy < S; sy++) {
        for (let sx = 0; sx < S; sx++) {
          const x = (px + (sx + 0.5) / S) / size
          const y = (py + (sy + 0.5) / S) / size
          if (maskable || insideRounded(x, y, 0, 0, 1, 1, 0.22)) tile++
          if (LINES.some(([x0, y0, w, h]) => insideRounded(x, y, x0, y0, w, h, h / 2))) line++
        }
      }
      const n = S * S
      const a = tile / n
      const l = line / n
      const i = (py * size + px) * 4
      for (let c = 0; c < 3; c++) pixels[i + c] = Math.round(INDIGO[c] * (1 - l / Math.max(a, 1e-9)) + WHITE[c] * (l / Math.max(a, 1e-9)))
      pixels[i + 3] = Math.round(a * 255)
    }
  }
  return pixels
}

const CRC = new Int32Array(256).map((_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c
})
const crc32 = (buf) => {
  let c = -1
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8)
  return (c ^ -1) >>> 0
}
function chunk(type, data) {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(data.length, 0)
  head.write(type, 4, 'ascii')
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0)
  return Buffer.concat([head, data, crc])
}
function png(size, pixels) {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 6, 0, 0, 0], 8) // 8-bit RGBA
  const rows = Buffer.alloc(size * (size * 4 + 1))
  for (let y = 0; y < size; y++) pixels.copy(rows, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
  <rect width="100" height="100" rx="22" fill="#4f46e5"/>
${LINES.map(([x, y, w, h]) => `  <rect x="${x * 100}" y="${y * 100}" width="${w * 100}" height="${h * 100}" rx="${(h * 100) / 2}" fill="#fff"/>`).join('\n')}
</svg>
`

mkdirSync(out, { recursive: true })
writeFileSync(join(out, 'icon.svg'), svg)
for (const [name, size, maskable] of [
  ['icon-192.png', 192, false],
  ['icon-512.png', 512, false],
  ['maskable-512.png', 512, true],
  ['apple-touch-icon.png', 180, true],
]) {
  writeFileSync(join(out, name), png(size, draw(size, maskable)))
}
console.log(`icons written to ${out}`)
