#!/usr/bin/env node
// Runs one TypeScript entry point (benchmarks, the torture suite) through tsx.
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { register } from 'tsx/esm/api';

const entry = process.argv[2];
if (!entry) {
  console.error('usage: waystation-tsx FILE.ts [args...]');
  process.exit(2);
}
process.argv.splice(2, 1);
register();
await import(pathToFileURL(path.resolve(entry)).href);
