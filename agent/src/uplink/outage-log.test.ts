import { describe, expect, it } from 'vitest';
import { OutageLog } from './outage-log.ts';

describe('OutageLog', () => {
  it('says a failure when new or changed, then on a doubling scale, and the recovery once', () => {
    const lines: string[] = [];
    const outage = new OutageLog((line) => lines.push(line));
    for (let attempt = 1; attempt <= 20; attempt++) outage.failed('movement', attempt, 'ECONNREFUSED', `retry ${attempt}`);
    expect(lines).toEqual(['retry 1', 'retry 2', 'retry 4', 'retry 8', 'retry 16']);
    outage.failed('movement', 21, '503 from the cloud', 'retry 21: 503');
    expect(lines.at(-1)).toBe('retry 21: 503');
    outage.succeeded('movement', (failures) => `delivered again after ${failures} failed attempts`);
    outage.succeeded('movement', () => 'said twice');
    expect(lines.at(-1)).toBe('delivered again after 21 failed attempts');
  });

  it('keeps each thing apart, and says nothing for a success without failures', () => {
    const lines: string[] = [];
    const outage = new OutageLog((line) => lines.push(line));
    outage.succeeded('metrics', () => 'never');
    outage.failed('live', 1, 'ECONNREFUSED', 'live 1');
    outage.failed('live', 3, 'ECONNREFUSED', 'live 3'); // the same reason from another endpoint
    outage.failed('metrics', 1, 'ECONNREFUSED', 'metrics 1');
    expect(lines).toEqual(['live 1', 'metrics 1']);
  });
});
