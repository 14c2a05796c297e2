import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../../shared/api/contract.js';
import { builtInAgentInfos, catalogOf, RegisteredAgentsCache } from '../../../electron/host/agent-catalog-cache.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'waystation-agent-cache-'));
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const registered = (name: string, problem?: string): AgentInfo => ({
  name,
  description: `registered ${name}`,
  options_schema: {},
  origin: 'registered',
  ...(problem ? { problem } : {}),
});

describe('the agent catalog', () => {
  it('lists the built-ins with the JSON Schema of their options', () => {
    const builtIn = builtInAgentInfos();
    expect(builtIn.map((a) => a.name)).toContain('checkpoint-demo');
    for (const a of builtIn) {
      expect(a.origin).toBe('builtin');
      expect(a.options_schema).toMatchObject({ type: 'object' });
    }
  });

  it('shadows a working registration under a built-in name, and shows a broken one so its reason is seen', () => {
    const builtIn = builtInAgentInfos();
    const name = builtIn[0].name;
    const all = catalogOf(builtIn, [registered(name), registered(name, 'the module throws'), registered('mine')]);
    expect(all.filter((a) => a.name === name).map((a) => a.origin)).toEqual(['builtin', 'registered']);
    expect(all.find((a) => a.name === name && a.origin === 'registered')?.problem).toBe('the module throws');
    expect(all.at(-1)?.name).toBe('mine');
  });
});

describe('the registered agents of a directory', () => {
  it('are described once, again when the configuration changes, and again when a module file changes', async () => {
    await fs.writeFile(path.join(root, 'agent.mjs'), 'export default {};\n');
    await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agent.mjs' }] }));
    let descriptions = 0;
    const cache = new RegisteredAgentsCache(root, async () => [registered(`mine-${++descriptions}`)]);
    expect((await cache.list()).map((a) => a.name)).toEqual(['mine-1']);
    expect((await cache.list()).map((a) => a.name)).toEqual(['mine-1']);
    cache.invalidate();
    expect((await cache.list()).map((a) => a.name)).toEqual(['mine-2']);
    await fs.writeFile(path.join(root, 'agent.mjs'), 'export default { changed: true };\n');
    expect((await cache.list()).map((a) => a.name)).toEqual(['mine-3']);
  });

  it('are described again after a description failed, rather than keeping the failure', async () => {
    let calls = 0;
    const cache = new RegisteredAgentsCache(root, async () => {
      calls += 1;
      if (calls === 1) throw new Error('the worker could not start');
      return [registered('mine')];
    });
    await expect(cache.list()).rejects.toThrow('the worker could not start');
    expect((await cache.list()).map((a) => a.name)).toEqual(['mine']);
  });
});
