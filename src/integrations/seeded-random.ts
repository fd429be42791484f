/** mulberry32: a small, fast 32-bit seeded PRNG; the same seed gives the same floats in [0, 1) everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The largest seed: seeds are positive 32-bit integers (1..MAX_SEED), as the API's `seed` fields are. */
export const MAX_SEED = 2147483647;

/** A fresh seed, 1..MAX_SEED. */
export function randomSeed(): number {
  return 1 + Math.floor(Math.random() * MAX_SEED);
}
