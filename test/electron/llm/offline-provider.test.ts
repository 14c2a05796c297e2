import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { OfflineProvider, offlineLatencyMs, offlineReply } from '../../../electron/llm/offline-provider.js';
import { redactSecrets, redactSecretsIn } from '../../../electron/llm/provider-from-env.js';
import { estimateCostUsd } from '../../../electron/llm/cost.js';

describe('the offline model', () => {
  it('answers the same messages with the same text, and different messages differently', async () => {
    const p = new OfflineProvider(0);
    const a = await p.complete([{ role: 'user', content: 'Summarise the file a.md:\n# Title\nFirst sentence here. Second.' }]);
    const b = await p.complete([{ role: 'user', content: 'Summarise the file a.md:\n# Title\nFirst sentence here. Second.' }]);
    const c = await p.complete([{ role: 'user', content: 'something else' }]);
    expect(a.text).toBe(b.text);
    expect(a.text).not.toBe(c.text);
    expect(a.text).toContain('Sections: Title.');
    expect(a.text).toContain('It opens with: First sentence here.');
    expect(a.tokens_in).toBeGreaterThan(0);
    expect(a.tokens_out).toBe(Math.ceil(a.text.length / 4));
  });

  it('reads its latency from WAYSTATION_OFFLINE_LATENCY_MS, falling back on bad values', () => {
    expect(offlineLatencyMs({ WAYSTATION_OFFLINE_LATENCY_MS: '7' })).toBe(7);
    expect(offlineLatencyMs({ WAYSTATION_OFFLINE_LATENCY_MS: 'fast' })).toBe(150);
    expect(offlineLatencyMs({})).toBe(150);
  });

  it('replies as a function of the whole conversation: equal conversations alike, different ones differently', () => {
    const message = fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: fc.string({ maxLength: 80 }) });
    const conversation = fc.array(message, { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(conversation, conversation, (a, b) => {
        // A copy built afresh, so no answer can come from object identity.
        expect(offlineReply(a.map((m) => ({ ...m })))).toBe(offlineReply(a));
        const same = JSON.stringify(a.map((m) => [m.role, m.content])) === JSON.stringify(b.map((m) => [m.role, m.content]));
        expect(offlineReply(a) === offlineReply(b)).toBe(same);
      }),
      { numRuns: 300 },
    );
  });
});

describe('secrets and costs', () => {
  it('scrubs the API key and bearer tokens from text', () => {
    const env = { OPENAI_API_KEY: 'sk-abcdef123456' };
    expect(redactSecrets('failed with sk-abcdef123456 and Bearer abcdefghijkl', env)).toBe('failed with [redacted] and Bearer [redacted]');
  });

  it('estimates cost from the price table, with an override', () => {
    expect(estimateCostUsd('gpt-4o-mini', 1_000_000, 1_000_000, {})).toBeCloseTo(0.75);
    expect(estimateCostUsd('gpt-4o-mini-2024-07-18', 1_000_000, 0, {})).toBeCloseTo(0.15);
    expect(estimateCostUsd('unknown', 1000, 1000, {})).toBe(0);
    expect(estimateCostUsd('unknown', 1_000_000, 0, { WAYSTATION_PRICE_PER_MTOK: '2,4' })).toBeCloseTo(2);
  });
});

describe('scrubbing structured data', () => {
  it('scrubs strings and keys at any depth, keeps other values, and survives shared and circular references', () => {
    const env = { OPENAI_API_KEY: 'sk-abcdef123456' };
    const shared = { token: 'sk-abcdef123456' };
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    const out = redactSecretsIn(
      {
        a: shared,
        b: shared,
        list: [1, true, null, 'Bearer abcdefghijkl'],
        'sk-abcdef123456': 'k',
        when: new Date('2026-01-01T00:00:00Z'),
        loop,
      },
      env,
    );
    expect(out).toEqual({
      a: { token: '[redacted]' },
      b: { token: '[redacted]' },
      list: [1, true, null, 'Bearer [redacted]'],
      '[redacted]': 'k',
      when: '2026-01-01T00:00:00.000Z',
      loop: { name: 'loop', self: '[circular]' },
    });
  });
});
