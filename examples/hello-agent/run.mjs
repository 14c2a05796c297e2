#!/usr/bin/env node
// Runs hello-agent through the Waystation library, from this project:
//   node run.mjs [CHECKPOINT_DIR] [--mode manual|auto|confirm]
// The task is recorded with this project's path, so `npx waystation resume`
// and the app's Resume relaunch this very agent.
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { Runner } from 'waystation';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const modeAt = args.indexOf('--mode');
const mode = modeAt >= 0 ? args.splice(modeAt, 2)[1] : 'manual';
const root = path.resolve(args[0] ?? 'checkpoints');

const runner = new Runner({ root });
runner.onEvent((e) => {
  if (e.type === 'line') process.stdout.write(`  ${e.line}\n`);
});
const outcome = await runner.startRun({ agent: './agent.ts', cwd: here, mode });
process.stdout.write(`${outcome.task_id}: ${outcome.status ?? 'refused'}: ${outcome.message.replaceAll('<DIR>', root)}\n`);
if (outcome.next) process.stdout.write(`next: ${outcome.next.replaceAll('<DIR>', root)}\n`);
process.exitCode = outcome.exitCode;
