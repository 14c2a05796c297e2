import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAiProvider } from '../../../electron/llm/openai-provider.js';
import { LlmCallError } from '../../../electron/llm/provider.js';
import { providerFromEnv } from '../../../electron/llm/provider-from-env.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../fakes/fake-openai-server.js';

const KEY = 'sk-test-secret-key-0123456789';

describe('the OpenAI-compatible provider against a fake server', () => {
  let server: FakeOpenAiServer;
  const provider = () =>
    new OpenAiProvider({
      apiKey: KEY,
      baseURL: server.baseURL,
      model: 'fake-model',
      timeoutMs: 400,
      maxRetries: 3,
      backoffMs: 5,
      maxBackoffMs: 50,
    });

  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('returns the reply text and takes tokens from the usage block', async () => {
    server.script({ kind: 'ok', content: 'hello there' });
    const c = await provider().complete([{ role: 'user', content: 'say hello' }]);
    expect(c.text).toBe('hello there');
    expect(c.model).toBe('fake-model');
    expect(c.tokens_in).toBe(Math.ceil('say hello'.length / 4) + 7);
    expect(c.tokens_out).toBe(Math.ceil('hello there'.length / 4));
    expect(c.retries).toBe(0);
    expect(server.requests.at(-1)?.authorization).toBe(`Bearer ${KEY}`);
  });

  it('retries 429, 500, a dropped connection and a malformed reply, recording each reason', async () => {
    server.script(
      { kind: 'status', status: 429, retryAfterMs: 10 },
      { kind: 'status', status: 500 },
      { kind: 'drop' },
      { kind: 'ok', content: 'finally' },
    );
    const c = await provider().complete([{ role: 'user', content: 'x' }]);
    expect(c.text).toBe('finally');
    expect(c.retries).toBe(3);
    expect(c.retry_reasons.map((r) => r.split(' (')[0])).toEqual(['429 rate limited', '500 server error', 'connection error']);
  });

  it('treats a 200 with a broken body as a failed attempt', async () => {
    server.script({ kind: 'malformed' }, { kind: 'malformed', body: '{"id":"x"}' }, { kind: 'ok', content: 'good' });
    const c = await provider().complete([{ role: 'user', content: 'x' }]);
    expect(c.text).toBe('good');
    expect(c.retry_reasons.map((r) => r.split(' (')[0])).toEqual(['malformed reply', 'malformed reply']);
  });

  it('times out a hanging request and retries it', async () => {
    server.script({ kind: 'hang' }, { kind: 'ok', content: 'after timeout' });
    const c = await provider().complete([{ role: 'user', content: 'x' }]);
    expect(c.text).toBe('after timeout');
    expect(c.retry_reasons[0]).toMatch(/^timeout/);
  });

  it('gives up after the maximum retries with an error that carries them, and never the key', async () => {
    server.script(...Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 503 })));
    const err = await provider()
      .complete([{ role: 'user', content: 'x' }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmCallError);
    const e = err as LlmCallError;
    expect(e.retries).toBe(3);
    expect(e.retry_reasons).toHaveLength(3);
    expect(e.message).toContain('gave up after 4 attempts');
    expect(e.message).not.toContain(KEY);
  });

  it('does not retry a request the server refuses (400)', async () => {
    server.script({ kind: 'status', status: 400 });
    const before = server.requests.length;
    const err = (await provider()
      .complete([{ role: 'user', content: 'x' }])
      .catch((e: unknown) => e)) as LlmCallError;
    expect(err.retries).toBe(0);
    expect(server.requests.length - before).toBe(1);
  });

  it('is chosen from the environment when a key is set, and the offline model otherwise', async () => {
    const online = await providerFromEnv({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL, OPENAI_MODEL: 'm-1' });
    expect(online.kind).toBe('openai-compatible');
    expect(online.model).toBe('m-1');
    const offline = await providerFromEnv({});
    expect(offline.kind).toBe('offline');
  });
});
