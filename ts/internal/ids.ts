/**
 * Call ids for `NativeWorkspace.call` / `abort`: unique among the calls in flight.
 *
 * @internal
 */

const MAX_ID = 0x7fff_ffff

/** Returns a generator of positive 31-bit ids that wraps around long before collisions matter. */
export function callIdSequence(): () => number {
  let last = 0
  return () => {
    last = last >= MAX_ID ? 1 : last + 1
    return last
  }
}
