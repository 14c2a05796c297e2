/**
 * The agents built into Waystation, by name. Agents outside the repository are
 * loaded from a module path by the runtime's agent loader instead.
 *
 * Loading this module provides them to the runtime (see
 * runtime/built-in-agents.ts): the runtime sits below the agents and never
 * imports them, so every entry point imports this module first.
 */
import type { AnyAgent } from '../runtime/define-agent.js';
import { provideBuiltInAgents } from '../runtime/built-in-agents.js';
import { checkpointDemo } from './checkpoint-demo.js';
import { mdSummarizer } from './md-summarizer.js';

export const builtInAgents: ReadonlyMap<string, AnyAgent> = new Map<string, AnyAgent>([
  [checkpointDemo.name, checkpointDemo],
  [mdSummarizer.name, mdSummarizer],
]);

provideBuiltInAgents(builtInAgents);

/** A built-in agent by name, or null. */
export function builtInAgent(name: string): AnyAgent | null {
  return builtInAgents.get(name) ?? null;
}
