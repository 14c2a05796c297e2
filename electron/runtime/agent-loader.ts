/**
 * How a worker finds the agent a task names: a built-in by name, or a module
 * path (relative to the project root recorded with the task) and an export.
 *
 * Importing an agent module runs someone else's code, so only worker
 * processes do it; a module that throws, exports nothing runnable or never
 * finishes loading becomes an {@link AgentLoadError} that says which.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentRef } from '../../shared/checkpoint/schema.js';
import type { AnyAgent } from './define-agent.js';
import { hashCodeFile } from './code-file-hash.js';
import { messageOf, ServiceError } from '../../shared/api/error-codes.js';
import { importModule } from './import-module.js';

export type AgentLookup = (name: string) => AnyAgent | null;

/** Why an agent could not be loaded; the task it was meant for was not touched. */
export type AgentLoadProblem = 'module-missing' | 'module-throws' | 'no-agent-export' | 'load-timeout' | 'name-mismatch' | 'unknown-agent';

export class AgentLoadError extends ServiceError {
  readonly code = 'agent-unavailable';
  constructor(
    readonly problem: AgentLoadProblem,
    message: string,
  ) {
    super(message);
  }
}

/** How long an agent module may take to load before it is reported as hanging. */
export const DEFAULT_AGENT_LOAD_TIMEOUT_MS = 30_000;

/** The load timeout from `WAYSTATION_AGENT_LOAD_TIMEOUT_MS`, else the default. */
export function agentLoadTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.WAYSTATION_AGENT_LOAD_TIMEOUT_MS);
  return env.WAYSTATION_AGENT_LOAD_TIMEOUT_MS && Number.isFinite(n) && n > 0 ? n : DEFAULT_AGENT_LOAD_TIMEOUT_MS;
}

/**
 * Whether a value is an agent: what defineAgent returns (a name, a plan and a
 * run function, and options, when present, a zod schema).
 *
 * Options are parsed with `safeParse` at every start and resume, so an object
 * whose `options` is not a schema is refused here, with the reason, rather
 * than failing later with a TypeError.
 */
export function looksLikeAgent(v: unknown): v is AnyAgent {
  return notAnAgentBecause(v) === null;
}

/** Why a value is not an agent (the first missing part), or null when it is one. */
function notAnAgentBecause(v: unknown): string | null {
  const a = v as Partial<Record<'name' | 'run' | 'plan' | 'goal' | 'options', unknown>> | null;
  if (!a || typeof a !== 'object') return 'it is not an object';
  if (typeof a.name !== 'string' || a.name.length === 0) return 'it has no name';
  if (typeof a.run !== 'function') return 'it has no run function';
  if (typeof a.plan !== 'function') return 'it has no plan function';
  if (typeof a.goal !== 'function') return 'it has no goal function';
  // What starting a task needs (startTask refuses an agent without them), so an agent listed as startable is one.
  if (a.options === undefined) return 'it has no options schema; declare one with z.object({...}) (empty when it takes none)';
  if (typeof (a.options as { safeParse?: unknown } | null)?.safeParse !== 'function') {
    return 'its options is not a zod schema (it has no safeParse); declare it with z.object({...})';
  }
  return null;
}

/**
 * Why a task whose agent is neither built in nor a module cannot be resumed:
 * another program wrote it (or a build of Waystation with an agent this one lacks).
 */
export function foreignAgentProblem(name: string): string {
  return (
    `the task was written by another program (agent "${name}", which is neither built into Waystation nor a module it can load): ` +
    'it can be inspected, diffed and verified here, not resumed from Waystation'
  );
}

/** Whether a command-line agent argument is a module path rather than a built-in name. */
export function isModuleSpecifier(spec: string): boolean {
  return spec.startsWith('.') || path.isAbsolute(spec) || /\.(ts|mts|cts|js|mjs|cjs)$/.test(spec);
}

/**
 * The sha256 of a module file, or null when it cannot be read.
 *
 * Hashed in bounded memory (code-file-hash.ts): a module that is a pipe, a device or over the size limit has none.
 */
