import { useId, useMemo, useState } from 'preact/hooks';
import { browserTimeZone, EntranceMovementQuery, HiveMetricsQuery, HiveQuery, type ApiaryHive, type LatestReading } from '../api/telemetry.ts';
import { LineChart } from '../components/charts/LineChart.tsx';
import { TrafficChart } from '../components/charts/TrafficChart.tsx';
import { LatestReadings } from '../components/LatestReadings.tsx';
import { Breadcrumbs, PageTitle } from '../components/Layout.tsx';
import { LoadFailed, Loading, Notice } from '../components/Notice.tsx';
import { RangePicker } from '../components/RangePicker.tsx';
import { useDocumentTitle, useInterval, useQuery } from '../hooks.ts';
import { bucketWidthName } from '../lib/bucket-labels.ts';
import { formatDateTime, formatRelative, hiveName, localTimeZone } from '../lib/format.ts';
import { paths } from '../lib/routes.ts';
import { rangeFromQuery, rangeParams, rangeToQuery, trafficBucketSeconds, type TimeRange } from '../lib/time-range.ts';
import { Link, navigate, useLocation } from '../router.tsx';

/** A preset range ("last 24 h") moves along with the clock. */
const PRESET_REFRESH_MS = 60_000;

/** Lines break across gaps of more than three reporting intervals, measured from the data itself. */
function gapThreshold(times: number[]): number {
  let smallest = Infinity;
  for (let i = 1; i < times.length; i++) smallest = Math.min(smallest, times[i]! - times[i - 1]!);
  return Number.isFinite(smallest) ? smallest * 3 : Infinity;
}

/**
 * What a chart's data shows, for keeping it when a re-read fails: a preset window is the same one a minute later
 * (it moves with the clock); a custom range is its bounds. Data of another range is not shown under a new one.
 */
function rangeDataKey(id: string, range: TimeRange): string {
  return JSON.stringify([id, range.preset === 'custom' ? [range.from.getTime(), range.to.getTime()] : range.preset]);
}

/** ["humidity", "weight"] → "humidity or weight". */
const MISSING_LIST = new Intl.ListFormat('en', { type: 'disjunction' });

/** The three readings a hive's sensors send, in the order they are charted. */
const CLIMATE_SERIES = [
  { key: 'temperatureCelsius', title: 'Temperature', unit: '°C', decimals: 1, className: 'series-temp' },
  { key: 'humidityPercent', title: 'Humidity', unit: '%', decimals: 0, className: 'series-humidity' },
  { key: 'weightKg', title: 'Weight', unit: 'kg', decimals: 2, className: 'series-weight' },
] as const;

/**
 * The hive's readings over the range: a chart for each kind it sent, and one line for what it did not send, where
 * three empty charts used to lead the page of a hive that has no sensor, or no scale.
 */
function ClimateCharts({ hiveId, range, lastReading }: { hiveId: string; range: TimeRange; lastReading: LatestReading | null }) {
  const metrics = useQuery(HiveMetricsQuery, { hiveId, from: range.from.toISOString(), to: range.to.toISOString(), bucketSeconds: null, timeZone: browserTimeZone() }, { dataKey: rangeDataKey(hiveId, range) });
  const buckets = metrics.data?.hiveMetrics ?? [];
  const times = buckets.map((b) => Date.parse(b.time));
  const gap = gapThreshold(times);
  const common = { times, from: range.from.getTime(), to: range.to.getTime(), maxGapMs: gap };
  const sent = CLIMATE_SERIES.filter((series) => buckets.some((b) => b[series.key] !== null));
  const missing = CLIMATE_SERIES.filter((series) => !sent.includes(series)).map((series) => series.title.toLowerCase());
  return (
    <section aria-labelledby="climate-heading" class="section" aria-busy={metrics.loading}>
      <h2 id="climate-heading">Climate and weight</h2>
      {lastReading && <LatestReadings reading={lastReading} />}
      {metrics.error && <LoadFailed title="Could not load the readings." message={metrics.error.message} onRetry={metrics.reload} />}
      {!metrics.data ? (
        metrics.loading && <Loading label="Loading readings…" />
      ) : sent.length === 0 ? (
        <p class="muted">
          {lastReading
            ? `No temperature, humidity or weight readings in this range; the last came ${formatRelative(lastReading.time)}.`
            : 'This hive has sent no temperature, humidity or weight readings. They appear here once a scale or sensor reports for it.'}
        </p>
      ) : (
        <>
          <div class="chart-grid">
            {sent.map((series) => (
              <LineChart
                key={series.key}
                title={series.title}
                unit={series.unit}
                decimals={series.decimals}
                series={[{ key: series.key, label: series.title, className: series.className }]}
                values={{ [series.key]: buckets.map((b) => b[series.key]) }}
                {...common}
              />
            ))}
          </div>
          {missing.length > 0 && <p class="muted small">No {MISSING_LIST.format(missing)} readings in this range.</p>}
        </>
      )}
    </section>
  );
}

