/**
 * The renderer's build is React's production bundle whatever NODE_ENV the
 * build inherits: `npm test` and the end-to-end test build it from inside
 * vitest, whose NODE_ENV is "test", and the app serves whatever was built.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildRenderer } from '../support/renderer-build.js';

let out: string;
beforeEach(async () => {
  out = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-renderer-build-'));
});
afterEach(async () => {
  await fs.rm(out, { recursive: true, force: true });
});

it('builds the production bundle from inside a test runner, and leaves the runner its NODE_ENV', async () => {
  expect(process.env.NODE_ENV).toBe('test');
  await buildRenderer({ outDir: out });
  expect(process.env.NODE_ENV).toBe('test');
  const assets = path.join(out, 'assets');
  const scripts = (await fs.readdir(assets)).filter((f) => f.endsWith('.js'));
  expect(scripts.length).toBeGreaterThan(0);
  const code = (await Promise.all(scripts.map((f) => fs.readFile(path.join(assets, f), 'utf8')))).join('\n');
  // The bundle holds React (its root API) but none of its development build: the dev JSX runtime and owner stacks.
  const build = {
    reactRoot: code.includes('createRoot'),
    devJsxRuntime: code.includes('jsxDEV'),
    ownerStacks: code.includes('react_stack_bottom_frame'),
  };
  expect(build).toEqual({ reactRoot: true, devJsxRuntime: false, ownerStacks: false });
  expect(await fs.readFile(path.join(out, 'index.html'), 'utf8')).toContain('./assets/');
});