export async function hashModule(file: string): Promise<string | null> {
  const hashed = await hashCodeFile(file);
  return hashed.ok ? hashed.sha256 : null;
}

/**
 * The folder an agent module's relative path is recorded against: the nearest
 * folder above it with a package.json (its project), else `fallback`.
 */
export async function projectRootOf(file: string, fallback: string): Promise<string> {
  let dir = path.dirname(file);
  for (;;) {
    try {
      await fs.access(path.join(dir, 'package.json'));
      return dir;
    } catch {
      const up = path.dirname(dir);
      if (up === dir) return fallback;
      dir = up;
    }
  }
}

/** The absolute file of a recorded module reference; a relative project root is relative to the checkpoint directory. */
export function moduleFileOf(ref: Pick<AgentRef, 'module' | 'project_root'>, root: string): string | null {
  if (!ref.module) return null;
  return path.resolve(root, ref.project_root ?? '.', ref.module);
}

let tsLoaderRegistered = false;

/**
 * Make `.ts` agent modules importable from a plain-JavaScript process (the
 * compiled library, a bundled worker). Under tsx, or for JavaScript modules,
 * nothing is needed.
 */
async function ensureTypeScriptLoader(file: string): Promise<void> {
  if (tsLoaderRegistered || !/\.(ts|mts|cts)$/.test(file) || import.meta.url.endsWith('.ts')) return;
  // Both of tsx's hooks: a .ts file outside a package of "type": "module" is CommonJS to Node, and only the
  // CommonJS hook compiles it (without it Node finds ES module syntax in a file it requires, and refuses).
  const [esm, cjs] = await Promise.all([
    importModule<typeof import('tsx/esm/api')>('tsx/esm/api'),
    importModule<typeof import('tsx/cjs/api')>('tsx/cjs/api'),
  ]);
  esm.register();
  cjs.register();
  tsLoaderRegistered = true;
}

