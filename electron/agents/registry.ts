/**
 * The agents built into Waystation, by name. Agents outside the repository are
 * loaded from a module path by the runtime's agent loader instead.
 */
import type { AnyAgent } from '../runtime/define-agent.js';
import { checkpointDemo } from './checkpoint-demo.js';
import { mdSummarizer } from './md-summarizer.js';

export const builtInAgents: ReadonlyMap<string, AnyAgent> = new Map<string, AnyAgent>([
  [checkpointDemo.name, checkpointDemo],
  [mdSummarizer.name, mdSummarizer],
]);

/** A built-in agent by name, or null. */
export function builtInAgent(name: string): AnyAgent | null {
  return builtInAgents.get(name) ?? null;
}
