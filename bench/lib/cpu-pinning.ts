/**
 * The benchmark's load generator and the server it loads, each on a core of its own (`taskset`,
 * `npm run bench -- --pin`). Left to the scheduler on a 2-core machine, autocannon and the server
 * share a core some of the time and not others: runs of the tiny query gave gateway ÷ raw floor
 * from 0.42 to 0.95. Pinned, rounds measured by hand fell between 0.66 and 0.76, but within one
 * pinned bench run the raw floor's rounds still ranged from 21k to 31k req/s: the machine itself
 * drifts, and pinning alone does not make one run conclusive.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface CorePlan {
  /** This process's core: autocannon, and the processes spawned without a core (the simulator). */
  readonly load: number;
  /** The core of each server under load. */
  readonly server: number;
}

/**
 * Pins this process (every thread) to one core and returns which core the servers get, or
 * `undefined`, pinning nothing, when fewer than two cores are allowed or `taskset` is missing.
 */
export function pinLoadGenerator(): CorePlan | undefined {
  const [load, server] = allowedCores();
  if (load === undefined || server === undefined) return undefined;
  const pinned = spawnSync('taskset', ['-a', '-p', '-c', String(load), String(process.pid)], {
    stdio: 'ignore',
  });
  return pinned.status === 0 ? { load, server } : undefined;
}

/** The cores this process may run on, from `Cpus_allowed_list` (`0-3,8`); none when unreadable. */
function allowedCores(): number[] {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return [];
  }
  const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? '';
  const cores: number[] = [];
  for (const range of list.split(',')) {
    const [first, last = first] = range.split('-').map(Number);
    if (first === undefined || last === undefined || Number.isNaN(first) || Number.isNaN(last)) {
      continue;
    }
    for (let core = first; core <= last && cores.length < 2; core += 1) cores.push(core);
  }
  return cores;
}
