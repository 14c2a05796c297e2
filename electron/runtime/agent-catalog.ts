/**
 * The agents a checkpoint directory can start: the built-in ones and those
 * registered in `ROOT/waystation.config.json`:
 *
 * ```json
 * { "agents": [{ "module": "./agents/my-agent.ts", "export": "default" }] }
 * ```
 *
 * Module paths are relative to ROOT. Registered modules are loaded in worker
 * processes (agent-describer.ts), never in the caller's process.
 */
import path from 'node:path';
import { z } from 'zod';
import { builtInAgents } from './built-in-agents.js';
import { describeAgentModule, type DescribeOptions } from './agent-describer.js';
import type { DescribedAgent } from './worker-protocol.js';
import { nodeFs } from '../store/store-fs.js';
import { optionsJsonSchema } from '../../shared/api/options-json-schema.js';
import { CommandAgentEntry } from './command-agent.js';
import { nearestName } from './nearest-name.js';

/** The configuration file's name, in the checkpoint directory root. */
export const AGENTS_CONFIG_FILE = 'waystation.config.json';
/** A configuration file is a short list of agents; anything far larger is not one. */
const CONFIG_MAX_BYTES = 1024 * 1024;

export const AgentConfigEntry = z.strictObject({
  /** The agent module, relative to the directory root (or absolute). */
  module: z.string().min(1, 'module must name a file'),
  /** The export holding the agent; default: the default export. */
  export: z.string().min(1).optional(),
  /** The agent's name, so starting it by name needs no loading of the other modules. */
  name: z.string().min(1).optional(),
});
export type AgentConfigEntry = z.infer<typeof AgentConfigEntry>;

export const AgentsConfig = z.looseObject({
  $schema: z.string().optional(),
  /** Module agents and command agents (command-agent.ts), told apart by `module` or `command`. */
  agents: z.array(z.union([AgentConfigEntry, CommandAgentEntry])).default([]),
});
export type AgentsConfig = z.infer<typeof AgentsConfig>;

/** The configuration as read: its entries, or why it could not be used. */
export interface AgentsConfigRead {
  file: string;
  /** Whether the file exists. */
  present: boolean;
  entries: AgentConfigEntry[];
  /** The command agents it registers: programs in any language, started as processes of their own. */
  commands: CommandAgentEntry[];
  /** What is wrong with the file; null when it is absent or valid. With a problem, `entries` and `commands` are empty. */
  problem: string | null;
}

