import { spawnSync } from 'node:child_process';

/**
 * A Python that can import `modules` (Debian packages `python3-<module>`): `explicit` when given, else HIVEGATE_PYTHON,
 * else /usr/bin/python3, else python3. Debian's packages live in the system Python; a pyenv or venv python3 earlier
 * on PATH usually lacks them.
 */
export function findPython(modules: readonly string[], explicit?: string): string {
  const candidates = explicit ? [explicit] : [process.env.HIVEGATE_PYTHON, '/usr/bin/python3', 'python3'].filter((c): c is string => Boolean(c));
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['-c', `import ${modules.join(', ')}`], { stdio: 'ignore' });
    if (!probe.error && probe.status === 0) return candidate;
  }
  const named = modules.length > 1 ? `${modules.slice(0, -1).join(', ')} and ${modules.at(-1)}` : modules.join('');
  throw new Error(`no Python with ${named} found (tried ${candidates.join(', ')}); install them with apt-get install -y ${modules.map((m) => `python3-${m}`).join(' ')}`);
}
