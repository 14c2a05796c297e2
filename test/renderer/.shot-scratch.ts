import { chromium } from 'playwright-core';
import fs from 'node:fs/promises';
import path from 'node:path';
import { FakeApi, makeCheckpoint } from './fake-api.js';
import { Checkpoint } from '../../shared/checkpoint/schema.js';

const fake = new FakeApi();
for (let i = 0; i < 300; i++) {
  const st = ['done', 'failed', 'waiting_approval', 'halted', 'running'][i % 5] as 'done';
  fake.add(makeCheckpoint(`task-${String(i).padStart(4, '0')}`, { status: st, task_name: `Summarize folder ${i}`, run: { created_at: '2026-01-01T00:00:00Z', updated_at: new Date(Date.now() - i * 60000).toISOString(), llm_calls: [] } }));
}
const main = makeCheckpoint('demo-failed', {
  artifacts: [{ type: 'file', path: 'out/a.summary.md', sha256: 'a'.repeat(64), size: 1200, step_id: 'read' }],
  side_effects: [{ id: 'e1', type: 'http_post', status: 'uncertain', idempotency_key: 'demo-failed-publish-1', request: { url: 'http://x/publish', body: { a: 1 } }, reconciliation: null }],
  errors: [{ at: '2026-01-01T00:01:00Z', step_id: 'summarize', what: 'model returned invalid JSON', fix: null }],
  run: { created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:01:00Z', model: 'offline', tokens_in: 1200, tokens_out: 400, elapsed_ms: 5000,
    llm_calls: [{ step_id: 'read', model: 'offline', tokens_in: 800, tokens_out: 300, latency_ms: 1200 }, { step_id: 'summarize', model: 'offline', tokens_in: 400, tokens_out: 100, latency_ms: 2400 }] },
  recovery: { mode: 'confirm', pending_approval: { id: 'ap1', requested_at: '2026-01-01T00:02:00Z', plan: { rerun_step: 'summarize', probe_effects: ['e1'], retry_effects: [], drift: ['out/a.summary.md modified'] } }, decisions: [] },
  status: 'waiting_approval',
});
fake.add(Checkpoint.parse({ ...main, version: 1, status: 'running', phase: 'reading', plan: main.plan.map((s) => ({ ...s, status: 'pending', error: null })) }));
fake.add(Checkpoint.parse({ ...main, version: 2 }));

const dist = path.resolve('dist-renderer');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
for (const scheme of ['light', 'dark'] as const) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 }, colorScheme: scheme });
  page.on('console', (m) => m.type() === 'error' && console.log('console:', m.text()));
  page.on('pageerror', (e) => console.log('pageerror:', e));
  await page.route('http://ws.test/**', async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname.startsWith('/api/rpc/')) {
      const method = url.pathname.slice('/api/rpc/'.length) as 'listTasks';
      try {
        const out = await (fake.api[method] as (i: unknown) => Promise<unknown>)(JSON.parse(route.request().postData() || '{}'));
        return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(out) });
      } catch (e) {
        return route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify({ error: { code: 'failed', message: String(e) } }) });
      }
    }
    if (url.pathname.startsWith('/api/events')) return route.fulfill({ status: 200, contentType: 'text/event-stream', body: 'retry: 60000\n\n' });
    const file = path.join(dist, url.pathname === '/' ? 'index.html' : url.pathname);
    const body = await fs.readFile(file);
    const type = file.endsWith('.js') ? 'text/javascript' : file.endsWith('.css') ? 'text/css' : 'text/html';
    return route.fulfill({ status: 200, contentType: type, body });
  });
  await page.goto('http://ws.test/?token=abc');
  await page.getByRole('listbox', { name: 'Task list' }).getByRole('option').first().waitFor();
  await page.screenshot({ path: `/tmp/shots/list-${scheme}.png` });
  await page.getByRole('searchbox', { name: 'Search tasks' }).fill('demo-failed');
  await page.getByRole('listbox', { name: 'Task list' }).getByRole('option').first().click();
  await page.getByRole('heading', { level: 1 }).waitFor();
  await page.screenshot({ path: `/tmp/shots/task-${scheme}.png` });
  await page.getByRole('tab', { name: /Plan/ }).click(); await page.getByRole('button', { name: 'Edit result' }).click();
  await page.getByRole('textbox', { name: /New result/ }).waitFor();
  await page.screenshot({ path: `/tmp/shots/editor-${scheme}.png` });
  await page.getByRole('tab', { name: /Run/ }).click();
  await page.screenshot({ path: `/tmp/shots/run-${scheme}.png` });
  await page.getByRole('tab', { name: /History/ }).click();
  await page.getByRole('radio', { name: 'Diff from version 1' }).check();
  await page.getByRole('radio', { name: 'Diff to version 2' }).check();
  await page.getByRole('table', { name: /Changes from version 1/ }).waitFor();
  await page.screenshot({ path: `/tmp/shots/diff-${scheme}.png`, fullPage: true });
  await page.getByRole('tab', { name: /Side effects/ }).click();
  await page.screenshot({ path: `/tmp/shots/effects-${scheme}.png` });
  await page.close();
}
await browser.close();
