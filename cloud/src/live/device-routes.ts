import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  ErrorResponse,
  LIVE_POLL_DEFAULT_LIMIT,
  LiveCommandAckBody,
  LiveCommandAckResponse,
  LiveDeviceEventBody,
  LiveDeviceEventResponse,
  LiveDevicePollBody,
  LiveDevicePollResponse,
  LiveDeviceStatusBody,
  LiveDeviceStatusResponse,
} from '@hivegate/shared';
import { assertBoxAllowed, requireScope } from '../auth/request-auth.ts';
import type { AppContext } from '../context.ts';
import { pickStatusFields } from './devices-repository.ts';

const errorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 413: ErrorResponse, 500: ErrorResponse };
const BODY_LIMIT = 64 * 1024;

/** The origin the caller reached us at (or the configured public URL): the device publishes to the same place. */
export function originOf(ctx: AppContext, request: FastifyRequest): string {
  return ctx.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** The entrance observer's side of the live gateway: heartbeat/status, command long-poll, command acks, lifecycle events. */
export async function liveDeviceRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const device = requireScope(ctx.tokens, 'device');
  const live = ctx.live;
  // Waiting polls answer (with no commands) as soon as shutdown begins instead of holding it up.
  app.addHook('preClose', async () => live.signals.stop());
  const route = (summary: string, body: unknown, response: unknown) => ({
    onRequest: device,
    bodyLimit: BODY_LIMIT,
    schema: { summary, tags: ['live device'], security: [{ bearer: [] }], body, response: { 200: response, ...errorResponses } },
  });

  app.post('/api/entrance-live/device/status', route('Device heartbeat and status', LiveDeviceStatusBody, LiveDeviceStatusResponse), async (request) => {
    const body = request.body as LiveDeviceStatusBody;
    const boxId = String(body.boxId);
    assertBoxAllowed(request.principal!, boxId);
    const ownerId = request.principal!.userId;
    await live.recordDeviceSighting(ownerId, boxId, pickStatusFields(body), true);
    return { message: 'OK', serverTime: new Date().toISOString(), pendingCommands: await live.pendingCommandCount(ownerId, boxId) };
  });

  app.post(
    '/api/entrance-live/device/poll',
    route('Fetch pending START_STREAM / STOP_STREAM commands (long-poll with waitSeconds); also a heartbeat', LiveDevicePollBody, LiveDevicePollResponse),
    async (request, reply) => {
      const body = request.body as LiveDevicePollBody;
      const boxId = String(body.boxId);
      assertBoxAllowed(request.principal!, boxId);
      const ownerId = request.principal!.userId;
      await live.recordDeviceSighting(ownerId, boxId, pickStatusFields(body), true);
      // A device that hangs up stops waiting here too.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      const commands = await live.pollCommands(ownerId, boxId, body.limit ?? LIVE_POLL_DEFAULT_LIMIT, Math.round((body.waitSeconds ?? 0) * 1000), gone.signal);
      const origin = originOf(ctx, request);
      return { commands: commands.map((c) => live.commandForDevice(c, origin)) };
    },
  );

  app.post('/api/entrance-live/device/command-ack', route('Acknowledge a command (idempotent)', LiveCommandAckBody, LiveCommandAckResponse), async (request) => {
    const body = request.body as LiveCommandAckBody;
    const boxId = String(body.boxId);
    assertBoxAllowed(request.principal!, boxId);
    const outcome = await live.acknowledgeCommand(request.principal!.userId, boxId, String(body.commandId), body.status, body.payload);
    return { message: 'OK', ...outcome };
  });

  app.post('/api/entrance-live/device/event', route('Report a lifecycle event (DEVICE_ONLINE, STREAM_*)', LiveDeviceEventBody, LiveDeviceEventResponse), async (request) => {
    const body = request.body as LiveDeviceEventBody;
    const boxId = String(body.boxId);
    assertBoxAllowed(request.principal!, boxId);
    const outcome = await live.reportEvent(request.principal!.userId, boxId, body);
    return { message: 'OK', ...outcome };
  });
}
