import { PGlite } from '@electric-sql/pglite';
const base=["--single","-F","-O","-j","-c","search_path=public","-c","exit_on_error=false","-c","log_checkpoints=false","-c","max_worker_processes=0","-c","max_parallel_workers=0","-c","max_parallel_workers_per_gather=0","-c","io_method=sync","-c","max_parallel_maintenance_workers=0"];
const extra = process.argv.slice(3).flatMap((a) => ['-c', a]);
const c0 = process.cpuUsage();
const db = await PGlite.create(process.argv[2], { startParams: [...base, ...extra] });
const c1 = process.cpuUsage(c0);
const r = await db.query("select current_setting('shared_buffers') sb, current_setting('wal_buffers') wb, current_setting('max_connections') mc");
await db.close();
console.log(extra.join(' ') || '(defaults)', `cpu ${(c1.user+c1.system)/1000|0} ms`, JSON.stringify(r.rows[0]));
