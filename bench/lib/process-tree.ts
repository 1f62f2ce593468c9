/**
 * A server and the processes it forked (node:cluster workers), read from /proc: which processes
 * there are, whether those of the start are still the same ones, and their RSS, CPU time and open
 * files summed. For `bench/fanout.ts`, which starts the production command and must know how many
 * gateway processes actually serve, whatever `GATEWAY_WORKERS` asked for.
 */

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { procStatusBytes } from './processes.js';

/** A process, told apart from a later one with the same pid by its start time. */
export interface ProcessId {
  pid: number;
  /** Clock ticks since boot (`/proc/<pid>/stat` field 22). */
  startTime: number;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** The fields of `/proc/<pid>/stat` after the command's ")": field 3 of the line is [0]. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** `pid` with its start time; null when there is no such process. */
export function processId(pid: number): ProcessId | null {
  const fields = statFields(pid);
  return fields === null ? null : { pid, startTime: Number(fields[19]) };
}

/** Whether `process_` still runs (and is not a zombie), the same one as when it was seen. */
export function isAlive(process_: ProcessId): boolean {
  const fields = statFields(process_.pid);
  return fields !== null && fields[0] !== 'Z' && Number(fields[19]) === process_.startTime;
}

/** `root`'s descendants, parents before children (by scanning every /proc/<pid>/stat). */
export function descendants(root: number): ProcessId[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const fields = statFields(pid);
    if (fields === null || fields[0] === 'Z') continue;
    const parent = Number(fields[1]);
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const found: ProcessId[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    const id = processId(pid);
    if (id === null) continue;
    found.push(id);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/**
 * The processes of a server started as `root`: `root` and what it forked. Those that serve are
 * the workers when there are any (node:cluster's primary only hands connections on), else `root`.
 */
export interface ProcessTree {
  root: ProcessId;
  workers: ProcessId[];
  /** `root` and the workers. */
  all: ProcessId[];
  /** The processes that hold the connections. */
  serving: ProcessId[];
}

export function processTree(root: number): ProcessTree {
  const rootId = processId(root) ?? { pid: root, startTime: -1 };
  const workers = descendants(root);
  return {
    root: rootId,
    workers,
    all: [rootId, ...workers],
    serving: workers.length > 0 ? workers : [rootId],
  };
}

/** Sums `read` over `processes`; null when none of them could be read. */
function sumOver(processes: readonly ProcessId[], read: (pid: number) => number | null) {
  let total = 0;
  let seen = false;
  for (const { pid } of processes) {
    const value = read(pid);
    if (value === null) continue;
    total += value;
    seen = true;
  }
  return seen ? total : null;
}

/** Resident set size, summed over `processes`, in bytes. */
export const rssOf = (processes: readonly ProcessId[]) =>
  sumOver(processes, (pid) => procStatusBytes(pid, 'VmRSS'));

/** Peak resident set size (`VmHWM`), summed over `processes`, in bytes. */
export const peakRssOf = (processes: readonly ProcessId[]) =>
  sumOver(processes, (pid) => procStatusBytes(pid, 'VmHWM'));

/** CPU time so far (user + system, fields 14 and 15 of the stat line), summed, in ms. */
export const cpuOf = (processes: readonly ProcessId[]) =>
  sumOver(processes, (pid) => {
    const fields = statFields(pid);
    return fields === null
      ? null
      : ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS;
  });

/** Open file descriptors of `pid`; null when it is gone. */
export function openFilesOf(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** The open-file limit (soft) of `pid`, or of this process. */
export function openFileLimit(pid: number | 'self' = 'self'): number | null {
  try {
    const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
    const value = /^Max open files\s+(\d+|unlimited)/m.exec(limits)?.[1];
    return value === undefined ? null : value === 'unlimited' ? Infinity : Number(value);
  } catch {
    return null;
  }
}
