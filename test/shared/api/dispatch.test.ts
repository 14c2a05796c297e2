import { describe, expect, it } from 'vitest';
import type { WaystationService } from '../../../shared/api/contract.js';
import { ApiError, toApiError } from '../../../shared/api/api-error.js';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { asServiceError, dispatch, httpStatusOf, isApiMethod } from '../../../shared/api/dispatch.js';
import { outputChecksEnabled } from '../../../shared/api/api-outputs.js';

function service(impl: (method: string, input: unknown) => unknown): WaystationService {
  const s = Object.fromEntries(apiMethods.map((m) => [m, async (input: unknown) => impl(m, input)])) as unknown as WaystationService;
  s.subscribe = () => () => {};
  return s;
}

describe('dispatch', () => {
  it('calls the named method with the validated input and returns its result', async () => {
    const seen: unknown[] = [];
    const result = await dispatch(
      service((m, input) => (seen.push([m, input]), 'ok')),
      'getTask',
      { taskId: 't1', version: 2 },
      false,
    );
    expect(result).toBe('ok');
    expect(seen).toEqual([['getTask', { taskId: 't1', version: 2 }]]);
  });

  it('refuses an answer the contract does not allow, when outputs are checked, as the host failing', async () => {
    const wrong = service(() => ({ taskId: 't1', version: 'two', message: 'started' }));
    const err = (await dispatch(wrong, 'resumeTask', { taskId: 't1' }, true).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('failed');
    expect(err.message).toContain('the host answered resumeTask with a value the API contract does not allow');
    expect(err.issues.some((i) => i.startsWith('version:'))).toBe(true);
    // Unchecked (a packaged app), the answer passes as it is.
    expect(await dispatch(wrong, 'resumeTask', { taskId: 't1' }, false)).toMatchObject({ version: 'two' });
    // A fitting answer passes checked.
    const right = service(() => ({ taskId: 't1', version: null, message: 'resume of t1 is running in process 42' }));
    expect(await dispatch(right, 'resumeTask', { taskId: 't1' }, true)).toEqual({
      taskId: 't1',
      version: null,
      message: 'resume of t1 is running in process 42',
    });
  });

  it('checks outputs in tests by default', () => {
    expect(outputChecksEnabled()).toBe(true);
  });

  it('refuses unknown and inherited method names', async () => {
    const s = service(() => 'never');
    for (const name of ['nope', 'constructor', '__proto__', 'toString', 'subscribe']) {
      await expect(dispatch(s, name, {})).rejects.toMatchObject({ code: 'not-found' });
      expect(isApiMethod(name)).toBe(false);
    }
  });

  it('refuses invalid input with readable issues', async () => {
    const err = (await dispatch(
      service(() => 'never'),
      'diffVersions',
      { taskId: 't1', a: 0, b: 'x' },
    ).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('invalid-input');
    expect(err.issues.some((i) => i.startsWith('a:'))).toBe(true);
    expect(err.issues.some((i) => i.startsWith('b:'))).toBe(true);
  });

  it('maps service errors by their code', async () => {
    const failing = (code: string) => service(() => Promise.reject(Object.assign(new Error(`failed with ${code}`), { code })));
    const cases: Array<[string, string]> = [
      ['conflict', 'conflict'],
      ['busy', 'conflict'],
      ['read-only', 'read-only'],
      ['future-schema', 'read-only'],
      ['invalid', 'invalid-input'],
      ['unknown-step', 'not-found'],
      ['ENOENT', 'not-found'],
      ['EIO', 'failed'],
    ];
    for (const [code, expected] of cases) {
      const err = (await dispatch(failing(code), 'resumeTask', { taskId: 't1' }).catch((e: unknown) => e)) as ApiError;
      expect(err.code, code).toBe(expected);
      expect(err.message).toBe(`failed with ${code}`);
    }
  });

  it('turns store problems into issues', () => {
    const err = asServiceError(
      Object.assign(new Error('cannot read'), { code: 'read', problems: [{ file: 't1/checkpoint.json', message: 'truncated' }] }),
    );
    expect(err.code).toBe('failed');
    expect(err.issues).toEqual(['t1/checkpoint.json: truncated']);
  });

  it('gives each error code its HTTP status', () => {
    expect(httpStatusOf('invalid-input')).toBe(400);
    expect(httpStatusOf('forbidden')).toBe(403);
    expect(httpStatusOf('not-found')).toBe(404);
    expect(httpStatusOf('conflict')).toBe(409);
    expect(httpStatusOf('read-only')).toBe(409);
    expect(httpStatusOf('failed')).toBe(500);
  });
});

describe('toApiError', () => {
  it('rebuilds an ApiError from a bridged plain object, an HTTP error body, or anything else', () => {
    expect(toApiError({ name: 'ApiError', code: 'conflict', message: 'busy', issues: ['x'] })).toMatchObject({
      code: 'conflict',
      message: 'busy',
      issues: ['x'],
    });
    expect(toApiError({ error: { code: 'not-found', message: 'gone' } })).toMatchObject({ code: 'not-found', message: 'gone' });
    expect(toApiError(new Error('plain'))).toMatchObject({ code: 'failed', message: 'plain' });
    expect(toApiError({ code: 'weird', message: 'm' }).code).toBe('failed');
    expect(toApiError('text').message).toBe('text');
    const original = new ApiError('forbidden', 'no');
    expect(toApiError(original)).toBe(original);
  });
});
