import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'agent', include: ['src/**/*.test.ts', 'tools/**/*.test.ts', 'test/**/*.test.ts'], testTimeout: 30_000 } });
