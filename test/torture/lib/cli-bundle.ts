/**
 * The `waystation` CLI and its workers built into plain JavaScript once, so the
 * thousands of runner and worker processes the crash scenario starts skip the
 * TypeScript loader. Both land in one folder, where the CLI's runner finds the
 * worker as its own build's entry.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { bundleForNode } from '../../support/node-bundle.js';

export { REPO } from '../../support/node-bundle.js';

export interface CliBundle {
  /** Run it as `node <cli> ARGS...`. */
  cli: string;
  dispose(): Promise<void>;
}

/** Bundle electron/cli/main.ts and its workers side by side. */
export async function bundleCli(): Promise<CliBundle> {
  const outdir = await bundleForNode(
    {
      'waystation-cli': 'electron/cli/main.ts',
      'worker-main': 'electron/runtime/worker-main.ts',
      'file-check-worker': 'electron/store/file-check-worker.ts',
    },
    'torture-cli-',
  );
  return { cli: path.join(outdir, 'waystation-cli.js'), dispose: () => fs.rm(outdir, { recursive: true, force: true }) };
}
