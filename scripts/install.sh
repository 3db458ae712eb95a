#!/usr/bin/env bash
# Installs a CrustCore release after checking it, without trusting anything it downloads:
#   bash install.sh --from DIR|URL --pubkey KEY [--prefix DIR]
#
#   --from    a release directory (what `npm run xtask -- release --key …` writes) or its base URL
#   --pubkey  the release public key: a minisign .pub file or its base64 line (get it from a
#             source you trust, not from the same place as the release)
#   --prefix  where to install (default ~/.local): DIR/lib/crustcore and the bin DIR/bin/crustcore
#
# Order: SHA256SUMS.minisig is checked against --pubkey (with `minisign` when it is on PATH, else
# with Node's own Ed25519, below); then every tarball's SHA-256 against the signed SHA256SUMS, by
# its own name. Only then is anything installed (npm, third-party dependencies from the default
# registry). Any failed check stops before npm runs.
set -euo pipefail

from='' pubkey='' prefix="${HOME}/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from=${2:?--from needs a value}; shift 2 ;;
    --pubkey) pubkey=${2:?--pubkey needs a value}; shift 2 ;;
    --prefix) prefix=${2:?--prefix needs a value}; shift 2 ;;
    *) echo "install.sh: unknown argument $1 (see the top of this script)" >&2; exit 2 ;;
  esac
done
[ -n "$from" ] || { echo "install.sh: --from DIR|URL is required" >&2; exit 2; }
[ -n "$pubkey" ] || { echo "install.sh: --pubkey KEY is required (the release public key)" >&2; exit 2; }
command -v node >/dev/null || { echo "install.sh: needs Node.js >= 20.12 on PATH" >&2; exit 2; }
command -v npm >/dev/null || { echo "install.sh: needs npm on PATH" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/crustcore-install-XXXXXX")
trap 'rm -rf "$work"' EXIT

fetch() { # fetch NAME: copy or download one release file into $work
  case "$from" in
    http://* | https://*) curl --fail --silent --show-error --location --output "$work/$1" "${from%/}/$1" ;;
    *) cp -- "$from/$1" "$work/$1" ;;
  esac
}

fetch SHA256SUMS
fetch SHA256SUMS.minisig
if [ -f "$pubkey" ]; then key_line=$(grep -v '^untrusted comment:' "$pubkey" | head -n 1); else key_line=$pubkey; fi

# 1. The signature over the checksum list.
if command -v minisign >/dev/null; then
  minisign -V -q -m "$work/SHA256SUMS" -x "$work/SHA256SUMS.minisig" -P "$key_line" ||
    { echo "install.sh: refused: the signature of SHA256SUMS does not verify with this key" >&2; exit 6; }
else
  # The minisign format (see packages/crustcore/src/release/minisign.ts): Ed25519 over the file's
  # BLAKE2b-512 ("ED") or the file ("Ed"), and over signature ‖ trusted comment.
  node - "$work/SHA256SUMS" "$work/SHA256SUMS.minisig" "$key_line" <<'JS' ||
const { createHash, createPublicKey, verify } = require('node:crypto');
const { readFileSync } = require('node:fs');
const [file, sigPath, keyLine] = process.argv.slice(2);
const strict = (text) => { const b = Buffer.from(text, 'base64'); if (b.toString('base64') !== text) throw new Error('not base64'); return b; };
const fail = (why) => { console.error(`install.sh: refused: ${why}`); process.exit(1); };
try {
  const key = strict(keyLine);
  if (key.length !== 42 || key.subarray(0, 2).toString('latin1') !== 'Ed') fail('not a minisign public key');
  const lines = readFileSync(sigPath, 'utf8').split('\n');
  while (lines.length > 4 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length !== 4 || !lines[0].startsWith('untrusted comment: ') || !lines[2].startsWith('trusted comment: ')) fail('not a minisign signature');
  const sig = strict(lines[1]);
  const global = strict(lines[3]);
  const alg = sig.subarray(0, 2).toString('latin1');
  if (sig.length !== 74 || global.length !== 64 || (alg !== 'ED' && alg !== 'Ed')) fail('not a minisign signature');
  if (!sig.subarray(2, 10).equals(key.subarray(2, 10))) fail('signed by another key');
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.subarray(10).toString('base64url') }, format: 'jwk' });
  const data = readFileSync(file);
  const message = alg === 'ED' ? createHash('blake2b512').update(data).digest() : data;
  if (!verify(null, message, pub, sig.subarray(10))) fail('the signature does not match SHA256SUMS');
  const comment = Buffer.from(lines[2].slice('trusted comment: '.length), 'utf8');
  if (!verify(null, Buffer.concat([sig.subarray(10), comment]), pub, global)) fail('the trusted comment was changed');
} catch (error) { fail(error instanceof Error ? error.message : String(error)); }
JS
    exit 6
fi

# 2. Every tarball by its own name and hash; the list must hold the CLI itself.
grep -Eq '^[0-9a-f]{64}  crustcore-[0-9][^ /]*\.tgz$' "$work/SHA256SUMS" ||
  { echo "install.sh: refused: SHA256SUMS lists no crustcore tarball" >&2; exit 6; }
names=()
while read -r hash name; do
  case "$name" in */* | .* | '') echo "install.sh: refused: SHA256SUMS names $name, not a plain file name" >&2; exit 6 ;; esac
  fetch "$name"
  names+=("$name")
done <"$work/SHA256SUMS"
(cd "$work" && sha256sum --check --strict --quiet SHA256SUMS) ||
  { echo "install.sh: refused: a tarball does not match the signed SHA256SUMS" >&2; exit 6; }

# 3. Install: one npm project holding every tarball, so @crustcore/* resolve to these verified files.
app="$prefix/lib/crustcore"
rm -rf "$app.new"
mkdir -p "$app.new/tarballs" "$prefix/bin"
deps=''
for name in "${names[@]}"; do
  cp -- "$work/$name" "$app.new/tarballs/$name"
  package=$(tar -xzOf "$work/$name" package/package.json | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).name)')
  deps="$deps${deps:+,}\"$package\":\"file:tarballs/$name\""
done
printf '{"name":"crustcore-install","private":true,"dependencies":{%s}}\n' "$deps" >"$app.new/package.json"
(cd "$app.new" && npm install --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
rm -rf "$app"
mv "$app.new" "$app"
ln -sfn "$app/node_modules/crustcore/dist/crustcore.cjs" "$prefix/bin/crustcore"
echo "installed $("$prefix/bin/crustcore" --version) in $app; the bin is $prefix/bin/crustcore"
