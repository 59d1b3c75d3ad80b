import { useId, useState } from 'preact/hooks';
import { EntranceHeatmapsQuery, HEATMAP_LIST_LIMIT, type EntranceHeatmap } from '../../api/heatmaps.ts';
import { useQuery } from '../../hooks.ts';
import { formatCount, formatRelative, formatUtcDay } from '../../lib/format.ts';
import { utcDateString } from '../../lib/time-range.ts';
import { Loading, Notice, Unavailable } from '../Notice.tsx';

const REFRESH_MS = 60_000;

function altText(heatmap: EntranceHeatmap): string {
  const trajectories = heatmap.trajectoryCount === null ? '' : `, ${formatCount(heatmap.trajectoryCount)} bee trajectories`;
  return `Heatmap of bee movement at box ${heatmap.boxId} on ${formatUtcDay(heatmap.date)}${trajectories}`;
}

/** The recent days' heatmaps as a gallery, one shown large; a date picker jumps to a given (UTC) day. */
export function HeatmapGallery({ boxId }: { boxId: string }) {
  const [day, setDay] = useState('');
  const [selectedId, setSelectedId] = useState<string | undefined>();
  const id = useId();
  const heatmaps = useQuery(EntranceHeatmapsQuery, { boxIds: [boxId], date: day || null, limit: day ? 1 : HEATMAP_LIST_LIMIT }, { pollMs: REFRESH_MS });
  const list = (heatmaps.data?.entranceHeatmaps ?? []).filter((h): h is EntranceHeatmap => h !== null);
  const selected = list.find((h) => h.id === selectedId) ?? list[0];

  return (
    <section class="card heatmap-card" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Daily heatmaps</h2>
      {heatmaps.unavailable ? (
        <Unavailable feature="heatmaps" missing={heatmaps.unavailable} />
      ) : (
        <>
          <p class="muted">Where bees moved at the entrance, one picture per day (UTC). Brighter means more bees passed.</p>
          <div class="inline-form">
            <label>
              Day
              <input type="date" value={day} max={utcDateString()} onChange={(e) => setDay(e.currentTarget.value)} />
            </label>
            {day && (
              <button type="button" class="button" onClick={() => setDay('')}>
                Show recent days
              </button>
            )}
          </div>
          {heatmaps.error && <Notice tone="error">{heatmaps.error.message}</Notice>}
          {heatmaps.loading && !heatmaps.data ? (
            <Loading label="Loading heatmaps…" />
          ) : list.length === 0 ? (
            <p class="empty">{day ? `No heatmap for ${formatUtcDay(day)}.` : 'No heatmaps yet: they appear once the entrance camera uploads bee trajectories.'}</p>
          ) : (
            <>
              {selected && (
                <figure class="heatmap-main">
                  <img src={selected.imageURL} alt={altText(selected)} width={selected.width ?? undefined} height={selected.height ?? undefined} />
                  <figcaption>
                    <strong>{formatUtcDay(selected.date)}</strong>
                    {selected.trajectoryCount !== null && <span> · {formatCount(selected.trajectoryCount)} trajectories</span>}
                    {selected.pointCount !== null && <span> · {formatCount(selected.pointCount)} points</span>}
                    {selected.maxCount !== null && <span> · busiest spot {formatCount(selected.maxCount)} passes</span>}
                    {selected.updatedAt && <span class="muted"> · updated {formatRelative(selected.updatedAt)}</span>}
                  </figcaption>
                </figure>
              )}
              {list.length > 1 && (
                <ul class="heatmap-grid" aria-label="Recent days">
                  {list.map((heatmap) => (
                    <li key={heatmap.id}>
                      <button type="button" class="thumb" aria-pressed={heatmap.id === selected?.id} onClick={() => setSelectedId(heatmap.id)}>
                        <img src={heatmap.imageURL} alt="" loading="lazy" width={heatmap.width ?? undefined} height={heatmap.height ?? undefined} />
                        <span>{formatUtcDay(heatmap.date)}</span>
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </>
      )}
    </section>
  );
}
