/**
 * What one of threadhost's own commands did, said once it is done (`/name`, `/model`, `/thinking`,
 * `/compact`, `/new` start no run, so without a word the composer just empties and nothing seems to happen).
 */
import type { CommandReceipt } from '../schemas/index.js'

export function commandFeedback(receipt: CommandReceipt): { title: string; reason: string } {
  const t = receipt.thread
  switch (receipt.command) {
    case 'name':
      return { title: 'Renamed', reason: `this thread is now “${t.title}”` }
    case 'model':
      return { title: 'Model changed', reason: `${t.model} answers from the next message on` }
    case 'thinking':
      return { title: 'Thinking level changed', reason: `${t.thinkingLevel ?? 'the model’s default'} from the next message on` }
    case 'compact':
      return { title: 'Compacted', reason: 'the conversation so far was summarised to free the context' }
    case 'new':
      return { title: 'New thread', reason: `“${t.title}” opened, with this thread’s model and workspace` }
    default:
      return { title: `/${receipt.command}`, reason: 'done' }
  }
}
