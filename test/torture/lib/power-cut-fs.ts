/**
 * A StoreFs that models what a power cut may keep.
 *
 * It passes every call to the real file system and mirrors the writes in a
 * model of POSIX durability: a file's bytes are durable once its handle was
 * fsynced; a folder's entries (names created, renamed, linked, removed) are
 * durable once the folder itself was fsynced. At a chosen call the power goes
 * out: that call and every later write fail, and `materialize` builds a copy
 * of the folder as a disk might hold it after restart, each un-fsynced entry
 * kept or undone at random and each un-fsynced file kept, emptied or cut short
 * at random. Nothing outside the model is assumed to be ordered.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { nodeFs, type StoreFileHandle, type StoreFs } from '../../../electron/store/store-fs.js';

interface FileNode {
  kind: 'file';
  data: Buffer;
  /** The bytes as of the last fsync of a handle on this file; null if never fsynced. */
  synced: Buffer | null;
}

interface DirNode {
  kind: 'dir';
  live: Map<string, Node>;
  /** The entries as of the last fsync of this folder. */
  durable: Map<string, Node>;
}

type Node = FileNode | DirNode;

/** Thrown by every write after the cut. */
export class PowerCutError extends Error {
  readonly code = 'EIO';
  constructor() {
    super('EIO: the power was cut');
  }
}

export class PowerCutFs implements StoreFs {
  private readonly rootNode: DirNode = { kind: 'dir', live: new Map(), durable: new Map() };
  private ops = 0;
  private cut = false;
  /** Entries whose durability was decided at random when materialized, for the report. */
  undone = 0;

  /**
   * @param root an existing, empty folder, durable itself
   * @param cutAt the number of writes allowed before the power goes out (Infinity: never)
   */
  constructor(
    readonly root: string,
    private cutAt: number,
  ) {}

  /** Writes made so far (what `cutAt` counts). */
  get writes(): number {
    return this.ops;
  }

  get powerCut(): boolean {
    return this.cut;
  }

  /** Cut the power now, whatever `cutAt` said. */
  cutNow(): void {
    this.cut = true;
  }

  private gate(): void {
    if (this.cut) throw new PowerCutError();
    if (this.ops >= this.cutAt) {
      this.cut = true;
      throw new PowerCutError();
    }
    this.ops++;
  }

  /** The folder node and entry name of an absolute path inside the root, or null outside it. */
  private parentOf(abs: string): { dir: DirNode; name: string } | null {
    const rel = path.relative(this.root, abs);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return null;
    const parts = rel.split(path.sep);
    let dir = this.rootNode;
    for (const part of parts.slice(0, -1)) {
      const next = dir.live.get(part);
      if (!next || next.kind !== 'dir') return null;
      dir = next;
    }
    return { dir, name: parts[parts.length - 1] };
  }

  private nodeAt(abs: string): Node | null {
    if (path.resolve(abs) === path.resolve(this.root)) return this.rootNode;
    const p = this.parentOf(abs);
    return p ? (p.dir.live.get(p.name) ?? null) : null;
  }

  async open(file: string, flags: string | number, mode?: number): Promise<StoreFileHandle> {
    const creates = typeof flags === 'string' && /[wax]/.test(flags);
    if (creates) this.gate();
    const handle = await nodeFs.open(file, flags, mode);
    let node = this.nodeAt(file);
    if (creates) {
      const p = this.parentOf(file);
      const fresh: FileNode = { kind: 'file', data: Buffer.alloc(0), synced: null };
      if (p) p.dir.live.set(p.name, fresh);
      node = fresh;
    }
    const gate = () => this.gate();
    return {
      async writeFile(data) {
        gate();
        await handle.writeFile(data);
        if (node?.kind === 'file') node.data = Buffer.from(typeof data === 'string' ? Buffer.from(data) : data);
      },
      async write(data, position) {
        gate();
        await handle.write(data, position);
        if (node?.kind === 'file') {
          const start = Math.min(position, node.data.length);
          const grown = Buffer.alloc(Math.max(node.data.length, position + data.length));
          node.data.copy(grown, 0, 0, start);
          Buffer.from(data).copy(grown, position);
          if (position + data.length < node.data.length) node.data.copy(grown, position + data.length, position + data.length);
          node.data = grown;
        }
      },
      async truncate(length) {
        gate();
        await handle.truncate(length);
        if (node?.kind === 'file') node.data = Buffer.from(node.data.subarray(0, length));
      },
      readFile: () => handle.readFile(),
      read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
      stat: () => handle.stat(),
      async sync() {
        gate();
        await handle.sync();
        if (node?.kind === 'file') node.synced = Buffer.from(node.data);
        else if (node?.kind === 'dir') node.durable = new Map(node.live);
      },
      // A file's bytes and size are what a power cut may take; its other metadata is not modelled.
      async datasync() {
        gate();
        await handle.datasync();
        if (node?.kind === 'file') node.synced = Buffer.from(node.data);
      },
      close: () => handle.close(),
    };
  }

