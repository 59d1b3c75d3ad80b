export * from './common.ts';
export * from './telemetry.ts';
export * from './auth.ts';
export * from './validate.ts';
export * from './entrance/index.ts';
export * from './heatmaps.ts';
export * from './live.ts';
