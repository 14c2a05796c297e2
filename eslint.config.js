// Lint rules that hold the layers apart: shared/ runs anywhere, renderer/ only in the browser, and the folders of
// electron/ import only from their own floor and those below it (lint/layer-order.js states the order).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import { layerOrder } from './lint/layer-order.js';

const nodeModules = ['node:*', 'fs', 'path', 'os', 'child_process', 'http', 'crypto', 'electron', 'chokidar'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'dist-electron/**',
      'dist-renderer/**',
      'release/**',
      'examples/**/node_modules/**',
      'demo-checkpoints/**',
      '.waystation-tmp/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Plain Node entry points (the CLI launcher, config files) run outside TypeScript's view of globals.
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['electron/**/*.ts', 'electron/**/*.cts'],
    plugins: { local: { rules: { 'layer-order': layerOrder } } },
    rules: { 'local/layer-order': 'error' },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [...nodeModules, '**/electron/**', '**/renderer/**', 'react', 'zustand'] }],
    },
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': ['error', { patterns: [...nodeModules, '**/electron/**'] }],
    },
  },
);
