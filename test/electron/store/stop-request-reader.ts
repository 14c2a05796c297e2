/**
 * Reads the stop request of lease entry `n` of a task folder, in a process of
 * its own, and prints it as one JSON line: a read that blocked on a named pipe
 * inside a synchronous call could not be timed out from inside the test.
 */
import path from 'node:path';
import { readStopRequest } from '../../../electron/store/stop-request.js';

const [taskDir, n] = process.argv.slice(2);
process.stdout.write(`${JSON.stringify(readStopRequest(path.join(taskDir, 'lease'), Number(n)))}\n`);