function BoxTraffic({ boxId, range, rangeQuery }: { boxId: string; range: TimeRange; rangeQuery: string }) {
  const bucketSeconds = trafficBucketSeconds(range.from, range.to);
  const movement = useQuery(EntranceMovementQuery, { boxId, from: range.from.toISOString(), to: range.to.toISOString(), bucketSeconds, timeZone: browserTimeZone() }, { dataKey: rangeDataKey(boxId, range) });
  const buckets = movement.data?.entranceMovement ?? [];
  const times = buckets.map((b) => Date.parse(b.time));
  // Not made of the id, which may hold a space (aria-labelledby would split it).
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} class="section" aria-busy={movement.loading}>
      <div class="section-head">
        <h2 id={headingId}>Entrance · box {boxId}</h2>
        <Link href={`${paths.box(boxId)}${rangeQuery}`}>Live view, heatmaps and clips</Link>
      </div>
      {movement.error && <LoadFailed title="Could not load the entrance traffic." message={movement.error.message} onRetry={movement.reload} />}
      {!movement.data ? (
        movement.loading && <Loading label="Loading entrance traffic…" />
      ) : (
        <div class="chart-grid two">
          <TrafficChart
            title={`Traffic per ${bucketWidthName(bucketSeconds)}`}
            times={times}
            beesIn={buckets.map((b) => b.beesIn)}
            beesOut={buckets.map((b) => b.beesOut)}
            netFlow={buckets.map((b) => b.netFlow)}
            bucketMs={bucketSeconds * 1000}
            from={range.from.getTime()}
            to={range.to.getTime()}
          />
          <LineChart
            title="Bee speed"
            unit="px/frame"
            // The server weights each record's speeds by the bees it saw, so a busy minute counts for more than a
            // quiet one; the p95 is the speed one measured speed in twenty exceeded.
            series={[
              { key: 'avg', label: 'Average of all bees', className: 'series-speed' },
              { key: 'p95', label: '95th percentile (1 in 20 faster)', className: 'series-speed-p95', dashed: true },
            ]}
            times={times}
            values={{ avg: buckets.map((b) => b.avgSpeed), p95: buckets.map((b) => b.p95Speed) }}
            from={range.from.getTime()}
            to={range.to.getTime()}
            maxGapMs={bucketSeconds * 1000 * 1.5}
            fromZero
          />
        </div>
      )}
    </section>
  );
}

/** A hive that never sent a reading (an entrance camera alone) leads with its entrances, not with a note on its sensors. */
function HiveSections({ hive, range, rangeQuery }: { hive: ApiaryHive; range: TimeRange; rangeQuery: string }) {
  const climate = <ClimateCharts hiveId={hive.id} range={range} lastReading={hive.lastReading} />;
  const traffic = hive.boxes.map((box) => <BoxTraffic key={box.id} boxId={box.id} range={range} rangeQuery={rangeQuery} />);
  return hive.lastReading ? (
    <>
      {climate}
      {traffic}
    </>
  ) : (
    <>
      {traffic}
      {climate}
    </>
  );
}

/** One hive over a chosen range: temperature, humidity and weight, and each entrance box's traffic and speed. */
export function HivePage({ hiveId }: { hiveId: string }) {
  useDocumentTitle(hiveName(hiveId));
  const { pathname, search } = useLocation();
  const [now, setNow] = useState(() => Date.now());
  const range = useMemo(() => rangeFromQuery(search, new Date(now)), [search, now]);
  useInterval(() => setNow(Date.now()), PRESET_REFRESH_MS, range.preset !== 'custom');
  const hive = useQuery(HiveQuery, { hiveId, timeZone: browserTimeZone() });

  if (hive.data && !hive.data.hive) {
    return (
      <>
        <Breadcrumbs items={[{ href: paths.overview(), label: 'Apiary' }, { label: hiveName(hiveId) }]} />
        <PageTitle>{hiveName(hiveId)}</PageTitle>
        <Notice tone="warn" title="There is no such hive in your apiary.">
          <p>
            Hives appear once a device reports for them. <Link href={paths.overview()}>Back to the apiary</Link>
          </p>
        </Notice>
      </>
    );
  }

  return (
    <>
      <Breadcrumbs items={[{ href: paths.overview(), label: 'Apiary' }, { label: hiveName(hiveId) }]} />
      <div class="page-head">
        <PageTitle>{hiveName(hiveId)}</PageTitle>
        <p class="muted">
          {formatDateTime(range.from)} – {formatDateTime(range.to)} <span class="small">({localTimeZone()} time)</span>
        </p>
      </div>
      <RangePicker range={range} onChange={(next) => navigate(`${pathname}${rangeToQuery(next)}`, { replace: true })} />
      {hive.error && <LoadFailed title="Could not load this hive." message={hive.error.message} onRetry={hive.reload} />}
      {hive.loading && !hive.data ? (
        <Loading />
      ) : (
        hive.data?.hive && <HiveSections hive={hive.data.hive} range={range} rangeQuery={rangeParams(search)} />
      )}
    </>
  );
}
