/**
 * Entry of the file-check thread (see file-check-thread.ts): a store of its
 * own over the same directory, answering each question with its fileProblems,
 * checked on this thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { messageOf } from '../../shared/api/error-codes.js';
import { openStore } from './directory-store.js';
import type { FileCheckReply, FileCheckRequest, FileCheckThreadData } from './file-check-thread.js';

const port = parentPort;
if (!port) throw new Error('file-check-worker runs as a worker thread of a directory store');

const data = workerData as FileCheckThreadData;
// `fileCheckThread: false`: this store checks here, on this thread, and starts no thread of its own.
const store = openStore(data.root, { maxFileBytes: data.maxFileBytes, fileCheckThread: false });

port.on('message', (request: FileCheckRequest) => {
  store.fileProblems(request.entries).then(
    (problems) => port.postMessage({ id: request.id, problems } satisfies FileCheckReply),
    (err: unknown) => port.postMessage({ id: request.id, error: messageOf(err) } satisfies FileCheckReply),
  );
});
