/** What someone who can write a log, but holds no key, can make: frames sealed with unkeyed hashes. */
import { encodeFrame, type FrameInput, nodeSha256 } from '@crustcore/ledger';

/** Frames linked after `last` (its seq and hash); `commits` says which carry the commit flag. */
export function forge(
  last: { readonly seq: number; readonly hash: Uint8Array },
  inputs: readonly FrameInput[],
  commits: readonly boolean[],
): Buffer {
  let prev = last.hash;
  const parts = inputs.map((input, i) => {
    const encoded = encodeFrame(
      { seq: last.seq + 1 + i, prevHash: prev, commit: commits[i] === true },
      input,
      nodeSha256,
    );
    if (encoded._tag === 'Left') throw new Error(encoded.left.reason);
    prev = encoded.right.hash;
    return Buffer.from(encoded.right.bytes);
  });
  return Buffer.concat(parts);
}
