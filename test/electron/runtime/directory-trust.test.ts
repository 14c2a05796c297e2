/**
 * The trust store: where it lives, what a trust covers, and that it is
 * forgotten when waystation.config.json, a registered module or a command
 * agent's script changes.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isTrusted, trustDirectory, trustFilePath, trustState } from '../../../electron/runtime/directory-trust.js';

let tmp: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ws-trust-')));
  root = path.join(tmp, 'dir');
  await fs.mkdir(path.join(root, 'agents'), { recursive: true });
  await fs.writeFile(path.join(root, 'agents/a.mjs'), 'export default {};\n');
  await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agents/a.mjs' }] }));
  env = { WAYSTATION_TRUST_FILE: path.join(tmp, 'trust.json') };
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('the trust store', () => {
  it('lives in XDG_CONFIG_HOME/waystation, or where WAYSTATION_TRUST_FILE says', () => {
    if (process.platform === 'linux') {
      expect(trustFilePath({ XDG_CONFIG_HOME: '/x/config' })).toBe('/x/config/waystation/trusted-directories.json');
      expect(trustFilePath({})).toBe(path.join(os.homedir(), '.config/waystation/trusted-directories.json'));
    }
    expect(trustFilePath({ WAYSTATION_TRUST_FILE: '/t/trust.json', XDG_CONFIG_HOME: '/x' })).toBe(path.resolve('/t/trust.json'));
  });

  it('holds nothing at first: every directory is untrusted until trusted', async () => {
    expect(await isTrusted(root, env)).toBe(false);
    await trustDirectory(root, env);
    expect(await isTrusted(root, env)).toBe(true);
    // Keyed by realpath: a symbolic link to the directory is the same directory.
    await fs.symlink(root, path.join(tmp, 'link'));
    expect(await isTrusted(path.join(tmp, 'link'), env)).toBe(true);
    const stored = JSON.parse(await fs.readFile(env.WAYSTATION_TRUST_FILE!, 'utf8')) as { directories: Record<string, unknown> };
    expect(Object.keys(stored.directories)).toEqual([root]);
  });

  it('is forgotten when waystation.config.json changes', async () => {
    await trustDirectory(root, env);
    await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agents/b.mjs' }] }));
    expect(await trustState(root, env)).toMatchObject({ trusted: false, changed: true });
  });

  it('is forgotten when a registered module changes, and trusted again on request', async () => {
    await trustDirectory(root, env);
    await fs.writeFile(path.join(root, 'agents/a.mjs'), 'export default { evil: true };\n');
    expect(await trustState(root, env)).toMatchObject({ trusted: false, changed: true });
    await trustDirectory(root, env);
    expect(await isTrusted(root, env)).toBe(true);
  });

  it("covers a command agent's script files inside the directory, not the program it runs", async () => {
    await fs.writeFile(path.join(root, 'agent.py'), 'print("hello")\n');
    await fs.writeFile(
      path.join(root, 'waystation.config.json'),
      JSON.stringify({ agents: [{ module: './agents/a.mjs' }, { name: 'py', command: ['python3', 'agent.py'] }] }),
    );
    const print = await trustDirectory(root, env);
    expect(print.files.map((f) => f.file)).toEqual([
      path.join(root, 'waystation.config.json'),
      path.join(root, 'agents/a.mjs'),
      path.join(root, 'agent.py'),
    ]);
    expect(await isTrusted(root, env)).toBe(true);
    await fs.writeFile(path.join(root, 'agent.py'), 'print("changed")\n');
    expect(await trustState(root, env)).toMatchObject({ trusted: false, changed: true });
    await trustDirectory(root, env);
    // A script that goes is a change too.
    await fs.rm(path.join(root, 'agent.py'));
    expect(await trustState(root, env)).toMatchObject({ trusted: false, changed: true });
  });

  it('is forgotten when a waystation.config.json appears in a directory trusted without one', async () => {
    await fs.rm(path.join(root, 'waystation.config.json'));
    await trustDirectory(root, env);
    expect(await isTrusted(root, env)).toBe(true);
    await fs.writeFile(path.join(root, 'waystation.config.json'), JSON.stringify({ agents: [{ module: './agents/a.mjs' }] }));
    expect(await isTrusted(root, env)).toBe(false);
  });

  it('never takes a database URL for a folder, and drops such entries an earlier build wrote, password and all', async () => {
    await expect(trustDirectory('postgres://me:s3cret@127.0.0.1/db', env)).rejects.toThrow('not of a database URL');
    await trustDirectory(root, env);
    const file = env.WAYSTATION_TRUST_FILE!;
    const doc = JSON.parse(await fs.readFile(file, 'utf8')) as { directories: Record<string, unknown> };
    doc.directories[path.join(tmp, 'postgres:/me:s3cret@127.0.0.1:5432/db')] = { trusted_at: 'then', files: {} };
    await fs.writeFile(file, JSON.stringify(doc));
    expect(await isTrusted(root, env)).toBe(true);
    const after = await fs.readFile(file, 'utf8');
    expect(after).not.toContain('s3cret');
    expect(Object.keys((JSON.parse(after) as { directories: object }).directories)).toEqual([root]);
  });

  it('trusts nothing when its file is damaged, and is rewritten whole by the next trust', async () => {
    await fs.writeFile(env.WAYSTATION_TRUST_FILE!, '{ not json');
    expect(await isTrusted(root, env)).toBe(false);
    await trustDirectory(root, env);
    expect(await isTrusted(root, env)).toBe(true);
  });
});