async function withTimeout<T>(work: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Not unref'd: a top-level await that never settles leaves nothing else to keep the process alive for the answer.
    timer = setTimeout(() => reject(new AgentLoadError('load-timeout', what())), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A module's own exports. A `.ts` file of a package that is not `"type": "module"` is CommonJS to Node: tsx compiles
 * its ES module syntax to `exports.default = …`, marked `__esModule`, and import() gives that whole object as the
 * default export; the exports the file wrote are the ones in it.
 */
function compiledEsModuleExports(mod: Record<string, unknown>): Record<string, unknown> {
  const inner = mod.default;
  return inner !== null && typeof inner === 'object' && (inner as { __esModule?: unknown }).__esModule === true
    ? (inner as Record<string, unknown>)
    : mod;
}

/**
 * Import an agent module and pick its agent.
 *
 * Without an export name: the default export, else the only agent among the
 * named exports.
 */
export async function importAgentModule(file: string, exportName?: string, opts: { timeoutMs?: number } = {}): Promise<AnyAgent> {
  try {
    await fs.access(file);
  } catch {
    throw new AgentLoadError('module-missing', `the agent module ${file} does not exist (moved or deleted?)`);
  }
  await ensureTypeScriptLoader(file);
  const timeoutMs = opts.timeoutMs ?? agentLoadTimeoutMs();
  let mod: Record<string, unknown>;
  try {
    mod = await withTimeout(
      importModule(pathToFileURL(file).href),
      timeoutMs,
      () =>
        `the agent module ${file} did not finish loading within ${timeoutMs} ms (a top-level await that never settles?); set WAYSTATION_AGENT_LOAD_TIMEOUT_MS to allow longer`,
    );
  } catch (err) {
    if (err instanceof AgentLoadError) throw err;
    const why = messageOf(err);
    throw new AgentLoadError('module-throws', `the agent module ${file} fails to load: ${why}`);
  }
  mod = compiledEsModuleExports(mod);
  const wanted = exportName && exportName !== 'default' ? exportName : undefined;
  let candidate: unknown;
  if (wanted) candidate = mod[wanted];
  else if (looksLikeAgent(mod.default)) candidate = mod.default;
  else {
    const agents = Object.entries(mod).filter(([, v]) => looksLikeAgent(v));
    if (agents.length > 1) {
      throw new AgentLoadError(
        'no-agent-export',
        `${file} exports several agents (${agents.map(([k]) => k).join(', ')}); choose one with --export NAME`,
      );
    }
    candidate = agents[0]?.[1];
  }
  if (!looksLikeAgent(candidate)) {
    const names = Object.keys(mod);
    // An export that is almost an agent says what it lacks; otherwise the exports say what there is.
    const near = wanted ? candidate : mod.default;
    const why = near && typeof near === 'object' && typeof (near as { name?: unknown }).name === 'string' ? notAnAgentBecause(near) : null;
    throw new AgentLoadError(
      'no-agent-export',
      `${file} does not export an agent${wanted ? ` named ${wanted}` : ''}: an agent is what defineAgent returns (name, plan and run, options a zod schema). ` +
        (why ? `Its ${wanted ?? 'default'} export is not one: ${why}. ` : '') +
        `Its exports are: ${names.length ? names.join(', ') : 'none'}`,
    );
  }
  return candidate;
}

/** A module agent described for recording: what the checkpoint's `agent` holds, before options. */
export type ModuleAgentRef = Required<Pick<AgentRef, 'name' | 'module' | 'export' | 'project_root' | 'module_sha256'>>;

/**
 * Describe an agent module for recording in a checkpoint: its name, its path
 * relative to the project root, the export and the module's sha256.
 *
 * `projectRoot` defaults to the module's project (nearest package.json),
 * else `cwd`. Imports the module: call it in a worker, not in a host.
 */
export async function describeModuleAgent(
  spec: string,
  opts: { cwd: string; exportName?: string; projectRoot?: string; timeoutMs?: number },
): Promise<ModuleAgentRef & { agent: AnyAgent }> {
  const file = path.resolve(opts.cwd, spec);
  const agent = await importAgentModule(file, opts.exportName, { timeoutMs: opts.timeoutMs });
  const projectRoot = opts.projectRoot ?? (await projectRootOf(file, opts.cwd));
  const sha = await hashModule(file);
  if (sha === null) throw new AgentLoadError('module-missing', `cannot read the agent module ${file}`);
  return {
    agent,
    name: agent.name,
    module: path.relative(path.resolve(opts.cwd, projectRoot), file).split(path.sep).join('/'),
    export: opts.exportName ?? 'default',
    project_root: projectRoot,
    module_sha256: sha,
  };
}

/**
 * Describe an agent given on the command line for recording in the checkpoint:
 * a built-in name as is; a module path with its project root and hash.
 */
export async function agentRefFor(spec: string, opts: { cwd: string; exportName?: string }): Promise<Partial<AgentRef> & { name: string }> {
  if (!isModuleSpecifier(spec)) return { name: spec };
  const { agent: _agent, ...ref } = await describeModuleAgent(spec, opts);
  return ref;
}

/** An agent and, for a module agent, the module's hash as loaded now. */
export interface LoadedAgent {
  agent: AnyAgent;
  /** The module file, for module agents. */
  file: string | null;
  /** sha256 of the module file now; null for built-ins. */
  module_sha256: string | null;
}

/**
 * Load the agent a task's `agent` reference names.
 *
 * @param root the checkpoint directory, against which a relative project root resolves.
 */
export async function loadAgent(
  ref: Pick<AgentRef, 'name' | 'module' | 'export' | 'project_root'>,
  builtIns: AgentLookup,
  opts: { root?: string; timeoutMs?: number } = {},
): Promise<LoadedAgent> {
  const file = moduleFileOf(ref, opts.root ?? process.cwd());
  if (file) {
    const agent = await importAgentModule(file, ref.export, { timeoutMs: opts.timeoutMs });
    if (agent.name !== ref.name) {
      throw new AgentLoadError('name-mismatch', `${file} now exports agent "${agent.name}", but the task was started with "${ref.name}"`);
    }
    return { agent, file, module_sha256: await hashModule(file) };
  }
  const agent = builtIns(ref.name);
  if (!agent) {
    throw new AgentLoadError('unknown-agent', foreignAgentProblem(ref.name));
  }
  return { agent, file: null, module_sha256: null };
}
