/**
 * bin/waystation.mjs chooses what to run: dist/ when its build stamp matches
 * the sources, the TypeScript sources through tsx otherwise. Tried in a small
 * package of its own, whose two entries say which of them ran.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { BUILD_STAMP_FILE, writeBuildStamp } from '../../electron/runtime/build-stamp.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let pkg: string;

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(pkg, rel)), { recursive: true });
  fs.writeFileSync(path.join(pkg, rel), text);
}

/** The package as a fresh build leaves it: both entries, the compiled stamp check, a stamp over the sources. */
function build(): void {
  fs.rmSync(path.join(pkg, 'dist'), { recursive: true, force: true });
  const checker = fs.readFileSync(path.join(repo, 'electron/runtime/build-stamp.ts'), 'utf8');
  const js = ts.transpileModule(checker, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  write('dist/electron/runtime/build-stamp.js', js.outputText);
  // The compiled CLI's entry is its loader, bundled as CommonJS (cli-loader.ts).
  write('dist/bundle/cli-loader.cjs', "console.log('compiled', process.argv.slice(2).join(' '));\n");
  // Mtimes a little in the past, as sources saved before the build started.
  const past = new Date(Date.now() - 60_000);
  for (const rel of ['electron/cli/main.ts', 'electron/cli/helper.ts']) fs.utimesSync(path.join(pkg, rel), past, past);
  writeBuildStamp(pkg, Date.now(), ['electron/cli/main.ts', 'electron/cli/helper.ts']);
}

function waystation(env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [path.join(pkg, 'bin', 'waystation.mjs'), 'ls', 'x'], {
    encoding: 'utf8',
    env: { ...process.env, WAYSTATION_FROM_SOURCE: '', ...env },
  });
  return { code: r.status, out: r.stdout.trim(), err: r.stderr };
}

beforeAll(() => {
  pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'waystation-launcher-'));
  write('package.json', JSON.stringify({ name: 'waystation', type: 'module' }));
  write('bin/waystation.mjs', fs.readFileSync(path.join(repo, 'bin', 'waystation.mjs'), 'utf8'));
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(pkg, 'node_modules'), 'dir');
  // TypeScript syntax, so only tsx can run it.
  write('electron/cli/main.ts', "const how: string = 'sources';\nconsole.log(how, process.argv.slice(2).join(' '));\n");
  write('electron/cli/helper.ts', 'export const helper = 1;\n');
});
afterAll(() => {
  fs.rmSync(pkg, { recursive: true, force: true });
});

describe('the library build', () => {
  it('compiles every entry a process or thread starts from, and the stamp check the launcher imports', () => {
    const config = JSON.parse(fs.readFileSync(path.join(repo, 'tsconfig.lib.json'), 'utf8')) as { files: string[] };
    // Started by path, not imported, so the compiler finds them only when listed.
    for (const entry of [
      'electron/cli/main.ts',
      'electron/runtime/worker-main.ts',
      'electron/store/file-check-worker.ts',
      'electron/runtime/build-stamp.ts',
    ])
      expect(config.files).toContain(entry);
  });
});

describe('bin/waystation.mjs', () => {
  it('runs the compiled CLI when the build matches the sources, passing the arguments on', () => {
    build();
    expect(waystation()).toEqual({ code: 0, out: 'compiled ls x', err: '' });
  });

  it('runs the sources when one of them changed after the build, and says nothing on a pipe', () => {
    build();
    const later = new Date(Date.now() + 5_000);
    fs.utimesSync(path.join(pkg, 'electron/cli/helper.ts'), later, later);
    expect(waystation()).toEqual({ code: 0, out: 'sources ls x', err: '' });
  });

  it('runs the sources when a source the build read is gone', () => {
    build();
    fs.renameSync(path.join(pkg, 'electron/cli/helper.ts'), path.join(pkg, 'electron/cli/helper-moved.ts'));
    try {
      expect(waystation().out).toBe('sources ls x');
    } finally {
      fs.renameSync(path.join(pkg, 'electron/cli/helper-moved.ts'), path.join(pkg, 'electron/cli/helper.ts'));
    }
  });

  it('runs the sources when the build left no stamp (it failed, or never finished)', () => {
    build();
    fs.rmSync(path.join(pkg, BUILD_STAMP_FILE));
    expect(waystation().out).toBe('sources ls x');
  });

  it('runs the sources of a checkout that was never built', () => {
    fs.rmSync(path.join(pkg, 'dist'), { recursive: true, force: true });
    expect(waystation()).toEqual({ code: 0, out: 'sources ls x', err: '' });
  });

  it('runs the sources when WAYSTATION_FROM_SOURCE is set, even over a fresh build', () => {
    build();
    expect(waystation({ WAYSTATION_FROM_SOURCE: '1' }).out).toBe('sources ls x');
  });
});
