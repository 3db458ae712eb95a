// Runs PGlite's initdb once at build time and keeps the empty cluster as
// dist/pglite-template-<version>.tar.gz: see src/pglite-template.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
const { version } = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8'));
const pg = await PGlite.create();
const tarball = await pg.dumpDataDir('gzip');
await pg.close();
const out = new URL(`../dist/pglite-template-${version}.tar.gz`, import.meta.url);
writeFileSync(out, Buffer.from(await tarball.arrayBuffer()));
