/**
 * The example agent project works against the package as another project
 * sees it: the library is compiled (tsc -p tsconfig.lib.json) into a staged
 * copy of the package, the example is copied next to it with
 * node_modules/waystation linked to that copy (what `npm install` of
 * `file:../..` does), and the example's own test runs there: it starts the
 * agent through the library entry, kills it mid-run and resumes it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledBuildState } from '../../electron/runtime/build-stamp.js';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let stage: string;
let pkg: string;
let example: string;

beforeAll(async () => {
  stage = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-example-'));
  pkg = path.join(stage, 'waystation');
  example = path.join(stage, 'hello-agent');
  await fs.mkdir(pkg);
  // The compiled library, as `npm install` builds it (prepare): the repository's own dist/ while its stamp says it
  // matches the sources, else compiled afresh for this test.
  if (compiledBuildState(repo).state === 'fresh') {
    await fs.cp(path.join(repo, 'dist'), path.join(pkg, 'dist'), { recursive: true });
  } else {
    await run(
      process.execPath,
      [path.join(repo, 'node_modules/typescript/bin/tsc'), '-p', path.join(repo, 'tsconfig.lib.json'), '--outDir', path.join(pkg, 'dist')],
      { cwd: repo },
    );
  }
  await fs.copyFile(path.join(repo, 'package.json'), path.join(pkg, 'package.json'));
  // The package's own dependencies (zod, tsx, ...), as an installed package would have them.
  await fs.symlink(path.join(repo, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
  await fs.cp(path.join(repo, 'examples/hello-agent'), example, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|checkpoints|greetings)$/.test(src),
  });
  await fs.mkdir(path.join(example, 'node_modules'));
  await fs.symlink(pkg, path.join(example, 'node_modules/waystation'), 'dir');
}, 120_000);

afterAll(async () => {
  if (stage) await fs.rm(stage, { recursive: true, force: true });
});

describe('examples/hello-agent', () => {
  it('imports the runtime from the package entry, with nothing of the desktop app', async () => {
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "const w = await import('waystation'); console.log(JSON.stringify(Object.keys(w).sort()))"],
      { cwd: example },
    );
    const names = JSON.parse(stdout) as string[];
    for (const name of ['defineAgent', 'z', 'Runner', 'startTask', 'resumeTask', 'openStore', 'listAvailableAgents'])
      expect(names).toContain(name);
    // The compiled CLI, the web host it serves with and the sources it reads (LangGraph's checkpointers) ship for the
    // `waystation` command; the desktop app (electron/main) does not.
    const files = await fs.readdir(path.join(pkg, 'dist/electron'));
    expect(files.sort()).toEqual(['agents', 'cli', 'host', 'llm', 'runtime', 'sources', 'store', 'verify']);
    expect(files).not.toContain('main');
    await expect(fs.access(path.join(pkg, 'dist/electron/runtime/index.d.ts'))).resolves.toBeUndefined();
  });

  it('passes its own test: run, kill mid-run, resume', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, OPENAI_API_KEY: '' };
    // Vitest's own variables would make node:test think it runs inside vitest.
    delete env.VITEST;
    delete env.NODE_OPTIONS;
    const { stdout } = await run(process.execPath, ['--test', 'test/'], { cwd: example, env, timeout: 90_000 });
    expect(stdout).toMatch(/# pass 1/);
    expect(stdout).toMatch(/# fail 0/);
  }, 120_000);
});
