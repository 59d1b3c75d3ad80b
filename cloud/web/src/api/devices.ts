/**
 * Whether each box's entrance camera is online. The live gateway brings this; until a server has it, the query
 * fails with "Cannot query field" and the overview simply shows no online state.
 */
import { defineOperation } from './graphql.ts';

export interface DeviceState {
  online: boolean;
  lastSeenAt: string | null;
}

export const BoxDevicesQuery = defineOperation<{ boxes: { id: string; device: DeviceState | null }[] }>(
  `query BoxDevices { boxes { id device { online lastSeenAt } } }`,
);
