/** One line per event on the console; debug stays quiet unless THREADHOST_DEBUG is set. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'

export function log(level: LogLevel, message: string): void {
  if (level === 'debug' && !process.env.THREADHOST_DEBUG) return
  const line = `${new Date().toISOString()} ${level} ${message}`
  if (level === 'error' || level === 'warn') console.error(line)
  else console.log(line)
}
