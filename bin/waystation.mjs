#!/usr/bin/env node
// The `waystation` command: runs the TypeScript CLI directly through tsx, so a
// fresh `npm ci` needs no build step before `npx waystation --help` works.
import { register } from 'tsx/esm/api';

register();
await import('../electron/cli/main.ts');
