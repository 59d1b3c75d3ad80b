import type { EntranceMovementInput } from '@hivegate/shared';

/** The per-interval fields whose error the accuracy benchmark reports (counts have their own measure). */
export const INTERVAL_FIELDS = ['avgSpeed', 'p95Speed', 'stationaryBees', 'beeInteractions', 'detectedBees'] as const;
export type IntervalField = (typeof INTERVAL_FIELDS)[number];

export interface FieldError {
  /** Intervals where both sides have the field. */
  intervals: number;
  meanTruth: number;
  meanAgent: number;
  /** Mean of |agent − truth| over those intervals. */
  meanAbsError: number;
}

export interface IntervalComparison {
  truthIn: number;
  truthOut: number;
  agentIn: number;
  agentOut: number;
  /** (|Δin| + |Δout|) / (true in + true out) over the whole clip; 0 when both saw no traffic. */
  countError: number;
  /** Intervals of the truth the agent sent no record for. */
  missingIntervals: number;
  fields: Record<IntervalField, FieldError>;
}

/**
 * Compares the movement records an agent produced with the ground truth's, interval by interval (matched on
 * the interval's end timestamp). An interval the agent never sent counts as zero traffic and contributes no
 * field values.
 */
export function compareIntervals(truth: readonly EntranceMovementInput[], agent: readonly EntranceMovementInput[]): IntervalComparison {
  const byTimestamp = new Map<number, EntranceMovementInput>();
  for (const record of agent) {
    const at = stamp(record, 'agent');
    if (byTimestamp.has(at)) throw new Error(`the agent sent two records for the interval ending at ${at}`);
    byTimestamp.set(at, record);
  }
  const sum = (records: readonly EntranceMovementInput[], key: 'beesIn' | 'beesOut') => records.reduce((n, r) => n + r[key], 0);
  const truthIn = sum(truth, 'beesIn');
  const truthOut = sum(truth, 'beesOut');
  const agentIn = sum(agent, 'beesIn');
  const agentOut = sum(agent, 'beesOut');
  const wrong = Math.abs(agentIn - truthIn) + Math.abs(agentOut - truthOut);
  const traffic = truthIn + truthOut;

  const fields = {} as Record<IntervalField, FieldError>;
  for (const field of INTERVAL_FIELDS) {
    let n = 0;
    let truthSum = 0;
    let agentSum = 0;
    let errorSum = 0;
    for (const expected of truth) {
      const got = byTimestamp.get(stamp(expected, 'truth'));
      const a = got?.[field];
      const t = expected[field];
      if (a === undefined || t === undefined) continue;
      n++;
      truthSum += t;
      agentSum += a;
      errorSum += Math.abs(a - t);
    }
    fields[field] = { intervals: n, meanTruth: n ? truthSum / n : 0, meanAgent: n ? agentSum / n : 0, meanAbsError: n ? errorSum / n : 0 };
  }
  return {
    truthIn,
    truthOut,
    agentIn,
    agentOut,
    countError: traffic > 0 ? wrong / traffic : wrong > 0 ? Infinity : 0,
    missingIntervals: truth.filter((t) => !byTimestamp.has(stamp(t, 'truth'))).length,
    fields,
  };
}

function stamp(record: EntranceMovementInput, side: string): number {
  if (record.timestamp === undefined) throw new Error(`a ${side} record has no timestamp: intervals are matched on it`);
  return record.timestamp;
}