  readWholeFile = nodeFs.readWholeFile;
  stat = nodeFs.stat;
  exists = nodeFs.exists;
  lstat = nodeFs.lstat;
  realpath = nodeFs.realpath;
  readdir = nodeFs.readdir;
  readdirNames = nodeFs.readdirNames;

  async mkdir(dir: string): Promise<void> {
    this.gate();
    await nodeFs.mkdir(dir);
    const rel = path.relative(this.root, dir);
    if (rel === '' || rel.startsWith('..')) return;
    let cur = this.rootNode;
    for (const part of rel.split(path.sep)) {
      let next = cur.live.get(part);
      if (!next) {
        next = { kind: 'dir', live: new Map(), durable: new Map() };
        cur.live.set(part, next);
      }
      if (next.kind !== 'dir') return;
      cur = next;
    }
  }

  async rename(from: string, to: string): Promise<void> {
    this.gate();
    await nodeFs.rename(from, to);
    const a = this.parentOf(from);
    const b = this.parentOf(to);
    const node = a?.dir.live.get(a.name);
    if (a) a.dir.live.delete(a.name);
    if (b && node) b.dir.live.set(b.name, node);
  }

  async link(existing: string, created: string): Promise<void> {
    this.gate();
    await nodeFs.link(existing, created);
    const node = this.nodeAt(existing);
    const b = this.parentOf(created);
    if (b && node) b.dir.live.set(b.name, node);
  }

  async unlink(file: string): Promise<void> {
    this.gate();
    await nodeFs.unlink(file);
    const p = this.parentOf(file);
    if (p) p.dir.live.delete(p.name);
  }

  async appendFile(file: string, data: string): Promise<void> {
    this.gate();
    await nodeFs.appendFile(file, data);
    const p = this.parentOf(file);
    if (!p) return;
    let node = p.dir.live.get(p.name);
    if (!node) {
      node = { kind: 'file', data: Buffer.alloc(0), synced: null };
      p.dir.live.set(p.name, node);
    }
    if (node.kind === 'file') node.data = Buffer.concat([node.data, Buffer.from(data)]);
  }

  /**
   * Write into `target` (an empty folder) what the disk may hold after the cut.
   *
   * Each entry whose live and durable states differ takes one of them at
   * random; each file whose bytes were not all fsynced is left as its last
   * fsynced bytes (empty if never), cut at a random length, or whole.
   */
  async materialize(target: string, random: () => number): Promise<void> {
    const write = async (dir: DirNode, at: string) => {
      const names = new Set([...dir.live.keys(), ...dir.durable.keys()]);
      for (const name of [...names].sort()) {
        const live = dir.live.get(name);
        const durable = dir.durable.get(name);
        let node = live;
        if (live !== durable) {
          this.undone++;
          node = random() < 0.5 ? durable : live;
        }
        if (!node) continue;
        const abs = path.join(at, name);
        if (node.kind === 'dir') {
          await fsp.mkdir(abs);
          await write(node, abs);
        } else {
          await fsp.writeFile(abs, contentAfterCut(node, random));
        }
      }
    };
    await write(this.rootNode, target);
  }
}

function contentAfterCut(node: FileNode, random: () => number): Buffer {
  if (node.synced && node.synced.equals(node.data)) return node.data;
  const r = random();
  if (r < 1 / 3) return node.synced ?? Buffer.alloc(0);
  if (r < 2 / 3) {
    // Cut somewhere after what was durable: only the un-fsynced tail can be lost.
    const floor = node.synced && node.data.subarray(0, node.synced.length).equals(node.synced) ? node.synced.length : 0;
    return node.data.subarray(0, floor + Math.floor(random() * (node.data.length - floor + 1)));
  }
  return node.data;
}
