/**
 * SHA-256 (FIPS 180-4), small on purpose: the kernel hashes a few kilobytes
 * per step and must stay within its size budget (.size-limit.json), so it
 * carries this instead of a general hashing library. Pure, no `node:`.
 * packages/kernel/test/hash.test.ts checks it against the standard vectors
 * and against node:crypto on random inputs.
 */

/** Round constants: the first 32 bits of the fractional cube roots of the first 64 primes. */
const K = new Uint32Array(64);
/** Initial state: the same of the square roots of the first 8 primes. */
const H0 = new Uint32Array(8);

const fractionBits = (x: number): number => ((x - Math.floor(x)) * 2 ** 32) >>> 0;
{
  let found = 0;
  for (let n = 2; found < 64; n++) {
    let prime = true;
    for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
    if (!prime) continue;
    if (found < 8) H0[found] = fractionBits(Math.sqrt(n));
    K[found++] = fractionBits(Math.cbrt(n));
  }
}

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n));

function compress(h: Uint32Array, w: Uint32Array): undefined {
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15] as number;
    const b = w[i - 2] as number;
    const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
    const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
    w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
  }
  let [a, b, c, d, e, f, g, k] = h as unknown as [number, number, number, number, number, number, number, number];
  for (let i = 0; i < 64; i++) {
    const t1 =
      (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    k = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  const out = [a, b, c, d, e, f, g, k];
  for (let i = 0; i < 8; i++) h[i] = ((h[i] as number) + (out[i] as number)) | 0;
}

/** The digest of `bytes` as 64 lowercase hex characters. */
export function sha256HexOf(bytes: Uint8Array): string {
  const bitLength = bytes.length * 8;
  // Message, the 0x80 marker, zero padding, then the 64-bit big-endian length.
  const padded = new Uint8Array((((bytes.length + 8) >> 6) + 1) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 2 ** 32));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const h = H0.slice();
  const w = new Uint32Array(64);
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4);
    compress(h, w);
  }
  let hex = '';
  for (const word of h) hex += word.toString(16).padStart(8, '0');
  return hex;
}
