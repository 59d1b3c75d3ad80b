import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { EntranceHeatmapsQuery, HEATMAP_LIST_LIMIT, heatmapPollMs, type EntranceHeatmap } from '../../api/heatmaps.ts';
import { useQuery } from '../../hooks.ts';
import { formatCount, formatCountOf, formatRelative, formatUtcDay } from '../../lib/format.ts';
import { HEATMAP_GRADIENT, heatmapScaleTicks } from '../../lib/heatmap-scale.ts';
import { utcDateString } from '../../lib/time-range.ts';
import { LoadFailed, Loading } from '../Notice.tsx';

function altText(heatmap: EntranceHeatmap): string {
  return `Heatmap of bee movement at box ${heatmap.boxId} on ${formatUtcDay(heatmap.date)}, ${formatCountOf(heatmap.trajectoryCount, 'bee trajectory', 'bee trajectories')}`;
}

/** The picture of a day, or a placeholder of its size while the server has not drawn it yet (it renders shortly after uploads). */
function HeatmapImage({ heatmap, thumbnail = false }: { heatmap: EntranceHeatmap; thumbnail?: boolean }) {
  const aspectRatio = `${heatmap.width} / ${heatmap.height}`;
  if (heatmap.imageURL === null) {
    return thumbnail ? (
      <span class="heatmap-pending" style={{ aspectRatio }} aria-hidden="true" />
    ) : (
      <div class="heatmap-pending" style={{ aspectRatio }}>
        <Loading label="Drawing this day's heatmap…" />
      </div>
    );
  }
  return <img src={heatmap.imageURL} alt={thumbnail ? '' : altText(heatmap)} loading={thumbnail ? 'lazy' : undefined} width={heatmap.width} height={heatmap.height} />;
}

/**
 * What the colours of a day's picture mean: how often a bee was seen at a spot (each tracked position, and each spot
 * its path crossed between two), from once to the busiest spot's count, on a log scale. A bee standing still is seen
 * at every frame: "passes" said otherwise, and its bright dot looked like the busiest lane.
 */
function HeatmapScale({ maxCount }: { maxCount: number }) {
  const ticks = heatmapScaleTicks(maxCount);
  if (ticks.length === 0) return null;
  const top = formatCountOf(maxCount, 'sighting');
  return (
    <div class="heatmap-scale">
      <div
        class="heatmap-scale-bar"
        style={{ backgroundImage: HEATMAP_GRADIENT }}
        role="img"
        aria-label={`Colour scale: dark purple for a spot a bee was seen at once, to pale yellow for the busiest spot, ${top}`}
      />
      <div class="heatmap-scale-ticks" aria-hidden="true">
        {ticks.map((tick) => (
          <span key={tick.count} style={{ left: `${(tick.position * 100).toFixed(2)}%` }}>
            {formatCount(tick.count)}
          </span>
        ))}
      </div>
      <p class="muted small">
        How often bees were seen at each spot, on a log scale (each label is ten times the one before); a bee standing still is seen at every frame. No colour, no bee.
      </p>
    </div>
  );
}

type EntranceHeatmapOrNone = EntranceHeatmap | undefined | null;

/**
 * What a screen reader is told once a chosen day (or thumbnail) has been read: nothing came of picking a date, as the
 * answer ("No heatmap for …", or the day shown) appeared without a word. `shown` is the heatmap shown, undefined for
 * none, null before any answer. The text stays while the list is re-read, so a poll does not say it again. Only a
 * read of the chosen day that succeeded answers it: the list of the day before, still held as the new day's read
 * began (or failed), said "No heatmap for" a day that could not be read.
 */
