/**
 * The agents a host may start: those the directory's catalog lists (the
 * built-in ones and those its waystation.config.json registers), by name.
 *
 * A start request naming anything else is refused before a worker is
 * launched, so a page or a token holder can never make the host import a
 * file of its choosing: a path is never an agent name.
 */
import type { AgentInfo } from '../../shared/api/contract.js';
import { ApiError } from '../../shared/api/api-error.js';
import { isModuleSpecifier } from '../runtime/agent-loader.js';
import { nearestName } from '../runtime/nearest-name.js';

/** Refuse an agent the catalog does not list as startable; see the module comment. */
export function refuseUnlistedAgent(agent: string, catalog: readonly AgentInfo[]): void {
  const startable = catalog.filter((a) => !a.problem).map((a) => a.name);
  const listed = `the agents this directory can start are ${startable.join(', ') || 'none'}`;
  if (isModuleSpecifier(agent) || /[/\\\0]/.test(agent)) {
    throw new ApiError(
      'invalid-input',
      `"${agent.slice(0, 200)}" is a path, not an agent name: the app starts only the agents of the directory's catalog (${listed}); register a module in waystation.config.json to start it here. Nothing was started`,
    );
  }
  const found = catalog.find((a) => a.name === agent);
  if (!found) {
    const near = nearestName(agent, startable);
    throw new ApiError(
      'not-found',
      `there is no agent "${agent}"${near ? ` (did you mean "${near}"?)` : ''}: ${listed}. Nothing was started`,
    );
  }
  if (found.problem) throw new ApiError('failed', `the agent "${agent}" cannot be started: ${found.problem}. Nothing was started`);
}
