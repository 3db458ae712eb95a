/**
 * Where a symlink really points once the patch is applied. Judging a link by
 * its own target text misses chains: `a/b -> ..` and `c -> a/b/..` each look
 * inside, but `c` resolves to the parent of the tree, because the kernel
 * follows `a/b` before it applies the `..`. So links are resolved component by
 * component against every link in the resulting tree, as the kernel would.
 * Pure: the caller supplies the tree's links.
 */

export type LinkResolution =
  | { readonly _tag: 'Inside'; readonly path: string }
  | { readonly _tag: 'Outside'; readonly via: readonly string[] }
  | { readonly _tag: 'Loop'; readonly via: readonly string[] };

// Linux gives up after 40 links (ELOOP); so do we.
const MAX_HOPS = 40;

/**
 * Resolves `path` (repository-relative) against `links` (link path → target
 * text). Paths that do not exist resolve lexically, like a dangling link.
 */
export function resolveInTree(path: string, links: ReadonlyMap<string, string>): LinkResolution {
  const done: string[] = [];
  let pending = path.split('/').filter((part) => part !== '' && part !== '.');
  const via: string[] = [];
  let hops = 0;
  while (pending.length > 0) {
    const [head, ...rest] = pending as [string, ...string[]];
    pending = rest;
    if (head === '.') continue;
    if (head === '..') {
      if (done.length === 0) return { _tag: 'Outside', via };
      done.pop();
      continue;
    }
    const here = [...done, head].join('/');
    const target = links.get(here);
    if (target === undefined) {
      done.push(head);
      continue;
    }
    hops += 1;
    via.push(here);
    if (hops > MAX_HOPS) return { _tag: 'Loop', via };
    if (target.startsWith('/') || target === '') return { _tag: 'Outside', via };
    // A relative target is read from the link's own directory.
    pending = [...target.split('/').filter((part) => part !== '' && part !== '.'), ...pending];
  }
  return { _tag: 'Inside', path: done.join('/') };
}

/** Links in `links` that resolve outside the tree (or loop), each with the chain that took it there. */
export function escapingLinks(links: ReadonlyMap<string, string>): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const path of links.keys()) {
    const resolved = resolveInTree(path, links);
    if (resolved._tag !== 'Inside') out.set(path, resolved.via);
  }
  return out;
}
