/**
 * A fake OpenAI-compatible server on 127.0.0.1 for tests: the real `openai`
 * client talks to it over HTTP. Each request takes the next scripted
 * behaviour (a reply, a status, a dropped connection, a malformed body, a
 * delay); when the script is empty it replies normally.
 */
import http from 'node:http';
import { listenOnLoopback, readJsonBody } from './loopback-server.js';

export type FakeBehaviour =
  | { kind: 'ok'; delayMs?: number; content?: string; echoKey?: boolean }
  | { kind: 'status'; status: number; retryAfterMs?: number }
  | { kind: 'drop' }
  | { kind: 'malformed'; body?: string; contentType?: string }
  | { kind: 'hang' };

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: { model?: string; messages?: { role: string; content: string }[] } | null;
}

export interface FakeOpenAiServer {
  /** Base URL for OPENAI_BASE_URL (ends in /v1). */
  baseURL: string;
  requests: RecordedRequest[];
  /** Queue behaviours for the next requests, in order. */
  script(...behaviours: FakeBehaviour[]): void;
  close(): Promise<void>;
}

/** Start the fake server on an ephemeral port. */
export async function startFakeOpenAiServer(): Promise<FakeOpenAiServer> {
  const queue: FakeBehaviour[] = [];
  const requests: RecordedRequest[] = [];
  let served = 0;
  const server = http.createServer(async (req, res) => {
    const body = (await readJsonBody(req)) as RecordedRequest['body'];
    requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
    const b = queue.shift() ?? { kind: 'ok' };
    if (b.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (b.kind === 'hang') return;
    if (b.kind === 'status') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (b.retryAfterMs !== undefined) headers['retry-after-ms'] = String(b.retryAfterMs);
      res.writeHead(b.status, headers);
      res.end(JSON.stringify({ error: { message: `injected ${b.status}`, type: 'injected' } }));
      return;
    }
    if (b.kind === 'malformed') {
      res.writeHead(200, { 'content-type': b.contentType ?? 'application/json' });
      res.end(b.body ?? '{"id": "x", "choices": [');
      return;
    }
    if (b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs));
    served++;
    const last = body?.messages?.at(-1)?.content ?? '';
    // A server that echoes the API key it was sent: in the reply, as a JSON object key, and as the model's name.
    const key = b.echoKey ? (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '') : null;
    const content = key
      ? `your key is ${key}; as JSON: {"${key}": "${key}"}`
      : (b.content ?? `fake reply ${served} to: ${last.slice(0, 60)}`);
    const promptChars = (body?.messages ?? []).reduce((n, m) => n + m.content.length, 0);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${served}`,
        object: 'chat.completion',
        created: 0,
        model: key ?? body?.model ?? 'fake-model',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
        usage: { prompt_tokens: Math.ceil(promptChars / 4) + 7, completion_tokens: Math.ceil(content.length / 4), total_tokens: 0 },
      }),
    );
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...b) => queue.push(...b),
    close,
  };
}
