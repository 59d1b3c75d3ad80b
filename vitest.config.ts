import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    passWithNoTests: true,
    projects: ['shared', 'cloud', 'agent', 'simulator'],
  },
});
