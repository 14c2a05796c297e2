/**
 * The built-in agents as the runtime sees them: provided from above.
 *
 * The agents are written against the runtime (define-agent.ts), so the
 * runtime cannot import them without a cycle between the two folders. The
 * catalogue is handed to it instead: electron/agents/registry.ts provides it
 * when it is loaded, and every entry point (the CLI, the host, the desktop
 * app, the worker process, the library's index) loads that registry before
 * it starts anything. A runtime asked for its built-ins before any were
 * provided says so, rather than quietly offering none.
 */
import type { AnyAgent } from './define-agent.js';

let provided: ReadonlyMap<string, AnyAgent> | null = null;

/** Hand the runtime its built-in agents, by name (the registry does, once, at load). */
export function provideBuiltInAgents(agents: ReadonlyMap<string, AnyAgent>): void {
  provided = agents;
}

/** The built-in agents, by name; throws when no entry point provided them. */
export function builtInAgents(): ReadonlyMap<string, AnyAgent> {
  if (!provided)
    throw new Error(
      'the built-in agents were not provided to the runtime: the entry point must import electron/agents/registry.js before it runs or lists agents',
    );
  return provided;
}

/** A built-in agent by name, or null. */
export function builtInAgent(name: string): AnyAgent | null {
  return builtInAgents().get(name) ?? null;
}
