/**
 * A StoreFs that fails one chosen call (or every call from it on) with a
 * chosen error code: ENOSPC, EACCES, EIO on a write or on a read.
 */
import { nodeFs, type StoreFileHandle, type StoreFs } from '../../../electron/store/store-fs.js';

export type FaultCode = 'ENOSPC' | 'EACCES' | 'EIO';
export type FaultGroup = 'write' | 'read';

export interface FaultPlan {
  group: FaultGroup;
  /** Which call of the group fails, counting from 0. */
  nth: number;
  code: FaultCode;
  /** Keep failing every later call of the group (a full disk stays full) until `clear`. */
  persistent: boolean;
}

export class FaultyFs implements StoreFs {
  private calls = 0;
  private cleared = false;
  /** Calls that were made to fail. */
  injected = 0;
  /** The call that failed first, for reports. */
  firstFault: string | null = null;

  /** @param armed false: calls pass, uncounted, until `arm` (to set a task up through this file system first) */
  constructor(
    private readonly plan: FaultPlan,
    private armed = true,
  ) {}

  /** Count calls, and fail the chosen one, from now on. */
  arm(): void {
    this.armed = true;
  }

  /** The fault is gone: every later call succeeds. */
  clear(): void {
    this.cleared = true;
  }

  private check(group: FaultGroup, what: string): void {
    if (group !== this.plan.group || this.cleared || !this.armed) return;
    const n = this.calls++;
    if (n === this.plan.nth || (this.plan.persistent && n > this.plan.nth)) {
      this.injected++;
      this.firstFault ??= what;
      throw Object.assign(new Error(`${this.plan.code}: injected fault on ${what}`), { code: this.plan.code });
    }
  }

  async open(path: string, flags: string | number, mode?: number): Promise<StoreFileHandle> {
    const writes = typeof flags === 'string' && /[wax+]/.test(flags);
    this.check(writes ? 'write' : 'read', `open ${path}`);
    const h = await nodeFs.open(path, flags, mode);
    return {
      writeFile: async (data) => {
        this.check('write', `write ${path}`);
        return h.writeFile(data);
      },
      write: async (data, position) => {
        this.check('write', `write ${path}`);
        return h.write(data, position);
      },
      datasync: async () => {
        this.check('write', `fdatasync ${path}`);
        return h.datasync();
      },
      truncate: async (length) => {
        this.check('write', `truncate ${path}`);
        return h.truncate(length);
      },
      readFile: async () => {
        this.check('read', `read ${path}`);
        return h.readFile();
      },
      read: async (buffer, offset, length, position) => {
        this.check('read', `read ${path}`);
        return h.read(buffer, offset, length, position);
      },
      stat: () => h.stat(),
      sync: async () => {
        this.check('write', `fsync ${path}`);
        return h.sync();
      },
      close: () => h.close(),
    };
  }

  readWholeFile = async (p: string, o: { maxBytes: number; followLinks: boolean }) => (
    this.check('read', `read ${p}`),
    nodeFs.readWholeFile(p, o)
  );
  stat = async (p: string) => (this.check('read', `stat ${p}`), nodeFs.stat(p));
  exists = async (p: string) => (this.check('read', `stat ${p}`), nodeFs.exists(p));
  lstat = async (p: string) => (this.check('read', `lstat ${p}`), nodeFs.lstat(p));
  realpath = async (p: string) => (this.check('read', `realpath ${p}`), nodeFs.realpath(p));
  readdir = async (p: string) => (this.check('read', `readdir ${p}`), nodeFs.readdir(p));
  readdirNames = async (p: string) => (this.check('read', `readdir ${p}`), nodeFs.readdirNames(p));
  mkdir = async (p: string) => (this.check('write', `mkdir ${p}`), nodeFs.mkdir(p));
  rename = async (a: string, b: string) => (this.check('write', `rename ${a}`), nodeFs.rename(a, b));
  link = async (a: string, b: string) => (this.check('write', `link ${b}`), nodeFs.link(a, b));
  unlink = async (p: string) => (this.check('write', `unlink ${p}`), nodeFs.unlink(p));
  appendFile = async (p: string, d: string) => (this.check('write', `append ${p}`), nodeFs.appendFile(p, d));
}
