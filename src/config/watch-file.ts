import { type FSWatcher, realpathSync, type Stats, statSync, watch } from 'node:fs';
import { dirname } from 'node:path';

export interface WatchFileOptions {
  /**
   * How long after the first event the file is looked at: the events of one save (an editor's
   * rename and write, a Kubernetes ConfigMap's swap of its `..data` link) come together, and a file
   * rewritten a hundred times a second is looked at once per this long.
   * @default 250
   */
  readonly intervalMs?: number;
  /** Told when the file can no longer be watched (its directory went away): SIGHUP still works. */
  readonly onError?: (error: Error) => void;
}

export interface FileWatch {
  close(): void;
}

/**
 * Calls `changed` when `file` changes: at most once per `intervalMs`, and only when what `stat`
 * says of it (device, inode, size, times; missing counts as a state) differs from the last look.
 * It watches the file's directory (and its target's, when it is a link), not the file: an editor
 * that saves by renaming a new file over the old one, or a file briefly missing, replaces the
 * inode a watch on the file would follow, and a ConfigMap changes only a link beside it. Other
 * files of the directory cost a `stat` per interval at most.
 */
export function watchFile(
  file: string,
  changed: () => void,
  { intervalMs = 250, onError }: WatchFileOptions = {},
): FileWatch {
  let last = signatureOf(file);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const look = () => {
    timer = undefined;
    if (closed) return;
    const now = signatureOf(file);
    if (now === last) return;
    last = now;
    changed();
  };
  const onEvent = () => {
    if (timer || closed) return;
    timer = setTimeout(look, intervalMs);
    timer.unref();
  };
  const directories = new Set([dirname(file)]);
  try {
    directories.add(dirname(realpathSync(file)));
  } catch {
    // Missing now: its directory is watched, and it is looked at when it appears.
  }
  const watchers: FSWatcher[] = [];
  const close = () => {
    closed = true;
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
  const failed = (error: Error) => {
    close();
    onError?.(error);
  };
  try {
    for (const directory of directories) {
      const watcher = watch(directory, { persistent: false }, onEvent);
      watcher.on('error', failed);
      watchers.push(watcher);
    }
  } catch (error) {
    failed(error as Error);
  }
  return { close };
}

/** What `stat` says of `file` that a save changes, as one string; `missing` when it is not there. */
function signatureOf(file: string): string {
  let stats: Stats | undefined;
  try {
    stats = statSync(file);
  } catch {
    return 'missing';
  }
  const { dev, ino, size, mtimeMs, ctimeMs } = stats;
  return `${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}`;
}
