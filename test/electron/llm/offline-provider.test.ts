import { describe, expect, it } from 'vitest';
import { OfflineProvider, offlineLatencyMs, offlineReply } from '../../../electron/llm/offline-provider.js';
import { redactSecrets } from '../../../electron/llm/provider-from-env.js';
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

  it('is exported as a pure function for expected values', () => {
    expect(offlineReply([{ role: 'user', content: 'x' }])).toBe(offlineReply([{ role: 'user', content: 'x' }]));
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
