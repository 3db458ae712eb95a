/**
 * What of the host a bubblewrap sandbox sees: an explicit list of system
 * directories (read-only), a small /etc subset, and the directory of the
 * running Node binary when it lives outside them. Never the whole root: that
 * would expose ~/.ssh, the host HOME and every secret under /etc.
 */
import { accessSync, constants, existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename, dirname, resolve } from 'node:path';
import { scriptNodeBinary } from './node-binary.js';
import { isInside } from './path-shape.js';

/** One mount that mirrors the host layout. */
export type SystemMount =
  | { readonly kind: 'ro-bind'; readonly path: string }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string };

/** Top-level system directories; on merged-/usr hosts most are symlinks into /usr. */
const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * /etc entries programs need to link, resolve users, read time zones and
 * trust TLS roots. Not included: shadow files, ssh keys, /etc/ssl/private,
 * npmrc/pip.conf/gitconfig (may hold tokens or redirect tools), resolv.conf
 * (only with network).
 */
export const ETC_ENTRIES: readonly string[] = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/hosts',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/protocols',
  '/etc/services',
  '/etc/mime.types',
  '/etc/os-release',
  '/etc/debian_version',
  '/etc/terminfo',
  '/etc/ssl/certs',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
];

/** Only with network: how to find a DNS server. */
export const NETWORK_ETC_ENTRIES: readonly string[] = ['/etc/resolv.conf'];

/** Directories searched for host tools (bwrap, prlimit, sh); never the caller's PATH. */
export const HOST_TOOL_DIRECTORIES: readonly string[] = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

/** Absolute path of a host tool in the fixed system directories, or null. */
export function findHostTool(name: string): string | null {
  for (const directory of HOST_TOOL_DIRECTORIES) {
    const candidate = `${directory}/${name}`;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return null;
}

let cachedMounts: readonly SystemMount[] | undefined;

/** The system roots as they exist on this host (computed once per process). */
export function systemMounts(): readonly SystemMount[] {
  if (cachedMounts !== undefined) return cachedMounts;
  const mounts: SystemMount[] = [];
  for (const path of SYSTEM_ROOTS) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) mounts.push({ kind: 'symlink', path, target: readlinkSync(path) });
    else if (stat.isDirectory()) mounts.push({ kind: 'ro-bind', path });
  }
  const prefix = nodeInstallPrefix();
  if (prefix !== null) mounts.push({ kind: 'ro-bind', path: prefix });
  cachedMounts = mounts;
  return mounts;
}

/**
 * Where the running Node is installed when that is outside the system
 * roots (`/opt/node` for `/opt/node/bin/node`), so tests can run Node
 * inside; null when /usr already covers it.
 */
export function nodeInstallPrefix(): string | null {
  const binary = scriptNodeBinary();
  if (binary === null) return null;
  return nodeMountFor(binary, resolvedHomes([process.env.HOME, homedir(), accountHome(), process.env.CRUSTCORE_HOME]));
}

/** The account's own home, whatever HOME says (an empty or different HOME must not hide it). */
function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined;
  }
}

/** Each home as the binary's path is, normalized and through its symlinks (when it exists). */
export function resolvedHomes(homes: readonly (string | undefined)[]): string[] {
  const resolved = new Set<string>();
  for (const home of homes) {
    if (typeof home !== 'string' || !home.startsWith('/')) continue;
    const normal = resolve(home);
    resolved.add(normal);
    try {
      resolved.add(realpathSync(normal));
    } catch {
      // Not there: the normalized spelling is all there is to compare.
    }
  }
  return [...resolved];
}

/**
 * What to bind for the Node binary at `binary`: nothing under the system roots; otherwise its
 * install prefix — unless that prefix holds a home (a `node` in `~/bin` has `~` as its prefix, and
 * binding it would show every sandbox `~/.ssh` and CrustCore's own state): then the binary alone.
 */
export function nodeMountFor(binary: string, homes: readonly string[]): string | null {
  if (SYSTEM_ROOTS.some((root) => isInside(binary, root))) return null;
  const binDirectory = dirname(binary);
  const prefix = basename(binDirectory) === 'bin' ? dirname(binDirectory) : binDirectory;
  return homes.some((home) => isInside(home, prefix)) ? binary : prefix;
}

/** PATH inside the sandbox when the caller gives none. */
export function defaultSandboxPath(): string {
  const entries = ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  const binary = nodeInstallPrefix() === null ? null : scriptNodeBinary();
  if (binary !== null) {
    const nodeBin = dirname(binary);
    if (!entries.includes(nodeBin)) entries.unshift(nodeBin);
  }
  return entries.filter((entry) => existsSync(entry)).join(':');
}

/** Read-only paths the sandbox can see (for the env sanitizer's visibility check). */
export function systemVisibleRoots(): readonly string[] {
  return systemMounts().map((mount) => mount.path);
}
