import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['shared', 'cloud', 'agent', 'simulator'],
  },
});
