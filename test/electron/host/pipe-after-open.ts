/**
 * The host with a directory open, while a task's event log and the agents'
 * configuration are replaced by named pipes: it must go on answering. Run in
 * a process of its own by pipe-after-open.test.ts, which can time out a
 * reader stuck in a synchronous open where this process could not.
 *
 * Prints one JSON line: what the host answered after the change.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HostService } from '../../../electron/host/host-service.js';
import { readAgentsConfig } from '../../../electron/runtime/agent-catalog.js';

const root = process.argv[2];
const service = new HostService({ host: 'web', runner: null, watch: { quietMs: 10, maxDelayMs: 50 } });
await service.open(root);
await service.listTasks();
await service.settled();

const log = path.join(root, 't1', 'events.jsonl');
await fs.rm(log);
execFileSync('mkfifo', [log]);
// A change the watcher reports, so the host reads the task's last event id from its log.
await fs.appendFile(path.join(root, 't1', 'checkpoint.json'), ' ');
const config = path.join(root, 'waystation.config.json');
execFileSync('mkfifo', [config]);

const deadline = Date.now() + 5_000;
let changed = false;
const stop = service.subscribe((e) => {
  if (e.type === 'task-changed' && e.taskId === 't1') changed = true;
});
while (!changed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
stop();
await service.settled();
const listed = (await service.listTasks()).map((t) => t.task_id).sort();
const agents = await readAgentsConfig(root);
process.stdout.write(`${JSON.stringify({ changed, listed, configProblem: agents.problem })}\n`);
await service.close();
