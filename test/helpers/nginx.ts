/**
 * nginx as a child of a test: Debian's package (/usr/sbin/nginx) or the binary MUD_NGINX names,
 * with its own prefix, configuration, pid, logs and temp paths in a folder of the test's, on the
 * port the test chose. The configuration snippets of deploy/nginx/ go inside the http block
 * written here, as they would go in /etc/nginx/conf.d/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const NGINX = process.env.MUD_NGINX ?? '/usr/sbin/nginx';
export const NGINX_REMEDY = 'apt-get install nginx, or set MUD_NGINX';

/**
 * Writes `dir/nginx.conf`: `snippet` inside an http block whose pid, logs and temp paths are in
 * `dir` (`httpExtra`: more directives for that block).
 */
export function writeNginxConf(dir: string, snippet: string, httpExtra = ''): string {
  chmodSync(dir, 0o755);
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => {
    const folder = path.join(dir, name);
    mkdirSync(folder);
    // nginx's workers drop root for an unprivileged user, who must be able to write here.
    chmodSync(folder, 0o777);
    return `  ${name}_temp_path ${folder};`;
  });
  const file = path.join(dir, 'nginx.conf');
  writeFileSync(file, `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n${httpExtra}${temp.join('\n')}\n${snippet}\n}\n`);
  return file;
}

/** Starts nginx on `dir/nginx.conf` and waits (15 s at most) until `ready` says it answers. */
export async function startNginx(dir: string, ready: () => Promise<boolean>): Promise<ChildProcess> {
  const nginx = spawn(NGINX, ['-p', `${dir}/`, '-e', `${dir}/error.log`, '-c', `${dir}/nginx.conf`, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (await ready().catch(() => false)) return nginx;
    if (Date.now() > deadline || nginx.exitCode !== null) {
      nginx.kill('SIGTERM');
      throw new Error(`nginx did not answer: ${existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
