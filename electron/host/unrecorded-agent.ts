/**
 * A task that records no agent (a file in one of the source articles'
 * formats, an import whose adoption never got saved, a LangGraph thread):
 * whether a resume would find a built-in agent to hand it to, decided as the
 * runtime's resume decides it (legacy-resume.ts), without writing anything.
 *
 * The task view offers Resume on what it says: a task nothing can resume
 * shows why instead of a button that ends in a refusal.
 */
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import type { TaskFormat } from '../../shared/checkpoint/task-summary.js';
import { builtInAgents } from '../runtime/built-in-agents.js';
import { findAdopter, isLegacyFormat, type LegacyFormat } from '../runtime/legacy-resume.js';
import type { AnyAgent } from '../runtime/define-agent.js';

/**
 * The built-in agent a resume would hand `cp` (read in `format`) to, as the runtime picks it (findAdopter), when
 * its plan has as many steps as the task, which the resume requires. Null when none does; undefined when the
 * built-in agents are not known here.
 */
async function adopter(root: string, cp: Checkpoint, format: LegacyFormat): Promise<AnyAgent | null | undefined> {
  let agents: Iterable<AnyAgent>;
  try {
    agents = builtInAgents().values();
  } catch {
    // No entry point provided them (built-in-agents.ts): which agent would adopt the task is not known here.
    return undefined;
  }
  const found = findAdopter(cp, format, agents);
  if (!found) return null;
  try {
    const planned = await found.agent.plan(found.options as never, { taskId: cp.task_id, rootDir: root, baseDir: root });
    return planned.length === cp.plan.length ? found.agent : null;
  } catch {
    // An agent that cannot plan the task cannot resume it.
    return null;
  }
}

/**
 * Why a resume of `cp`, which records no agent, would be refused; null when
 * a built-in agent recognises it (the resume imports it and hands it over).
 *
 * @param recorded what the runtime says of a task that records no agent, for a task of Waystation's own format that is no import.
 */
export async function unrecordedAgentProblem(root: string, cp: Checkpoint, format: TaskFormat, recorded: string): Promise<string | null> {
  if (format === 'langgraph')
    return 'this is a LangGraph thread: LangGraph itself runs it on (invoke the graph on the thread); Waystation only reads it';
  const from = format === 'waystation' ? (cp.source.kind === 'import' ? cp.source.imported_from?.format : undefined) : format;
  if (from === undefined || !isLegacyFormat(from)) return recorded;
  // Unknown (undefined): the resume itself says, as it did before the view could tell.
  if ((await adopter(root, cp, from)) !== null) return null;
  return (
    `no agent Waystation has recognises this task (${from} format): it can be inspected, not resumed; ` +
    'a resume would import nothing and write nothing'
  );
}
