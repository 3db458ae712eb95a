/**
 * SHA256SUMS, in the format `sha256sum` writes and `sha256sum -c` reads: one
 * `<64 hex>  <name>` line per artifact. The release signs this file; a
 * tarball is trusted only when the signed list names it, by its own name,
 * with its own hash — a list that carries the right hash under another name
 * (or the right name with another hash) is refused, so a signed list of an
 * older or different artifact cannot vouch for this one.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';

const LINE = /^([0-9a-f]{64}) [ *](\S(?:.*\S)?)$/;

export type ChecksumList = ReadonlyMap<string, string>;

export const ChecksumListText = new t.Type<ChecksumList, string, unknown>(
  'ChecksumList',
  (u): u is ChecksumList => u instanceof Map,
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'a checksum list is text');
    const list = new Map<string, string>();
    for (const [index, line] of u.split('\n').entries()) {
      if (line === '') continue;
      const match = LINE.exec(line);
      const [, hash, name] = match ?? [];
      if (hash === undefined || name === undefined)
        return t.failure(u, c, `line ${index + 1} is not "<64 lower-case hex>  <name>"`);
      if (list.has(name)) return t.failure(u, c, `${name} is listed twice`);
      list.set(name, hash);
    }
    if (list.size === 0) return t.failure(u, c, 'the checksum list is empty');
    return t.success(list);
  },
  (list) => [...list].map(([name, hash]) => `${hash}  ${name}\n`).join(''),
);

export const sha256Hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** One line per artifact, in name order (what the release writes as SHA256SUMS). */
export function checksumList(files: ReadonlyArray<{ readonly name: string; readonly data: Uint8Array }>): string {
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return ChecksumListText.encode(new Map(sorted.map((file) => [file.name, sha256Hex(file.data)])));
}

export type ListedCheck =
  | { readonly _tag: 'Right'; readonly right: string }
  | { readonly _tag: 'Left'; readonly left: string };

/** The file `name` with bytes `data` is in the list under that name with that hash. */
export function checkListed(listText: string, name: string, data: Uint8Array): ListedCheck {
  const list = ChecksumListText.decode(listText);
  if (list._tag === 'Left')
    return {
      _tag: 'Left',
      left: `${list.left.map((e) => e.message ?? 'invalid').join('; ')}: download SHA256SUMS again`,
    };
  const listed = list.right.get(name);
  const actual = sha256Hex(data);
  if (listed === undefined) {
    const elsewhere = [...list.right].find(([, hash]) => hash === actual)?.[0];
    const hint = elsewhere === undefined ? '' : ` (its hash is listed for ${JSON.stringify(elsewhere)})`;
    return { _tag: 'Left', left: `${JSON.stringify(name)} is not in the checksum list${hint}: do not install it` };
  }
  if (listed !== actual)
    return {
      _tag: 'Left',
      left: `${JSON.stringify(name)} has SHA-256 ${actual}, the list says ${listed}: do not install it`,
    };
  return { _tag: 'Right', right: actual };
}
