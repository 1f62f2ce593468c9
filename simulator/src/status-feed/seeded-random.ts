const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const ID_LENGTH = 12;

export interface SeededRandom {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, max). */
  int(max: number): number;
  /** A 12-character lowercase alphanumeric id, never repeated by this generator. */
  id(): string;
}

/** Deterministic pseudo-random source (mulberry32), so the same seed yields the same feed. */
export function createSeededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const issued = new Set<string>();

  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number): number => Math.floor(next() * max);
  const id = (): string => {
    for (;;) {
      let candidate = '';
      for (let i = 0; i < ID_LENGTH; i++) candidate += ID_ALPHABET[int(ID_ALPHABET.length)];
      if (!issued.has(candidate)) {
        issued.add(candidate);
        return candidate;
      }
    }
  };
  return { next, int, id };
}

/** FNV-1a hash of a string, to derive a seed from a description of the feed. */
export function seedFrom(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
