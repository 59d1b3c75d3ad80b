import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'simulator', include: ['src/**/*.test.ts', 'train/**/*.test.ts', 'test/**/*.test.ts'] } });
