import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../shared/api/api-error.js';
import { asServiceError, httpStatusOf } from '../../../shared/api/dispatch.js';
import { apiCodeOf, apiErrorCodes, apiErrorStatus, messageOf, ServiceError, serviceErrorCodes } from '../../../shared/api/error-codes.js';
import { RefusedError } from '../../../electron/host/host-runner.js';
import { OperationError } from '../../../electron/runtime/task-operations.js';
import { AgentLoadError } from '../../../electron/runtime/agent-loader.js';

const repo = path.resolve(import.meta.dirname, '../../..');

/**
 * Error classes that never reach the API, and why. Any other class under
 * electron/ or shared/ that extends Error must extend ServiceError, whose
 * code the compiler holds to serviceErrorCodes.
 */
const INTERNAL: Record<string, string> = {
  WaitForHumanSignal: 'unwinds an agent once its wait is saved; the engine catches it',
  StopSignal: 'unwinds an agent at a safe boundary when a person asked it to stop; the engine catches it and saves the stop',
  StepFailedError: 'a step failure already saved; the engine catches it and reports the outcome',
  StepOutputError: 'a step result its schema rejects; the engine records it as the step failing',
  MalformedReplyError: 'a model reply that does not parse; the provider retries, then throws LlmCallError',
  UsageError: 'a mistyped command line; the CLI prints it, no service throws it',
  HttpFailure: 'the HTTP host carrying an ApiError and its status to its own reply',
  TooDeep: 'ends the measuring of a value nested past the write limit; checkValueDepth turns it into a WriteLimitError',
};

/** Every `class X extends Y` under electron/ and shared/, with the file it is declared in. */
function declaredClasses(): Array<{ name: string; base: string; file: string }> {
  const out: Array<{ name: string; base: string; file: string }> = [];
  const walk = (dir: string) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else if (/\.(c|m)?ts$/.test(d.name))
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/class\s+(\w+)\s+extends\s+([\w.]+)/g))
          out.push({ name: m[1], base: m[2], file: path.relative(repo, p) });
    }
  };
  walk(path.join(repo, 'electron'));
  walk(path.join(repo, 'shared'));
  return out;
}

describe('the API error codes', () => {
  it('gives every code an HTTP status of an error', () => {
    for (const code of apiErrorCodes) {
      expect(apiErrorStatus[code], code).toBeGreaterThanOrEqual(400);
      expect(httpStatusOf(code)).toBe(apiErrorStatus[code]);
    }
    expect(Object.keys(apiErrorStatus).sort()).toEqual([...apiErrorCodes].sort());
  });

  it('maps every service code to a code of the list', () => {
    for (const [code, api] of Object.entries(serviceErrorCodes)) expect(apiErrorCodes, code).toContain(api);
  });

  it('has a mapping for every error class a service can throw', () => {
    const classes = declaredClasses();
    const bases = new Map(classes.map((c) => [c.name, c.base]));
    const reachesError = (name: string): boolean => {
      for (let n: string | undefined = name, i = 0; n && i < 20; n = bases.get(n), i++) if (n === 'Error') return true;
      return false;
    };
    const viaServiceError = (name: string): boolean => {
      for (let n: string | undefined = name, i = 0; n && i < 20; n = bases.get(n), i++) if (n === 'ServiceError') return true;
      return false;
    };
    const errors = classes.filter((c) => reachesError(c.name));
    expect(errors.length).toBeGreaterThan(10);
    const unmapped = errors.filter((c) => !viaServiceError(c.name) && !INTERNAL[c.name] && c.name !== 'ServiceError');
    expect(unmapped.map((c) => `${c.name} (${c.file})`)).toEqual([]);
    // The list of internal errors names only classes that exist, so it cannot hide a renamed one.
    for (const name of Object.keys(INTERNAL)) expect(bases.has(name), name).toBe(true);
  });

  it('sends an agent that cannot be loaded as unavailable (422), not as a server failure', () => {
    for (const err of [
      new OperationError('agent-unavailable', 'cannot resume task t1: the module throws. The task was left untouched.'),
      new RefusedError('agent-unavailable', 'the module throws'),
      new AgentLoadError('module-throws', 'the module throws'),
    ]) {
      expect(err).toBeInstanceOf(ServiceError);
      const api = asServiceError(err);
      expect(api.code).toBe('unavailable');
      expect(httpStatusOf(api.code)).toBe(422);
      expect(api.message).toBe(err.message);
    }
  });

  it('keeps a refusal code a worker sent that the list does not know as a failure, with its message', () => {
    const err = new RefusedError('no-such-code', 'something the worker said');
    expect(err.code).toBe('internal');
    expect(asServiceError(err)).toMatchObject({ code: 'failed', message: 'something the worker said' });
  });

  it('maps codes as strings too, for what crosses a process as its code alone', () => {
    expect(apiCodeOf('busy')).toBe('conflict');
    expect(apiCodeOf('ENOENT')).toBe('not-found');
    expect(apiCodeOf('toString')).toBe('failed');
    expect(apiCodeOf(undefined)).toBe('failed');
    expect(new ApiError('forbidden', 'no')).toBeInstanceOf(ServiceError);
  });
});

describe('messageOf', () => {
  it("is an error's message, or the value as text", () => {
    expect(messageOf(new Error('disk full'))).toBe('disk full');
    expect(messageOf('plain')).toBe('plain');
    expect(messageOf(42)).toBe('42');
  });
});