function useChoiceAnnouncement(day: string, selectedId: string | undefined, loading: boolean, failed: boolean, shown: EntranceHeatmapOrNone): string {
  const [announcement, setAnnouncement] = useState('');
  const [answeredDay, setAnsweredDay] = useState<string | undefined>(undefined);
  const wasLoading = useRef(false);
  useEffect(() => {
    if (wasLoading.current && !loading && !failed) setAnsweredDay(day);
    if (failed) setAnsweredDay(undefined);
    wasLoading.current = loading;
  }, [loading, failed, day]);
  const chosen = day !== '' || selectedId !== undefined;
  const text =
    !chosen || shown === null || answeredDay !== day ? ''
    : shown === undefined ? (day ? `No heatmap for ${formatUtcDay(day)}.` : '')
    : `Showing ${formatUtcDay(shown.date)} (UTC day): ${formatCountOf(shown.trajectoryCount, 'trajectory', 'trajectories')}.`;
  useEffect(() => {
    if (!loading || !chosen) setAnnouncement(text);
  }, [loading, chosen, text]);
  return announcement;
}

/** The recent days' heatmaps as a gallery, one shown large; a date picker jumps to a given (UTC) day. */
export function HeatmapGallery({ boxId }: { boxId: string }) {
  const [day, setDay] = useState('');
  const [selectedId, setSelectedId] = useState<string | undefined>();
  const id = useId();
  const heatmaps = useQuery(
    EntranceHeatmapsQuery,
    { boxIds: [boxId], date: day || null, limit: day ? 1 : HEATMAP_LIST_LIMIT },
    { pollMs: (data) => heatmapPollMs(data.entranceHeatmaps) },
  );
  const list = (heatmaps.data?.entranceHeatmaps ?? []).filter((h): h is EntranceHeatmap => h !== null);
  const selected = list.find((h) => h.id === selectedId) ?? list[0];
  const announcement = useChoiceAnnouncement(day, selectedId, heatmaps.loading, heatmaps.error !== undefined, heatmaps.data ? (list.length === 0 ? undefined : selected) : null);

  return (
    <section class="card heatmap-card" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Daily heatmaps</h2>
      <p class="muted">Where bees moved at the entrance, one picture per UTC day, from midnight to midnight UTC.</p>
      <div class="inline-form">
        <label>
          Day (UTC)
          <input type="date" value={day} max={utcDateString()} onChange={(e) => setDay(e.currentTarget.value)} />
        </label>
        {day && (
          <button type="button" class="button" onClick={() => setDay('')}>
            Show recent days
          </button>
        )}
      </div>
      <p class="visually-hidden" role="status">
        {announcement}
      </p>
      {heatmaps.error && <LoadFailed title="Could not load the heatmaps." message={heatmaps.error.message} onRetry={heatmaps.reload} />}
      {!heatmaps.data ? (
        heatmaps.loading && <Loading label="Loading heatmaps…" />
      ) : list.length === 0 ? (
        <p class="empty">{day ? `No heatmap for ${formatUtcDay(day)}.` : 'No heatmaps yet: they appear once the entrance camera uploads bee trajectories.'}</p>
      ) : (
        <>
          {selected && (
            <figure class="heatmap-main">
              <HeatmapImage heatmap={selected} />
              <figcaption>
                <strong>{formatUtcDay(selected.date)}</strong> <span class="muted">(UTC day)</span>
                <span> · {formatCountOf(selected.trajectoryCount, 'trajectory', 'trajectories')}</span>
                <span> · {formatCountOf(selected.pointCount, 'point')}</span>
                <span> · busiest spot {formatCountOf(selected.maxCount, 'sighting')}</span>
                <span class="muted"> · updated {formatRelative(selected.updatedAt)}</span>
              </figcaption>
              <HeatmapScale maxCount={selected.maxCount} />
            </figure>
          )}
          {list.length > 1 && (
            <ul class="heatmap-grid" aria-label="Recent days">
              {list.map((heatmap) => (
                <li key={heatmap.id}>
                  <button type="button" class="thumb" aria-pressed={heatmap.id === selected?.id} onClick={() => setSelectedId(heatmap.id)}>
                    <HeatmapImage heatmap={heatmap} thumbnail />
                    <span>{formatUtcDay(heatmap.date)}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  );
}
