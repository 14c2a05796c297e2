/**
 * The fork the LangGraph edit tests make through the CLI: the weather thread's question changed to Rome at its
 * checkpoint 2, planned only or written (`--write --json`), on any location `fork-thread` accepts.
 */
import { captureCli } from '../electron/cli/capture-cli.js';
import { THREADS } from './langgraph-graphs.js';

/** The question the fork puts in place of the thread's first message. */
export const ROME_QUESTION = 'What is the weather in Rome?';

/** Runs `fork-thread LOCATION <weather thread> --checkpoint 2 --values <the Rome question>`, then `--write --json` when asked. */
export function forkWeatherToRome(location: string, opts: { write: boolean }): Promise<{ code: number; out: string; err: string }> {
  const message = opts.write ? { role: 'user', content: ROME_QUESTION, id: 'edited-question' } : { role: 'user', content: ROME_QUESTION };
  const args = ['fork-thread', location, THREADS.weather, '--checkpoint', '2', '--values', JSON.stringify({ messages: [message] })];
  return captureCli(...args, ...(opts.write ? ['--write', '--json'] : []));
}
