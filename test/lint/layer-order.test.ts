import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ELECTRON_FLOORS } from '../../lint/layer-order.js';

const repo = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: repo });

/** The layer-order findings of `code` linted as if it were the file `file`. */
async function layerFindings(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repo, file) });
  return result.messages.filter((m) => m.ruleId === 'local/layer-order').map((m) => m.message);
}

describe('the layer order of electron/', () => {
  it('is stated lowest first, store at the bottom and main at the top', () => {
    expect(ELECTRON_FLOORS).toEqual(['store', 'sources', 'verify', 'llm', 'runtime', 'agents', 'host', 'cli', 'main']);
  });

  it('fails an import from a floor above, naming both floors and the order', async () => {
    const found = await layerFindings(
      'electron/verify/lease-probe.ts',
      "import { Lease } from '../runtime/lease.js';\nexport { Lease };\n",
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toContain('electron/verify/lease-probe.ts is on floor "verify" and may not import from "runtime"');
    expect(found[0]).toContain('store < sources < verify < llm < runtime < agents < host < cli < main');
  });

  it('fails the runtime importing the agents written against it', async () => {
    const found = await layerFindings('electron/runtime/probe.ts', "export { builtInAgents } from '../agents/registry.js';\n");
    expect(found).toHaveLength(1);
  });

  it('sees through a deeper relative path, and a store backend in a subfolder is on the store floor', async () => {
    expect(await layerFindings('electron/store/postgres/probe.ts', "import '../../host/host-service.js';\n")).toHaveLength(1);
    expect(await layerFindings('electron/store/postgres/probe.ts', "import '../store-types.js';\n")).toEqual([]);
    expect(await layerFindings('electron/sources/probe.ts', "import '../store/store-types.js';\n")).toEqual([]);
  });

  it('lets a floor import its own and those below', async () => {
    const code =
      "import '../store/store-types.js';\nimport '../verify/verify-task.js';\nimport '../runtime/runner.js';\nimport './host-ports.js';\n";
    expect(await layerFindings('electron/host/probe.ts', code)).toEqual([]);
  });

  it('lets the declared composition roots provide the agents, and no other runtime module', async () => {
    expect(await layerFindings('electron/runtime/worker-main.ts', "import '../agents/registry.js';\n")).toEqual([]);
    expect(await layerFindings('electron/runtime/runner.ts', "import '../agents/registry.js';\n")).toHaveLength(1);
  });

  it('refuses a folder that has no floor', async () => {
    const found = await layerFindings('electron/plugins/probe.ts', "import '../store/store-types.js';\n");
    expect(found[0]).toContain('electron/plugins/ is not one of the declared floors');
  });
});
