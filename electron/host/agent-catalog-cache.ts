/**
 * The agents a start form offers: the built-in ones, and those registered in
 * the open directory's waystation.config.json.
 *
 * Registered modules are described in worker processes (loading one runs its
 * code), which takes a process start per module: the description is kept
 * per directory and made again only when the configuration changes (the
 * watcher says so) or one of the module files does (it may live outside the
 * directory, so its size and times are compared at each ask).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { AgentInfo } from '../../shared/api/contract.js';
import { optionsJsonSchema } from '../../shared/api/options-json-schema.js';
import { builtInAgents } from '../agents/registry.js';
import { readAgentsConfig } from '../runtime/agent-catalog.js';
import { isModuleSpecifier } from '../runtime/agent-loader.js';

/** The built-in agents as the API describes them. */
export function builtInAgentInfos(): AgentInfo[] {
  return [...builtInAgents.values()].map((agent) => ({
    name: agent.name,
    description: agent.description,
    options_schema: optionsJsonSchema(agent.options),
    origin: 'builtin',
  }));
}

/**
 * The whole catalog: the built-ins, then the registered agents. A working
 * registration under a built-in's name is shadowed by the built-in; a broken
 * one is shown, so its reason is seen.
 */
export function catalogOf(builtIn: AgentInfo[], registered: AgentInfo[]): AgentInfo[] {
  return [...builtIn, ...registered.filter((r) => !builtInAgents.has(r.name) || r.problem)];
}

/** The registered agents of one directory, described once and again when their configuration or modules change. */
export class RegisteredAgentsCache {
  private registered: Promise<AgentInfo[]> | null = null;
  /** The identity of the registered modules' files when `registered` was loaded (see registeredModulesIdentity). */
  private identity: string | null = null;

  constructor(
    private readonly root: string,
    private readonly describe: (root: string) => Promise<AgentInfo[]>,
  ) {}

  /** Forget the descriptions: the configuration changed. */
  invalidate(): void {
    this.registered = null;
  }

  /** The registered agents, described again when a module file changed since the last time. */
  async list(): Promise<AgentInfo[]> {
    const identity = await registeredModulesIdentity(this.root);
    if (identity !== this.identity) {
      this.registered = null;
      this.identity = identity;
    }
    this.registered ??= this.describe(this.root).catch((err: unknown) => {
      this.registered = null;
      throw err;
    });
    return this.registered;
  }
}

/**
 * Each registered module file's size and times, one line per configuration
 * entry: what the agents' descriptions were made from. A package name is
 * kept as written (it changes with the configuration, which the watcher sees).
 */
async function registeredModulesIdentity(root: string): Promise<string> {
  const { entries } = await readAgentsConfig(root);
  const lines = await Promise.all(
    entries.map(async ({ module }) => {
      if (!isModuleSpecifier(module)) return module;
      const st = await fs.stat(path.resolve(root, module)).catch(() => null);
      return st ? `${module} ${st.size} ${st.mtimeMs} ${st.ctimeMs}` : `${module} missing`;
    }),
  );
  return lines.join('\n');
}
