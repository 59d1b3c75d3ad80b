import { LatencyStats, type OperationReport } from './latency-stats.ts';

/** One live-session command the driver asked the cloud for. */
export interface CommandTicket {
  readonly key: string;
  readonly sentAt: number;
  /** The live session it is for, once known (a stop names it; a start learns it from the mutation's answer). */
  sessionId?: string;
  state: 'waiting' | 'delivered' | 'failed';
}

/**
 * Command delivery times: from the mutation being sent to the device's long-poll returning the command. A command is
 * expected by its box and type before the mutation goes out, because a parked long-poll can hand it to the device
 * before the mutation's answer (and the session id in it) is back. Every command sent ends as delivered, failed (the
 * mutation failed) or unfinished (not delivered when the run stopped).
 */
export class CommandLedger {
  private readonly stats = new LatencyStats();
  private readonly waiting = new Map<string, CommandTicket[]>();

  /** Call just before sending the mutation that makes the command. */
  sending(boxId: string, commandType: string, sentAt: number, sessionId?: string): CommandTicket {
    const ticket: CommandTicket = { key: `${boxId}:${commandType}`, sentAt, sessionId, state: 'waiting' };
    const queue = this.waiting.get(ticket.key) ?? [];
    queue.push(ticket);
    this.waiting.set(ticket.key, queue);
    this.stats.sent('command');
    return ticket;
  }

  /** The mutation failed: its command is not coming (unless it was already delivered, which then stands). */
  failed(ticket: CommandTicket, reason: string): void {
    if (ticket.state !== 'waiting') return;
    ticket.state = 'failed';
    this.forget(ticket);
    this.stats.fail('command', reason);
  }

  /** The mutation was answered with the command's session. */
  answered(ticket: CommandTicket, sessionId: string): void {
    ticket.sessionId ??= sessionId;
  }

  /**
   * A device received a command for the first time: the one sent for its session, or else the oldest one for its box
   * and type whose session is not known yet (its mutation's answer is still on the way).
   */
  delivered(boxId: string, commandType: string, sessionId: string, receivedAt: number): void {
    const queue = this.waiting.get(`${boxId}:${commandType}`) ?? [];
    const ticket = queue.find((each) => each.sessionId === sessionId) ?? queue.find((each) => each.sessionId === undefined);
    if (!ticket) return;
    ticket.state = 'delivered';
    this.forget(ticket);
    this.stats.record('command', receivedAt - ticket.sentAt);
  }

  report(): OperationReport {
    return this.stats.reportOf('command');
  }

  private forget(ticket: CommandTicket): void {
    const queue = (this.waiting.get(ticket.key) ?? []).filter((each) => each !== ticket);
    if (queue.length > 0) this.waiting.set(ticket.key, queue);
    else this.waiting.delete(ticket.key);
  }
}
