/**
 * End-to-end: the app's Open database… dialog, in Chromium against the real
 * loopback host of the desktop app (its API over HTTP), opens a PostgreSQL
 * database of the throwaway cluster by its URL and shows its tasks. The
 * password typed inside the URL moves to a password field, is never shown
 * back on the page, and is not kept in the recent folders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { HostService } from '../../electron/host/host-service.js';
import { startHttpHost, type HttpHost } from '../../electron/host/http-host.js';
import type { RecentFolders } from '../../electron/host/host-ports.js';
import { openPostgresStore } from '../../electron/store/postgres/postgres-store.js';
import { createDatabase, TEST_PASSWORD } from '../support/postgres-cluster.js';
import { REPO } from '../support/node-bundle.js';
import { makeCheckpoint } from '../electron/store/store-test-helpers.js';
import { CHROMIUM, ensureRendererBuilt, hasChromium, rowId } from './e2e-harness.js';

describe.skipIf(!hasChromium)('Open database… in the app, end to end', () => {
  let browser: Browser;
  let http: HttpHost;
  let service: HostService;
  const remembered: string[] = [];
  const recent: RecentFolders = {
    list: () => [...remembered],
    readOnly: () => [],
    remember: async (root) => void remembered.unshift(root),
  };

  beforeAll(async () => {
    await ensureRendererBuilt();
    service = new HostService({ host: 'desktop', runner: null, recent });
    http = await startHttpHost({ service, staticDir: path.join(REPO, 'dist-renderer') });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await http?.close();
    await service?.close();
  });

  it('opens a database by its URL, lists its tasks, and never shows or keeps the password', async () => {
    const url = await createDatabase('e2e');
    const writer = openPostgresStore(url);
    await writer.create(makeCheckpoint('db-task-one'));
    await writer.create(makeCheckpoint('db-task-two'));
    await writer.close();

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(http.url);
    await page.getByRole('button', { name: 'Open database…' }).first().click();
    const dialog = page.locator('dialog[open]');
    await dialog.getByRole('heading', { name: 'Open database' }).waitFor();

    // A bad URL is refused in words, before anything is asked of the host.
    await dialog.getByLabel('Database URL').fill('db.example.com/agents');
    expect(await dialog.getByText('A database URL starts with postgres:// or postgresql://.').count()).toBe(1);
    expect(await dialog.getByRole('button', { name: 'Open', exact: true }).isDisabled()).toBe(true);

    // The password pasted inside the URL moves to its own field, where it is not shown.
    await dialog.getByLabel('Database URL').fill(url);
    expect(await dialog.getByLabel('Database URL').inputValue()).not.toContain(TEST_PASSWORD);
    expect(await dialog.getByLabel('Password').getAttribute('type')).toBe('password');
    expect(await dialog.getByLabel('Password').inputValue()).toBe(TEST_PASSWORD);
    await dialog.getByRole('button', { name: 'Open', exact: true }).click();

    await page.locator(`#${rowId('db-task-one')}`).waitFor({ timeout: 30_000 });
    await page.locator(`#${rowId('db-task-two')}`).waitFor();
    // The dialog closes once the host answers the open; the list may come first, by its own event, under load.
    await expect.poll(() => page.locator('dialog[open]').count(), { timeout: 10_000 }).toBe(0);
    const shown = url.replace(`:${TEST_PASSWORD}`, '');
    expect(await page.getByTestId('directory').textContent()).toBe(shown);
    expect(await page.content()).not.toContain(TEST_PASSWORD);
    // Databases are never remembered with the folders: their settings file would hold the password.
    expect(remembered).toEqual([]);
    expect((await service.getDirectory()).recent).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
