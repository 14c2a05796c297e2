/**
 * How a worker finds the agent a task names: a built-in by name, or a module
 * path (relative to the project root recorded with the task) and an export.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentRef } from '../../shared/checkpoint/schema.js';
import type { AnyAgent } from './define-agent.js';

export type AgentLookup = (name: string) => AnyAgent | null;

function looksLikeAgent(v: unknown): v is AnyAgent {
  const a = v as AnyAgent | null;
  return !!a && typeof a === 'object' && typeof a.name === 'string' && typeof a.run === 'function' && typeof a.plan === 'function';
}

/** Whether a command-line agent argument is a module path rather than a built-in name. */
export function isModuleSpecifier(spec: string): boolean {
  return spec.startsWith('.') || path.isAbsolute(spec) || /\.(ts|mts|js|mjs)$/.test(spec);
}

/**
 * Describe an agent given on the command line for recording in the checkpoint:
 * a built-in name as is; a module path relative to the project root, with its hash.
 */
export async function agentRefFor(spec: string, opts: { cwd: string; exportName?: string }): Promise<Partial<AgentRef> & { name: string }> {
  if (!isModuleSpecifier(spec)) return { name: spec };
  const file = path.resolve(opts.cwd, spec);
  const bytes = await fs.readFile(file).catch((err: Error) => {
    throw new Error(`cannot read the agent module ${file}: ${err.message}`);
  });
  const agent = await importAgent(file, opts.exportName);
  return {
    name: agent.name,
    module: path.relative(opts.cwd, file).split(path.sep).join('/'),
    export: opts.exportName ?? 'default',
    project_root: opts.cwd,
    module_sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}

async function importAgent(file: string, exportName?: string): Promise<AnyAgent> {
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const candidate = exportName ? mod[exportName] : (mod.default ?? Object.values(mod).find(looksLikeAgent));
  if (!looksLikeAgent(candidate)) {
    throw new Error(`${file} does not export an agent${exportName ? ` named ${exportName}` : ''} (an object from defineAgent with name, plan and run)`);
  }
  return candidate;
}

/** Load the agent a task's `agent` reference names. */
export async function loadAgent(ref: Pick<AgentRef, 'name' | 'module' | 'export' | 'project_root'>, builtIns: AgentLookup): Promise<AnyAgent> {
  if (ref.module) {
    const file = path.resolve(ref.project_root ?? process.cwd(), ref.module);
    const agent = await importAgent(file, ref.export === 'default' ? undefined : ref.export);
    if (agent.name !== ref.name) throw new Error(`${file} now exports agent ${agent.name}, but the task was started with ${ref.name}`);
    return agent;
  }
  const agent = builtIns(ref.name);
  if (!agent) throw new Error(`there is no built-in agent named "${ref.name}"; give a module path (./agent.ts) for agents outside Waystation`);
  return agent;
}
