/**
 * The renderer built in the test process, as `npm run build:renderer` builds
 * it. vite.config.ts sets NODE_ENV to production for a build (a test runner's
 * NODE_ENV=test would otherwise give React's development bundle); this
 * process's own NODE_ENV is put back afterwards.
 */
import path from 'node:path';
import { REPO } from './node-bundle.js';

export async function buildRenderer(opts: { outDir?: string } = {}): Promise<void> {
  const { build } = await import('vite');
  const before = process.env.NODE_ENV;
  try {
    await build({
      configFile: path.join(REPO, 'vite.config.ts'),
      logLevel: 'warn',
      ...(opts.outDir ? { build: { outDir: opts.outDir, emptyOutDir: true } } : {}),
    });
  } finally {
    if (before === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = before;
  }
}
