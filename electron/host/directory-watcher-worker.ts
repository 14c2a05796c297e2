/**
 * Entry of the watcher thread (see directory-watcher-thread.ts): the folder
 * watches and the batching of `watchDirectory`, posting each batch to the host.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { watchDirectory } from './directory-watcher.js';
import type { WatcherThreadCommand, WatcherThreadData, WatcherThreadMessage } from './directory-watcher-thread.js';

const port = parentPort;
if (!port) throw new Error('directory-watcher-worker runs as a worker thread of the host');

const data = workerData as WatcherThreadData;
const post = (message: WatcherThreadMessage) => port.postMessage(message);

const watcher = watchDirectory(data.root, (changes) => post({ type: 'changes', changes }), {
  quietMs: data.quietMs,
  maxDelayMs: data.maxDelayMs,
  onError: (err) => post({ type: 'error', message: err.message }),
});
void watcher.ready.then(() => post({ type: 'ready' }));

port.on('message', (command: WatcherThreadCommand) => {
  if (command.type === 'watch-again') watcher.watchAgain(command.locations);
  else if (command.type === 'close') {
    void watcher.close().then(() => {
      post({ type: 'closed' });
      // The watches are closed; with the port closed too the thread ends.
      port.close();
    });
  }
});
