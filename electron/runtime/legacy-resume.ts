/**
 * Resuming a task in one of the source articles' formats. Such a task is
 * read-only until it is resumed: then it is imported (version 1 of a native
 * task, the original file untouched) and handed to the agent that recognises
 * it (`adoptLegacy`), which becomes version 2. A task no agent recognises is
 * refused before anything is written: it stays inspectable as it is.
 */
import { z } from 'zod';
import type { Checkpoint } from '../../shared/checkpoint/schema.js';
import { ConflictError, type TaskEntry } from '../store/store-types.js';
import type { AnyAgent } from './define-agent.js';
import { OperationError, withTaskEngine, type OperationEnv } from './task-operations.js';

/** What preparing a legacy task for resuming did. */
export interface LegacyResumePreparation {
  /** The native task to resume (a legacy folder `F/` imports into `F-imported/`). */
  taskId: string;
  agent: string;
  /** `done`: the legacy task had already finished; nothing was imported. */
  status: 'imported' | 'done';
  version: number | null;
  message: string;
}

export type LegacyFormat = 'article-task-json' | 'article-checkpoint-json';

export const isLegacyFormat = (format: string): format is LegacyFormat =>
  format === 'article-task-json' || format === 'article-checkpoint-json';

/**
 * The agent a resume hands a task in an article's format to, with the options it adopts it with: the first that
 * recognises it (adoptLegacy) with options its schema accepts. The resume then refuses it when that agent plans
 * another number of steps than the task has; the inspector asks the same before it offers Resume.
 */
export function findAdopter(
  cp: Checkpoint,
  format: LegacyFormat,
  agents: Iterable<AnyAgent>,
): { agent: AnyAgent; options: Record<string, unknown> } | null {
  for (const agent of agents) {
    const adopted = agent.adoptLegacy?.(cp, format);
    if (!adopted) continue;
    const parsed = (agent.options as z.ZodType).safeParse(adopted.options ?? {});
    if (parsed.success) return { agent, options: parsed.data as Record<string, unknown> };
  }
  return null;
}

/** A native task imported from an article file whose adoption never got saved (a crash between the two versions). */
function isUnadoptedImport(entry: TaskEntry): boolean {
  const cp = entry.checkpoint;
  return entry.format === 'waystation' && !!cp && !cp.agent && cp.source.kind === 'import' && !!cp.source.imported_from;
}

/**
 * Make a legacy task resumable: import it and attach the built-in agent that
 * recognises it. Returns null when the task is not a legacy one (nothing to do).
 *
 * Refuses (OperationError, nothing written) when no agent recognises the task.
 */
export async function importLegacyForResume(
  env: OperationEnv,
  taskId: string,
  agents: Iterable<AnyAgent>,
): Promise<LegacyResumePreparation | null> {
  const candidates = [...agents];
  const entry = await env.store.getTask(taskId);
  if (!entry) return null;
  if (entry.format === 'waystation') {
    if (!isUnadoptedImport(entry)) return null;
    const format = entry.checkpoint!.source.imported_from!.format as LegacyFormat;
    const adopter = findAdopter(entry.checkpoint!, format, candidates);
    if (!adopter) return null;
    return adopt(env, taskId, adopter, entry.checkpoint!.source.imported_from!.path);
  }
  if (entry.format === 'langgraph') {
    throw new OperationError(
      'read-only',
      `task ${taskId} is a LangGraph thread: LangGraph itself runs it on (invoke the graph on the thread); Waystation only reads it. Nothing was written.`,
    );
  }
  const cp = entry.checkpoint;
  if (!cp) {
    const why = entry.problems.map((p) => `${p.file}: ${p.message}`).join('; ');
    throw new OperationError('unreadable', `task ${taskId} (${entry.location}) cannot be read (${why}); nothing was imported`);
  }
  const adopter = findAdopter(cp, entry.format, candidates);
  if (!adopter) {
    throw new OperationError(
      'read-only',
      `task ${taskId} (${entry.location}) is in the ${entry.format} format: it can be inspected, but no agent is known to resume it ` +
        `(only the first article's four-step task is recognised, as checkpoint-demo). Nothing was imported or written.`,
    );
  }
  if (cp.status === 'done') {
    return {
      taskId,
      agent: adopter.agent.name,
      status: 'done',
      version: null,
      message: `task ${taskId} (${entry.location}) already finished; nothing to resume, nothing imported`,
    };
  }
  const planned = await adopter.agent.plan(adopter.options, { taskId, rootDir: env.root, baseDir: env.root });
  if (planned.length !== cp.plan.length) {
    throw new OperationError(
      'read-only',
      `task ${taskId} has ${cp.plan.length} steps, but agent ${adopter.agent.name} plans ${planned.length}; it cannot resume it. Nothing was imported.`,
    );
  }
  let importedId: string;
  try {
    importedId = (await env.store.importTask(taskId)).checkpoint.task_id;
  } catch (err) {
    // Another resume imported it at the same moment: carry on with its import.
    if (!(err instanceof ConflictError)) throw err;
    importedId = err.taskId;
  }
  return adopt(env, importedId, adopter, entry.location);
}

async function adopt(
  env: OperationEnv,
  taskId: string,
  adopter: { agent: AnyAgent; options: Record<string, unknown> },
  from: string,
): Promise<LegacyResumePreparation> {
  const { agent, options } = adopter;
  const planned = await agent.plan(options, { taskId, rootDir: env.root, baseDir: env.root });
  return withTaskEngine(env, taskId, 'import', async (engine, cp) => {
    if (cp.agent)
      return {
        taskId,
        agent: cp.agent.name,
        status: 'imported' as const,
        version: cp.version,
        message: `task ${taskId} was already imported from ${from}`,
      };
    const saved = await engine.save(
      (d) => {
        // The agent finds its steps by id; the names are what the task recorded, and stay as they were.
        d.plan = d.plan.map((s, i) => ({
          ...s,
          id: planned[i].id,
          ...(s.id !== planned[i].id ? { legacy_id: s.id } : {}),
          output_schema: planned[i].output_schema
            ? (z.toJSONSchema(planned[i].output_schema!, { unrepresentable: 'any' }) as Record<string, unknown>)
            : (s.output_schema ?? null),
        }));
        d.agent = { name: agent.name, options };
        // The article file says how far it got, not whether it failed: a human resuming it decides.
        d.status = 'waiting_human';
        d.resume_hint = `imported from ${from} and matched to agent ${agent.name}; resuming continues at the first unfinished step`;
      },
      { source: { kind: 'import', imported_from: cp.source.imported_from, note: `matched to agent ${agent.name} for resuming` } },
    );
    await engine.event({ type: 'runner', data: { status: 'imported', from, agent: agent.name } });
    return {
      taskId,
      agent: agent.name,
      status: 'imported' as const,
      version: saved.version,
      message: `imported ${from} as task ${taskId} (version ${saved.version}) for agent ${agent.name}; the original file is untouched`,
    };
  });
}
