// Query IDs and socket choices must be unpredictable to an off-path attacker (RFC 5452), so they come
// from the CSPRNG. One randomFillSync per 2048 IDs keeps that off the per-query cost.

const { randomFillSync } = process.getBuiltinModule('node:crypto');

const pool = Buffer.alloc(4096);
let next = pool.length;

export function randomUint16(): number {
  if (next + 2 > pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const v = (pool[next] << 8) | pool[next + 1];
  next += 2;
  return v;
}
