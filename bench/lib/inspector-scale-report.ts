/**
 * The inspector-at-scale figures as the Markdown table docs/BENCHMARKS.md
 * quotes: each figure, its target, and its ratio to the baseline measured in
 * the same run.
 */
import { formatBytes, formatCount, formatMs, formatRatio } from './format.js';
import type { InspectorScaleResult } from './inspector-scale.js';
import { summarize } from './percentile.js';
import { formatTable } from './table.js';

/** A Markdown table of the figures, one row each. */
export function formatInspectorScale(r: InspectorScaleResult): string {
  const l = r.listing;
  const d = r.diff;
  const e = r.events;
  const m = r.memory;
  const met = (value: number, target: number) => (value < target ? `< ${formatMs(target)}: met` : `< ${formatMs(target)}: missed`);
  const rows: string[][] = [
    [
      `host start until the list is available over the API (${formatCount(l.tasks)} tasks, ${formatBytes(l.responseBytes)})`,
      formatMs(l.hostStartToListMs),
      met(l.hostStartToListMs, 1000),
      `${formatRatio(l.hostStartToListMs / l.rawHotReadMs)} of raw checkpoint.json read (${formatMs(l.rawHotReadMs)})`,
    ],
    [
      `listTasks, first after open (${formatCount(l.tasks)} tasks), sent as soon as the host serves`,
      formatMs(l.apiFirstMs),
      '',
      `${formatRatio(l.apiFirstMs / l.rawHotReadMs)} of raw read`,
    ],
    [
      'listTasks, warm (p50)',
      formatMs(l.apiWarm.p50),
      met(l.apiWarm.p50, 1000),
      `${formatRatio(l.apiWarm.p50 / l.rawHotReadMs)} of raw read; naive all-versions reader ${formatMs(l.naiveAllVersionsMs)}`,
    ],
    [
      `GET /api/tasks (as \`ls --json\`, plans included: ${formatBytes(l.restBytes)}), warm (p50)`,
      formatMs(l.restWarm.p50),
      '',
      `${formatRatio(l.restWarm.p50 / l.rawHotReadMs)} of raw read`,
    ],
    [
      `\`waystation ls\` of ${formatCount(l.tasks)} tasks, process start to exit (median of ${l.cliLs.count})`,
      formatMs(l.cliLs.p50),
      l.cliLs.p50 <= 2 * l.rawHotReadMs ? '<= 2x raw read: met' : '<= 2x raw read: missed',
      `${formatRatio(l.cliLs.p50 / l.rawHotReadMs)} of raw read; \`ls --json\` ${formatMs(l.cliLsJson.p50)} (${formatRatio(l.cliLsJson.p50 / l.rawHotReadMs)})`,
    ],
    [
      'host process spawn until listening (the directory opens meanwhile; requests wait for it)',
      formatMs(l.spawnToListenMs),
      '',
      `spawn until the list is available: ${formatMs(l.spawnToListMs)}`,
    ],
  ];
  if (r.coldHostRows) {
    const c = r.coldHostRows;
    rows.push([
      "first task rows in Chromium, cold host, the browser's first load of the page (host start to first row)",
      formatMs(c.hostStartToRowMs),
      met(c.hostStartToRowMs, 1000),
      `navigation start to first row ${formatMs(c.navigationToRowMs)}; process spawn to first row ${formatMs(c.spawnToRowMs)}`,
    ]);
    if (c.laterHostStartToRowMs.length > 0) {
      const later = summarize(c.laterHostStartToRowMs);
      rows.push([
        `first task rows in Chromium, cold host, started again (median of ${later.count})`,
        formatMs(later.p50),
        met(later.p50, 1000),
        `each: ${c.laterHostStartToRowMs.map((ms) => formatMs(ms)).join(', ')}`,
      ]);
    }
  }
  if (r.firstRows) {
    rows.push([
      'first task rows in Chromium, list already built, first page load (navigation start to first row)',
      formatMs(r.firstRows.coldMs),
      met(r.firstRows.coldMs, 1000),
      `${formatRatio(r.firstRows.coldMs / l.rawHotReadMs)} of raw read`,
    ]);
    rows.push([
      'first task rows in Chromium, list already built, later loads (median of 3)',
      formatMs(r.firstRows.warmMs),
      met(r.firstRows.warmMs, 1000),
      `${formatRatio(r.firstRows.warmMs / l.rawHotReadMs)} of raw read`,
    ]);
  }
  rows.push(
    [
      `diff of two ${formatBytes(d.bytesA)} versions, structuredDiff + summarizeChange (p50)`,
      formatMs(d.inProcess.p50),
      met(d.inProcess.p50, 200),
      `${formatRatio(d.inProcess.p50 / d.microdiff.p50)} of microdiff (${formatMs(d.microdiff.p50)}); JSON.stringify of both ${formatMs(d.stringifyBoth.p50)}`,
    ],
    [
      `diffVersions over HTTP, first call (${formatCount(d.entries)} entries; both versions rebuilt from their files)`,
      formatMs(d.apiFirstMs),
      met(d.apiFirstMs, 200),
      `${formatRatio(d.apiFirstMs / d.microdiff.p50)} of microdiff`,
    ],
    [
      'diffVersions over HTTP, the same diff again (p50; rebuilt versions kept)',
      formatMs(d.api.p50),
      met(d.api.p50, 200),
      `${formatRatio(d.api.p50 / d.microdiff.p50)} of microdiff`,
    ],
    [
      `external write to SSE event, p50 (${e.writes} writes${e.missed ? `, ${e.missed} missed` : ''})`,
      formatMs(e.host.p50),
      '',
      `${formatRatio(e.host.p50 / e.rawWatch.p50)} of raw fs.watch (${formatMs(e.rawWatch.p50)})`,
    ],
    [
      'external write to SSE event, p95',
      formatMs(e.hostP95),
      met(e.hostP95, 250),
      `raw fs.watch p95 ${formatMs(e.rawWatchP95)}; the write itself p50 ${formatMs(e.write.p50)}`,
    ],
    [
      'host process peak RSS, directory open, listed, watched and served to Chromium',
      formatBytes(m.host.maxRss),
      m.host.maxRss <= 1.5 * m.baseline.maxRss ? '<= 1.5x: met' : '<= 1.5x: missed',
      `${formatRatio(m.host.maxRss / m.baseline.maxRss)} of the peak of a process holding every parsed checkpoint (${formatBytes(m.baseline.maxRss)})`,
    ],
    [
      'host process RSS, directory open and listed (after GC)',
      formatBytes(m.host.rss),
      'report',
      `${formatRatio(m.host.rss / m.baseline.rss)} of that process's (${formatBytes(m.baseline.rss)})`,
    ],
    [
      'host process heap used (after GC)',
      formatBytes(m.host.heapUsed),
      'report',
      `${formatRatio(m.host.heapUsed / m.baseline.heapUsed)} of that process's heap (${formatBytes(m.baseline.heapUsed)})`,
    ],
  );
  const table = formatTable(
    [{ header: 'figure' }, { header: 'measured', align: 'right' }, { header: 'target' }, { header: 'baseline, same run' }],
    rows,
  );
  const hosts =
    r.hostFrom === 'dist'
      ? 'Hosts ran the compiled dist/, as `waystation serve` does.'
      : 'Hosts ran the TypeScript sources through tsx (dist/ was missing or stale): slower to start and larger than `waystation serve`.';
  return `${table}\n${hosts}\n`;
}
