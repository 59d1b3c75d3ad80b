export * from './geometry.ts';
export * from './counting.ts';
