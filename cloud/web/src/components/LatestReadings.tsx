import type { LatestReading } from '../api/telemetry.ts';
import { formatNumber, formatRelative } from '../lib/format.ts';
import { ageWhenOlder } from '../lib/reading-age.ts';

const FIELDS = [
  { label: 'Temperature', value: 'temperatureCelsius', at: 'temperatureCelsiusAt', decimals: 1, unit: '°C' },
  { label: 'Humidity', value: 'humidityPercent', at: 'humidityPercentAt', decimals: 0, unit: '%' },
  { label: 'Weight', value: 'weightKg', at: 'weightKgAt', decimals: 2, unit: 'kg' },
] as const;

/**
 * A hive's newest value of each field with its unit, and its age where it is older than the newest reading: a scale
 * posting every 15 min beside a climate sensor posting every minute. A missing value is a dash alone ("— °C" put a
 * unit to no value), read as "none".
 */
export function LatestReadings({ reading, now = Date.now() }: { reading: LatestReading; now?: number }) {
  return (
    <>
      <dl class="readings">
        {FIELDS.map((field) => {
          const value = reading[field.value];
          const age = ageWhenOlder(reading[field.at], reading.time, now);
          return (
            <div key={field.value}>
              <dt>{field.label}</dt>
              <dd>
                {value === null ? (
                  <span aria-label="none">—</span>
                ) : (
                  <>
                    {formatNumber(value, field.decimals)} <span class="unit">{field.unit}</span>
                  </>
                )}
              </dd>
              {age && <dd class="reading-age">{age}</dd>}
            </div>
          );
        })}
      </dl>
      <p class="muted small">Last reading {formatRelative(reading.time, now)}</p>
    </>
  );
}
