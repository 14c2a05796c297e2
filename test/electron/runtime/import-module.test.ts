import { afterEach, expect, it } from 'vitest';
import { HANDED_IMPORT, importModule } from '../../../electron/runtime/import-module.js';

afterEach(() => {
  delete (globalThis as Record<symbol, unknown>)[HANDED_IMPORT];
});

it('imports with import() where no loader handed one over', async () => {
  const path = await importModule<typeof import('node:path')>('node:path');
  expect(path.join('a', 'b')).toBe(`a${path.sep}b`);
});

it("imports through the loader's import() where it handed one over (worker-loader.cts)", async () => {
  const asked: string[] = [];
  (globalThis as Record<symbol, unknown>)[HANDED_IMPORT] = (specifier: string) => {
    asked.push(specifier);
    return Promise.resolve({ from: 'the loader' });
  };
  expect(await importModule('file:///agents/agent.mjs')).toEqual({ from: 'the loader' });
  expect(asked).toEqual(['file:///agents/agent.mjs']);
});
