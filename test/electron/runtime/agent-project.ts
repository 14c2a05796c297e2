/**
 * A user's project with one agent module, as the module-agent tests need it:
 * the module imports the runtime from the sources, so no build is needed.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The runtime's entry (`defineAgent`, `z`), as an import specifier an agent module outside the repository can use. */
export const RUNTIME_INDEX_URL = pathToFileURL(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../electron/runtime/index.ts'),
).href;

/** A module agent with one step that fails until the file its `gate` option names exists, so the task stops resumable. */
export const GATED_AGENT = `
import { promises as fs } from 'node:fs';
import { defineAgent, z } from '${RUNTIME_INDEX_URL}';

export default defineAgent({
  name: 'gated',
  description: 'waits for a gate file',
  options: z.object({ gate: z.string() }),
  goal: () => 'pass the gate',
  plan: () => [{ id: 'pass', name: 'pass the gate' }],
  async run(ctx) {
    await ctx.step('pass', async () => {
      await fs.access(ctx.options.gate).catch(() => { throw new Error('the gate file is missing'); });
      return 'passed';
    });
  },
});
`;

export interface AgentProject {
  /** `<tmp>/project`: holds package.json and agents/. */
  project: string;
  /** `<project>/checkpoints`, created empty. */
  root: string;
  /** `<project>/agents/<name>`. */
  moduleFile: string;
  /** `<tmp>/gate`, not created: the agents fail their gated step until a test writes it. */
  gate: string;
}

/** Write, under `tmp`, an ESM project whose `agents/<name>` holds `source`, and an empty checkpoint directory in it. */
export async function writeAgentProject(tmp: string, name: string, source: string): Promise<AgentProject> {
  const project = path.join(tmp, 'project');
  const root = path.join(project, 'checkpoints');
  const moduleFile = path.join(project, 'agents', name);
  await fs.mkdir(path.join(project, 'agents'), { recursive: true });
  await fs.mkdir(root);
  await fs.writeFile(path.join(project, 'package.json'), '{"name":"project","type":"module"}\n');
  await fs.writeFile(moduleFile, source);
  return { project, root, moduleFile, gate: path.join(tmp, 'gate') };
}
