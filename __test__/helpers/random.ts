/** A small deterministic PRNG (xorshift32): a failing seed can be replayed. Values in [0, 1). */
export function prng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 2 ** 32
  }
}
