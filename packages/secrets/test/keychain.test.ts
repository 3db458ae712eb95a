/**
 * The keychain backend. `secret-tool` is not installed on these machines, so
 * the availability probe is tested for real, and the backend's protocol
 * (argv, stdin, stdout, exit codes) is tested end to end through the sandbox
 * runner against a stand-in `secret-tool` script that keeps items in a
 * directory and logs every argv it receives.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeSecretTool, SecretToolKeychain } from '../src/index.js';
import { handleOf, materialOf } from './helpers.js';

const FAKE_SECRET_TOOL = `#!/bin/sh
# Stand-in for libsecret's secret-tool: items live in $FAKE_KEYRING_DIR.
dir="$FAKE_KEYRING_DIR"
printf '%s\\n' "$*" >> "$dir/argv.log"
command="$1"; shift
label=""
case "$1" in --label=*) label="\${1#--label=}"; shift ;; esac
[ "$command" = search ] && [ "$1" = --all ] && shift
service=""; name=""
while [ $# -ge 2 ]; do
  case "$1" in service) service="$2" ;; name) name="$2" ;; esac
  shift 2
done
[ "$service" = crustcore ] || { echo "unknown service" >&2; exit 2; }
case "$command" in
  store) cat > "$dir/$name.secret"; printf '%s' "$label" > "$dir/$name.label" ;;
  lookup) [ -f "$dir/$name.secret" ] || exit 1; cat "$dir/$name.secret" ;;
  clear) rm -f "$dir/$name.secret" "$dir/$name.label" ;;
  search)
    found=1
    for f in "$dir"/*.secret; do
      [ -f "$f" ] || continue
      n=$(basename "$f" .secret); found=0
      echo "[/org/freedesktop/secrets/collection/login/$n]"
      echo "label = $(cat "$dir/$n.label")"
      echo "secret = $(cat "$f")"
      echo "attribute.name = $n"
      echo "attribute.service = crustcore"
    done
    exit $found ;;
  *) echo "unknown command" >&2; exit 2 ;;
esac
`;

let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crustcore-keychain-'));
  await writeFile(join(dir, 'secret-tool'), FAKE_SECRET_TOOL);
  await chmod(join(dir, 'secret-tool'), 0o755);
  env = {
    PATH: `${dir}:/usr/bin:/bin`,
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent',
    FAKE_KEYRING_DIR: dir,
  };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('keychain availability probe', () => {
  it('says unavailable, with the reason, when secret-tool is not installed', async () => {
    const probe = await probeSecretTool({ PATH: '/usr/local/bin:/usr/bin:/bin' });
    expect(probe).toEqual({
      available: false,
      reason: 'secret-tool (libsecret-tools) is not installed or not on PATH',
    });
    const opened = await SecretToolKeychain.open({ env: { PATH: '/usr/bin:/bin' } });
    expect(opened._tag === 'Left' && opened.left._tag).toBe('StoreUnavailable');
  });

  it('says unavailable without a D-Bus session bus', async () => {
    const probe = await probeSecretTool({ PATH: env.PATH! });
    expect(probe).toEqual({ available: false, reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset)' });
  });

  it('finds secret-tool on PATH when both are present', async () => {
    expect(await probeSecretTool(env)).toEqual({ available: true, executable: join(dir, 'secret-tool') });
  });
});

describe('SecretToolKeychain through the sandbox runner', () => {
  it('stores, looks up, lists and removes; the value never appears in argv', async () => {
    const opened = await SecretToolKeychain.open({ env });
    if (opened._tag === 'Left') throw new Error(opened.left._tag);
    const keychain = opened.right;
    const value = 'keyring-secret-value-42 with spaces';
    expect(await keychain.set(handleOf('DEPLOY', 'deploy key'), materialOf(value))).toEqual({
      _tag: 'Right',
      right: undefined,
    });
    const got = await keychain.get(handleOf('DEPLOY'));
    expect(got._tag === 'Right' && got.right.expose()).toBe(value);
    const listed = await keychain.list();
    expect(listed._tag === 'Right' && listed.right.map((s) => `${s.handle.uri}|${s.handle.label}`)).toEqual([
      'secret://DEPLOY|deploy key',
    ]);
    expect(await keychain.get(handleOf('MISSING'))).toEqual({
      _tag: 'Left',
      left: { _tag: 'SecretNotFound', uri: 'secret://MISSING' },
    });
    expect(await keychain.remove(handleOf('DEPLOY'))).toEqual({ _tag: 'Right', right: true });
    expect(await keychain.remove(handleOf('DEPLOY'))).toEqual({ _tag: 'Right', right: false });
    const empty = await keychain.list();
    expect(empty._tag === 'Right' && empty.right.length).toBe(0);
    const argvLog = await readFile(join(dir, 'argv.log'), 'utf8');
    expect(argvLog).toContain('store --label=crustcore: deploy key service crustcore name DEPLOY');
    expect(argvLog).not.toContain('keyring-secret-value');
  });

  it('reports a failing secret-tool as a typed error without its output', async () => {
    const opened = await SecretToolKeychain.open({ env: { ...env, FAKE_KEYRING_DIR: join(dir, 'no-such-dir') } });
    if (opened._tag === 'Left') throw new Error(opened.left._tag);
    const stored = await opened.right.set(handleOf('X'), materialOf('value-that-fails-1'));
    expect(stored._tag === 'Left' && stored.left._tag).toBe('StoreCommandFailed');
    expect(JSON.stringify(stored)).not.toContain('value-that-fails');
  });
});
