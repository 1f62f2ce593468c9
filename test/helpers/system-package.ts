/**
 * Real components that tests run for real (redis-server, Chromium) come from Debian's packages.
 * CI machines start bare, so a test that needs one installs it here, once per machine: the
 * project's own files install what its tests need.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './eventually.js';

const run = promisify(execFile);

export interface SystemPackage {
  /** The executable the test runs, looked up on PATH and in the sbin directories. */
  readonly command: string;
  /** The Debian package that provides it. */
  readonly package: string;
}

/** Where executables are looked for: PATH, then where Debian installs daemons. */
function searchPath(): string[] {
  const path = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return [...new Set([...path, '/usr/local/bin', '/usr/bin', '/usr/sbin', '/bin', '/sbin'])];
}

/** The absolute path of `command`, or `undefined` when it is not installed. */
export function findExecutable(command: string): string | undefined {
  for (const directory of searchPath()) {
    const candidate = join(directory, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not there.
    }
  }
  return undefined;
}

/** How long one install may take, `apt-get update` included. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;
/** A lock older than this belongs to an install that died: taken over. */
const STALE_LOCK_MS = INSTALL_TIMEOUT_MS + 60_000;

/**
 * Test files run in parallel workers, and apt allows one install at a time: the installs of one
 * machine take turns through a lock directory (`mkdir` is atomic).
 */
async function withInstallLock<Value>(work: () => Promise<Value>): Promise<Value> {
  const lock = join(tmpdir(), 'ledger-gateway-apt.lock');
  const deadline = Date.now() + STALE_LOCK_MS;
  await eventually(
    () => {
      try {
        mkdirSync(lock);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const takenAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
        if (Date.now() - takenAt > STALE_LOCK_MS || Date.now() > deadline) {
          rmSync(lock, { recursive: true, force: true });
        }
        return false;
      }
    },
    { timeoutMs: 2 * STALE_LOCK_MS, intervalMs: 500 },
  );
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The path of `command`, installing `package` with apt-get first when the machine lacks it.
 * Installing needs root (as on CI and the developers' machines); without it, the error says what
 * to install.
 */
export async function ensureSystemPackage({
  command,
  package: name,
}: SystemPackage): Promise<string> {
  const found = findExecutable(command);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(`${command} is missing; install it: sudo apt-get install -y ${name}`);
  }
  return withInstallLock(async () => {
    // Another worker may have installed it while this one waited.
    const installed = findExecutable(command);
    if (installed) return installed;
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const options = { env, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 };
    await run('apt-get', ['update'], options);
    await run('apt-get', ['install', '-y', '--no-install-recommends', name], options);
    const path = findExecutable(command);
    if (!path) throw new Error(`apt-get installed ${name}, yet ${command} is not on PATH`);
    return path;
  });
}