/** Read and validate `ROOT/waystation.config.json`. Never throws: a bad file is a problem, not an exception. */
export async function readAgentsConfig(root: string): Promise<AgentsConfigRead> {
  const file = path.join(root, AGENTS_CONFIG_FILE);
  let text: string;
  try {
    // Through the store's reader: a named pipe or a device in the file's place is refused, not waited on.
    const read = await nodeFs.readWholeFile(file, { maxBytes: CONFIG_MAX_BYTES, followLinks: true });
    if (!read.ok) {
      const why = read.reason === 'too-large' ? `it is ${read.size} bytes, over ${CONFIG_MAX_BYTES}` : 'it is not a regular file';
      return {
        file,
        present: true,
        entries: [],
        commands: [],
        problem: `${file} cannot be read (${why}); no registered agent is available`,
      };
    }
    text = read.bytes.toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { file, present: false, entries: [], commands: [], problem: null };
    return {
      file,
      present: true,
      entries: [],
      commands: [],
      problem: `${file} cannot be read (${code ?? String(err)}); no registered agent is available`,
    };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return {
      file,
      present: true,
      entries: [],
      commands: [],
      problem: `${file} is not valid JSON (${(err as Error).message}); no registered agent is available`,
    };
  }
  const parsed = AgentsConfig.safeParse(doc);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`).join('; ');
    return {
      file,
      present: true,
      entries: [],
      commands: [],
      problem: `${file} does not fit the expected shape {"agents": [{"module": "./agent.ts", "export": "default"} or {"name": "my-agent", "command": ["python3", "agent.py"]}]}: ${issues}; no registered agent is available`,
    };
  }
  const agents = parsed.data.agents;
  return {
    file,
    present: true,
    entries: agents.filter((a): a is AgentConfigEntry => 'module' in a),
    commands: agents.filter((a): a is CommandAgentEntry => 'command' in a),
    problem: null,
  };
}

/**
 * Why no agent named `name` can start from a directory configured as `config`, when that is known without loading a
 * module: it is not built in, no entry or command is registered under it, and no entry leaves its name to its module
 * to tell (or the configuration cannot be used at all). Null when it may yet be found. A command can then say so
 * before it asks to trust the directory for an agent that is not there.
 */
export function agentNotFound(name: string, config: AgentsConfigRead): string | null {
  if (builtInAgents().has(name)) return null;
  if (config.problem) return `"${name}" is not a built-in agent (${builtInNames()}), and ${config.problem}`;
  const registered = [...config.commands, ...config.entries].some((e) => e.name === name);
  if (registered || config.entries.some((e) => !e.name)) return null;
  return noAgentMessage(name, config);
}

/**
 * "There is no agent": the built-in agents and what the configuration registers, the name nearest the one asked
 * for, and why registered entries that were loaded to look for it did not give it (`failures`).
 */
export function noAgentMessage(name: string, config: AgentsConfigRead, failures: readonly string[] = []): string {
  const registered = [...config.commands.map((c) => c.name), ...config.entries.map((e) => e.name ?? e.module)];
  const near = nearestName(name, [...builtInAgents().keys(), ...registered]);
  return (
    `there is no agent "${name}"${near ? ` (did you mean "${near}"?)` : ''}: the built-in agents are ${builtInNames()}` +
    (config.present
      ? `, and ${AGENTS_CONFIG_FILE} registers ${registered.length ? registered.join(', ') : 'none'}`
      : `; register others in ${AGENTS_CONFIG_FILE}`) +
    (failures.length ? ` (${failures.join('; ')})` : '') +
    '. Nothing was written.'
  );
}

function builtInNames(): string {
  return [...builtInAgents().keys()].join(', ');
}

/** One agent the directory can start, as the app lists it. */
export interface AvailableAgent {
  name: string;
  description: string;
  /** JSON Schema of the agent's options (input side), for a start form. */
  options_schema: Record<string, unknown>;
  origin: 'builtin' | 'registered';
  /** Registered agents: the module as written in the configuration, and its export. */
  module?: string;
  /** Command agents: the command as registered. */
  command?: string[];
  export?: string;
  /** Set when the agent cannot be started (a module that is missing or does not load, a bad configuration). */
  problem?: string;
}

/** The directory's agents, and what is wrong with its configuration, if anything. */
export interface AgentCatalog {
  agents: AvailableAgent[];
  config_problem: string | null;
}

/** Load one registered entry in a worker, for recording or listing. */
export function describeConfigEntry(root: string, entry: AgentConfigEntry, opts: DescribeOptions = {}): Promise<DescribedAgent> {
  return describeAgentModule({ root, spec: entry.module, cwd: root, exportName: entry.export, projectRoot: root }, opts).then((d) => ({
    ...d,
    // Relative to the directory itself, so the directory and its agents can move together.
    project_root: '.',
  }));
}

/**
 * List the agents a directory can start: the built-in ones, then those its
 * configuration registers, each loaded in a worker process to learn its name,
 * description and options. An entry that does not load is listed with its
 * problem; a bad configuration file adds one entry that says what is wrong
 * (and `config_problem`).
 */
export async function listAvailableAgents(root: string, opts: DescribeOptions = {}): Promise<AgentCatalog> {
  const agents: AvailableAgent[] = [...builtInAgents().values()].map((agent) => ({
    name: agent.name,
    description: agent.description,
    options_schema: optionsJsonSchema(agent.options),
    origin: 'builtin',
  }));
  const config = await readAgentsConfig(path.resolve(root));
  if (config.problem) {
    agents.push({
      name: AGENTS_CONFIG_FILE,
      description: 'the agents registered for this directory',
      options_schema: {},
      origin: 'registered',
      problem: config.problem,
    });
    return { agents, config_problem: config.problem };
  }
  const described = await Promise.all(
    config.entries.map(async (entry): Promise<AvailableAgent> => {
      const where = { module: entry.module, ...(entry.export ? { export: entry.export } : {}) };
      try {
        const d = await describeConfigEntry(path.resolve(root), entry, opts);
        if (entry.name && entry.name !== d.name) {
          return {
            ...where,
            name: entry.name,
            description: d.description,
            options_schema: d.options_schema,
            origin: 'registered',
            problem: `${entry.module} exports agent "${d.name}", but ${AGENTS_CONFIG_FILE} calls it "${entry.name}"`,
          };
        }
        if (builtInAgents().has(d.name)) {
          return {
            ...where,
            name: d.name,
            description: d.description,
            options_schema: d.options_schema,
            origin: 'registered',
            problem: `"${d.name}" is the name of a built-in agent; the built-in one is started by that name`,
          };
        }
        return { ...where, name: d.name, description: d.description, options_schema: d.options_schema, origin: 'registered' };
      } catch (err) {
        return {
          ...where,
          name: entry.name ?? entry.module,
          description: '',
          options_schema: {},
          origin: 'registered',
          problem: (err as Error).message,
        };
      }
    }),
  );
  // Command agents are listed from the configuration alone: nothing of theirs runs until a task is started.
  const commands = config.commands.map((entry): AvailableAgent => ({
    name: entry.name,
    description: entry.description ?? `runs ${entry.command.join(' ')}`,
    options_schema: entry.options ?? {},
    origin: 'registered',
    command: entry.command,
    ...(builtInAgents().has(entry.name)
      ? { problem: `"${entry.name}" is the name of a built-in agent; the built-in one is started by that name` }
      : {}),
  }));
  return { agents: [...agents, ...named([...described, ...commands])], config_problem: null };
}

/**
 * The registered agents, each whose name another entry registers too said to be so: one name starts one agent, and
 * which of two entries it would start is not for the configuration's order to decide in silence.
 */
function named(registered: AvailableAgent[]): AvailableAgent[] {
  const count = new Map<string, number>();
  for (const a of registered) count.set(a.name, (count.get(a.name) ?? 0) + 1);
  return registered.map((a) =>
    (count.get(a.name) ?? 0) > 1 && !a.problem
      ? { ...a, problem: `"${a.name}" is registered more than once in ${AGENTS_CONFIG_FILE}; give each agent a name of its own` }
      : a,
  );
}
