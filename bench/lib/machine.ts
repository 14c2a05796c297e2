/**
 * The machine a benchmark ran on, so a figure can be read against its
 * hardware: CPUs, memory, CPU model, the disk and file system under the
 * measured directory, Node and the kernel.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface MachineDescription {
  /** CPUs this process may use (os.availableParallelism, the `nproc` figure). */
  nproc: number;
  memoryBytes: number;
  cpuModel: string;
  platform: string;
  kernel: string;
  node: string;
  /** Where the benchmark wrote its data. */
  storage: StorageDescription;
}

export interface StorageDescription {
  /** The directory that was measured (resolved). */
  path: string;
  /** Mount point holding it, device and file-system type, from /proc/mounts; 'unknown' elsewhere. */
  mountPoint: string;
  device: string;
  fsType: string;
  mountOptions: string;
  /**
   * The kernel's rotational flag from /sys/block/<disk>/queue/rotational:
   * 'non-rotational', 'rotational' or 'unknown'. Virtual disks often report
   * rotational whatever backs them, so it is quoted as a flag, not a verdict.
   */
  media: string;
}

/**
 * Describe this machine and the storage under `dir`.
 *
 * Linux details come from /proc and /sys; on other systems those fields say
 * 'unknown' rather than failing the benchmark.
 */
export async function describeMachine(dir: string): Promise<MachineDescription> {
  return {
    nproc: os.availableParallelism(),
    memoryBytes: os.totalmem(),
    cpuModel: os.cpus()[0]?.model.trim() || 'unknown',
    platform: `${os.platform()} ${os.arch()}`,
    kernel: os.release(),
    node: process.version,
    storage: await describeStorage(dir),
  };
}

async function describeStorage(dir: string): Promise<StorageDescription> {
  const resolved = await fs.realpath(dir);
  const unknown: StorageDescription = {
    path: resolved,
    mountPoint: 'unknown',
    device: 'unknown',
    fsType: 'unknown',
    mountOptions: '',
    media: 'unknown',
  };
  let mounts: string;
  try {
    mounts = await fs.readFile('/proc/mounts', 'utf8');
  } catch {
    return unknown;
  }
  // The mount with the longest mount point that is a prefix of the path is the one holding it.
  let best: StorageDescription = unknown;
  for (const line of mounts.split('\n')) {
    const [device, mountPoint, fsType, options] = line.split(' ').map(unescapeMount);
    if (!mountPoint) continue;
    const inside = mountPoint === '/' || resolved === mountPoint || resolved.startsWith(mountPoint + path.sep);
    if (inside && (best.mountPoint === 'unknown' || mountPoint.length >= best.mountPoint.length)) {
      best = { path: resolved, mountPoint, device, fsType, mountOptions: options ?? '', media: 'unknown' };
    }
  }
  best.media = await diskMedia(best.device);
  return best;
}

// /proc/mounts escapes spaces and tabs in paths as octal sequences.
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

async function diskMedia(device: string): Promise<string> {
  const name = device.startsWith('/dev/') ? device.slice(5) : '';
  if (!name) return 'unknown';
  // A partition (vda1, nvme0n1p2) has no queue/ of its own: ask its parent disk.
  const candidates = [name, name.replace(/p?\d+$/, '')];
  for (const candidate of candidates) {
    try {
      const flag = (await fs.readFile(`/sys/block/${candidate}/queue/rotational`, 'utf8')).trim();
      return flag === '0' ? 'non-rotational' : 'rotational';
    } catch {
      // try the next candidate
    }
  }
  return 'unknown';
}

/** One line per fact, for the top of a benchmark's output and its report. */
export function formatMachine(m: MachineDescription): string[] {
  const gib = (m.memoryBytes / 1024 ** 3).toFixed(1);
  const s = m.storage;
  return [
    `CPU: ${m.cpuModel}, nproc ${m.nproc}`,
    `memory: ${gib} GiB`,
    `disk: ${s.device} (kernel flag: ${s.media}), ${s.fsType} mounted at ${s.mountPoint}${s.mountOptions ? ` (${s.mountOptions})` : ''}; data in ${s.path}`,
    `Node ${m.node}, ${m.platform}, kernel ${m.kernel}`,
  ];
}
