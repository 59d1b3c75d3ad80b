import { describe, expect, it } from 'vitest';
import { Controller, type Module } from './controller.ts';

function recorder(log: string[], name: string, failStart = false): Module {
  return {
    name,
    start: async () => {
      if (failStart) throw new Error(`${name} broke`);
      log.push(`start ${name}`);
    },
    stop: () => {
      log.push(`stop ${name}`);
    },
  };
}

describe('Controller', () => {
  it('starts in order and stops in reverse, once', async () => {
    const log: string[] = [];
    const controller = new Controller(['outbox', 'uplink', 'capture', 'pipeline'].map((n) => recorder(log, n)));
    await controller.start();
    await Promise.all([controller.stop(), controller.stop()]);
    expect(log).toEqual(['start outbox', 'start uplink', 'start capture', 'start pipeline', 'stop pipeline', 'stop capture', 'stop uplink', 'stop outbox']);
  });
  it('stops what started when a later module fails to start', async () => {
    const log: string[] = [];
    const messages: string[] = [];
    const controller = new Controller([recorder(log, 'outbox'), recorder(log, 'uplink'), recorder(log, 'capture', true)], (m) => messages.push(m));
    await expect(controller.start()).rejects.toThrow('capture broke');
    expect(log).toEqual(['start outbox', 'start uplink', 'stop uplink', 'stop outbox']);
    expect(messages).toEqual(['capture failed to start: capture broke']);
  });
});
