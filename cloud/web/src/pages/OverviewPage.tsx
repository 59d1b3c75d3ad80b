import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ApiaryQuery, browserTimeZone, type DeviceState, type OverviewBox, type OverviewHive } from '../api/telemetry.ts';
import { PageTitle } from '../components/Layout.tsx';
import { LoadFailed, Loading } from '../components/Notice.tsx';
import { useDocumentTitle, useQuery } from '../hooks.ts';
import { LatestReadings } from '../components/LatestReadings.tsx';
import { boxName, formatCount, formatRelative, hiveName } from '../lib/format.ts';
import { paths } from '../lib/routes.ts';
import { Link } from '../router.tsx';

const REFRESH_MS = 30_000;

function DeviceBadge({ device, counting }: { device: DeviceState | null; counting: boolean }) {
  if (device === null) {
    // Counts come in over telemetry; the device link (status, live video) is separate, and an agent without live
    // video, or another counter, never opens it. "Not seen" beside today's counts would read as a contradiction.
    return counting ? (
      <span class="badge badge-muted" title="Counts arrive from this entrance, but its camera has not connected for live video">
        No live video link
      </span>
    ) : (
      <span class="badge badge-muted">Camera not seen yet</span>
    );
  }
  return device.online ? (
    <span class="badge badge-ok">Camera online</span>
  ) : (
    <span class="badge badge-warn">Camera offline · seen {formatRelative(device.lastSeenAt)}</span>
  );
}

/** A box's link to its page, with its badges beside it. */
function BoxRowHead({ boxId, children }: { boxId: string; children: ComponentChildren }) {
  return (
    <div class="box-row-head">
      <Link href={paths.box(boxId)} class="box-link">
        {boxName(boxId)}
      </Link>
      {children}
    </div>
  );
}

function BoxRow({ box }: { box: OverviewBox }) {
  const { today } = box;
  return (
    <li class="box-row">
      <BoxRowHead boxId={box.id}>
        <DeviceBadge device={box.device} counting={today.lastSampleAt !== null} />
      </BoxRowHead>
      <dl class="traffic-today" aria-label={`${boxName(box.id)} entrance traffic today`}>
        <div>
          <dt>In</dt>
          <dd class="value-in">{formatCount(today.beesIn)}</dd>
        </div>
        <div>
          <dt>Out</dt>
          <dd class="value-out">{formatCount(today.beesOut)}</dd>
        </div>
        <div>
          <dt>Net</dt>
          <dd class="value-net">{formatCount(today.netFlow, true)}</dd>
        </div>
      </dl>
      <p class="muted small">{today.lastSampleAt ? `Last count ${formatRelative(today.lastSampleAt)}` : 'No counts today'}</p>
    </li>
  );
}

function HiveCard({ hive }: { hive: OverviewHive }) {
  const reading = hive.lastReading;
  // Not made of the id: one with a space ("Hive 3/Nord") split aria-labelledby into two names of nothing.
  const headingId = useId();
  return (
    <article class="card hive-card" aria-labelledby={headingId}>
      <h2 id={headingId} class="hive-title">
        <Link href={paths.hive(hive.id)}>{hiveName(hive.id)}</Link>
      </h2>
      {reading ? (
        <LatestReadings reading={reading} />
      ) : (
        <p class="muted">No sensor readings yet.</p>
      )}
      {hive.boxes.length > 0 && (
        <>
          <h3 class="boxes-title">Entrance today</h3>
          <ul class="box-list">
            {hive.boxes.map((box) => (
              <BoxRow key={box.id} box={box} />
            ))}
          </ul>
        </>
      )}
    </article>
  );
}

/** A box of no hive that has not counted: its camera connected, or only its token, clips or heatmaps known. */
function AwaitingBoxRow({ box }: { box: OverviewBox }) {
  return (
    <li class="box-row">
      <BoxRowHead boxId={box.id}>
        <span class="badge badge-muted">Waiting for first counts</span>
        {box.device && <DeviceBadge device={box.device} counting={false} />}
      </BoxRowHead>
      <p class="muted small">
        {box.device ? 'Its camera has connected and has not sent counts yet.' : 'Its camera has not connected or sent counts yet.'}
      </p>
    </li>
  );
}

/** Boxes that belong to no hive yet: counted without a hive, or not counting yet. Nothing else on the apiary leads to them. */
function BoxesInNoHive({ counted, awaiting }: { counted: OverviewBox[]; awaiting: OverviewBox[] }) {
  if (counted.length === 0 && awaiting.length === 0) return null;
  return (
    <section class="section" aria-labelledby="no-hive-heading">
      <h2 id="no-hive-heading">Boxes not yet in a hive</h2>
      <p class="muted">A box joins its hive here once its camera sends counts that name the hive.</p>
      <ul class="box-list card">
        {counted.map((box) => (
          <BoxRow key={box.id} box={box} />
        ))}
        {awaiting.map((box) => (
          <AwaitingBoxRow key={box.id} box={box} />
        ))}
      </ul>
    </section>
  );
}

function EmptyApiary() {
  return (
    <div class="card empty-state">
      <h2>No hives yet</h2>
      <p>Hives appear here as soon as a scale, sensor or entrance camera sends its first reading.</p>
      <ol>
        <li>
          Create an API token on your <Link href={paths.profile()}>profile</Link>.
        </li>
        <li>
          Give it to your device, or try it: <code>POST /iot/v1/metrics</code> with <code>Authorization: Bearer &lt;token&gt;</code> and a body such as{' '}
          <code>{'{"hiveId":"1","fields":{"temperatureCelsius":34.5}}'}</code>.
        </li>
      </ol>
    </div>
  );
}

/** Every hive with its last readings and each entrance box's traffic today, re-read every 30 s. */
export function OverviewPage() {
  useDocumentTitle('Apiary');
  const apiary = useQuery(ApiaryQuery, { timeZone: browserTimeZone() }, { pollMs: REFRESH_MS });
  const hives = apiary.data?.hives;
  const inNoHive = apiary.data && { counted: apiary.data.boxes.filter((box) => box.hiveId === null), awaiting: apiary.data.boxesAwaitingCounts };

  return (
    <>
      <div class="page-head">
        <PageTitle>Apiary</PageTitle>
        {hives && hives.length > 0 && (
          <p class="muted">
            {hives.length} {hives.length === 1 ? 'hive' : 'hives'} · updates every 30 seconds
          </p>
        )}
      </div>
      {apiary.error && <LoadFailed title="Could not load your apiary." message={apiary.error.message} onRetry={apiary.reload} />}
      {!hives ? (
        apiary.loading && <Loading label="Loading your apiary…" />
      ) : hives.length === 0 ? (
        <EmptyApiary />
      ) : (
        <ul class="hive-grid" aria-label="Hives">
          {hives.map((hive) => (
            <li key={hive.id}>
              <HiveCard hive={hive} />
            </li>
          ))}
        </ul>
      )}
      {inNoHive && <BoxesInNoHive {...inNoHive} />}
    </>
  );
}
