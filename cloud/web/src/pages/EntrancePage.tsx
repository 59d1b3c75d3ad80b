import { browserTimeZone, EntranceBoxQuery } from '../api/telemetry.ts';
import { ClipsSection } from '../components/entrance/ClipsSection.tsx';
import { HeatmapGallery } from '../components/entrance/HeatmapGallery.tsx';
import { LiveView } from '../components/entrance/LiveView.tsx';
import { Breadcrumbs, PageTitle } from '../components/Layout.tsx';
import { LoadFailed, Notice } from '../components/Notice.tsx';
import { useDocumentTitle, useQuery } from '../hooks.ts';
import { boxName, formatCount, formatRelative, hiveName } from '../lib/format.ts';
import { paths } from '../lib/routes.ts';
import { rangeParams } from '../lib/time-range.ts';
import { Link, useLocation } from '../router.tsx';

const REFRESH_MS = 30_000;

/** One entrance box: today's counts, the live view, daily heatmaps and stored clips. */
export function EntrancePage({ boxId }: { boxId: string }) {
  useDocumentTitle(boxName(boxId));
  const entrance = useQuery(EntranceBoxQuery, { boxId, timeZone: browserTimeZone() }, { pollMs: REFRESH_MS });
  const box = entrance.data?.box;
  const totals = box?.today;
  const hiveId = box?.hiveId ?? undefined;
  // The range chosen on the hive's page comes along (see rangeParams), and goes back with its links.
  const { search } = useLocation();
  const hiveHref = hiveId ? `${paths.hive(hiveId)}${rangeParams(search)}` : undefined;

  // Without this the page of an unknown id offered a live view, which then blamed the (nonexistent) camera.
  if (entrance.data && !box) {
    return (
      <>
        <Breadcrumbs items={[{ href: paths.overview(), label: 'Apiary' }, { label: boxName(boxId) }]} />
        <PageTitle>Entrance · box {boxId}</PageTitle>
        <Notice tone="warn" title="There is no such box in your apiary.">
          <p>
            A box appears once its camera reports, or once you make an API token for it on your profile.{' '}
            <Link href={paths.overview()}>Back to the apiary</Link>
          </p>
        </Notice>
      </>
    );
  }

  return (
    <>
      <Breadcrumbs
        items={[{ href: paths.overview(), label: 'Apiary' }, ...(hiveId && hiveHref ? [{ href: hiveHref, label: hiveName(hiveId) }] : []), { label: boxName(boxId) }]}
      />
      <div class="page-head">
        <PageTitle>Entrance · box {boxId}</PageTitle>
        {hiveHref && <Link href={hiveHref}>Traffic and climate charts</Link>}
      </div>
      {entrance.error && <LoadFailed title="Could not load this box's counts." message={entrance.error.message} onRetry={entrance.reload} />}
      {totals && (
        <section class="card today-strip" aria-label="Entrance traffic today">
          <dl class="traffic-today large">
            <div>
              <dt>In today</dt>
              <dd class="value-in">{formatCount(totals.beesIn)}</dd>
            </div>
            <div>
              <dt>Out today</dt>
              <dd class="value-out">{formatCount(totals.beesOut)}</dd>
            </div>
            <div>
              <dt>Net</dt>
              <dd class="value-net">{formatCount(totals.netFlow, true)}</dd>
            </div>
          </dl>
          <p class="muted small">{totals.lastSampleAt ? `Last count ${formatRelative(totals.lastSampleAt)}` : 'No counts yet today'}</p>
        </section>
      )}
      <div class="entrance-grid">
        <LiveView boxId={boxId} />
        <HeatmapGallery boxId={boxId} />
      </div>
      <ClipsSection boxId={boxId} />
    </>
  );
}
