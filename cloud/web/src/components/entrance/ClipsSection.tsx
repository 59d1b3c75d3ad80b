import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { isAbort, messageOf, request } from '../../api/graphql.ts';
import type { UploadProgress } from '../../api/upload.ts';
import { DeleteGateVideoMutation, GateVideosQuery, isInProgress, progressPercent, uploadGateVideo, VIDEO_LIST_LIMIT, type GateVideo } from '../../api/videos.ts';
import { useQuery } from '../../hooks.ts';
import { formatBytes, formatDateTime, formatDuration, localTimeZone } from '../../lib/format.ts';
import { refreshBeforeExpiry } from '../../lib/media-links.ts';
import { fromLocalInput } from '../../lib/time-range.ts';
import { ConfirmedAction } from '../ConfirmedAction.tsx';
import { HlsPlayer } from '../HlsPlayer.tsx';
import { LoadFailed, Loading, Notice } from '../Notice.tsx';

const PROCESSING_POLL_MS = 5_000;

const STATE_LABELS: Record<string, string> = { UPLOADED: 'Queued', PROCESSING: 'Processing', READY: 'Ready', FAILED: 'Failed' };

function clipLabel(video: GateVideo): string {
  return `Clip from ${formatDateTime(video.startTime)}`;
}

function ClipItem({ video, playing, onPlay, onStop, onDeleted, playerId }: { video: GateVideo; playing: boolean; onPlay: () => void; onStop: () => void; onDeleted: () => void; playerId: string }) {
  const percent = progressPercent(video.progress);
  return (
    <li class={`clip${playing ? ' playing' : ''}`}>
      <div class="clip-poster" aria-hidden="true">
        {video.posterURL ? <img src={video.posterURL} alt="" loading="lazy" /> : <span class="poster-placeholder" />}
      </div>
      <div class="clip-body">
        <p class="clip-title">{clipLabel(video)}</p>
        <p class="muted clip-meta">
          {formatDuration(video.durationSeconds)}
          {video.width && video.height ? ` · ${video.width}×${video.height}` : ''}
          {video.sizeBytes ? ` · ${formatBytes(video.sizeBytes)}` : ''}
        </p>
        <p class={`badge state-${video.state.toLowerCase()}`}>{STATE_LABELS[video.state] ?? video.state}</p>
        {isInProgress(video) && percent !== undefined && <progress max={100} value={percent} aria-label={`${clipLabel(video)}: processing`} />}
        {video.state === 'FAILED' && video.failureReason && <p class="field-error">{video.failureReason}</p>}
      </div>
      <div class="clip-actions">
        {video.state === 'READY' && video.playlistURL && (
          // An action, not a toggle: "Playing", pressed, did nothing when pressed again. Stop closes the player.
          <button type="button" class="button" onClick={playing ? onStop : onPlay} aria-controls={playerId}>
            {playing ? 'Stop' : 'Play'} <span class="visually-hidden">{clipLabel(video)}</span>
          </button>
        )}
        <div class="row-actions">
          <ConfirmedAction
            action="Delete"
            busyLabel="Deleting…"
            subject={clipLabel(video)}
            onConfirm={async () => {
              await request(DeleteGateVideoMutation, { id: video.id });
              onDeleted();
            }}
          />
        </div>
      </div>
    </li>
  );
}

const QUARTERS = [25, 50, 75];

function UploadForm({ boxId, onUploaded }: { boxId: string; onUploaded: () => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [recordedAt, setRecordedAt] = useState('');
  const [progress, setProgress] = useState<UploadProgress | undefined>();
  /** The outcome to show, and the field at fault when the form's own check failed (none for the server's answers). */
  const [status, setStatus] = useState<{ tone: 'ok' | 'error' | 'info'; text: string; field?: 'file' | 'time' } | undefined>();
  const [announcement, setAnnouncement] = useState('');
  const controller = useRef<AbortController>();
  const fileInput = useRef<HTMLInputElement>(null);
  const timeInput = useRef<HTMLInputElement>(null);
  const id = useId();
  const statusId = `${id}-status`;
  const uploading = progress !== undefined;
  const faultOf = (field: 'file' | 'time') => status?.field === field;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file) {
      setStatus({ tone: 'error', text: 'Choose a video file to upload.', field: 'file' });
      fileInput.current?.focus();
      return;
    }
    const startTime = recordedAt ? fromLocalInput(recordedAt) : null;
    if (startTime === undefined) {
      setStatus({ tone: 'error', text: 'The recording time is not a valid date and time.', field: 'time' });
      timeInput.current?.focus();
      return;
    }
    controller.current = new AbortController();
    setStatus(undefined);
    setProgress({ loaded: 0, total: file.size, percent: 0 });
    setAnnouncement(`Uploading ${file.name}…`);
    let announced = 0;
    try {
      await uploadGateVideo(
        { file, boxId, startTime },
        (next) => {
          setProgress(next);
          const quarter = QUARTERS.filter((q) => (next.percent ?? 0) >= q).pop() ?? 0;
          if (quarter > announced) {
            announced = quarter;
            setAnnouncement(`Uploaded ${quarter} %`);
          }
        },
        controller.current.signal,
      );
      setStatus({ tone: 'ok', text: `Uploaded ${file.name}. The clip is being processed and will be ready to play shortly.` });
      setAnnouncement('Upload finished.');
      setFile(undefined);
      setRecordedAt('');
      if (fileInput.current) fileInput.current.value = '';
      onUploaded();
    } catch (err) {
      if (isAbort(err)) {
        setStatus({ tone: 'info', text: 'Upload cancelled.' });
        setAnnouncement('Upload cancelled.');
      } else {
        setStatus({ tone: 'error', text: messageOf(err) });
        setAnnouncement('');
      }
    } finally {
      setProgress(undefined);
    }
  };

  return (
    <form class="upload-form" onSubmit={submit} aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>Upload a clip</h3>
      <div class="field">
        <label for={`${id}-file`}>Video file</label>
        <input
          id={`${id}-file`}
          ref={fileInput}
          type="file"
          accept="video/*,.mp4,.mov,.mkv,.avi,.webm,.ts,.h264,.mjpeg,.mjpg"
          disabled={uploading}
          onChange={(e) => setFile(e.currentTarget.files?.[0])}
          aria-invalid={faultOf('file') ? true : undefined}
          aria-describedby={faultOf('file') ? statusId : undefined}
        />
      </div>
      <div class="field">
        <label for={`${id}-time`}>Recorded at (optional)</label>
        <input
          id={`${id}-time`}
          ref={timeInput}
          type="datetime-local"
          value={recordedAt}
          disabled={uploading}
          onInput={(e) => setRecordedAt(e.currentTarget.value)}
          aria-invalid={faultOf('time') ? true : undefined}
          aria-describedby={faultOf('time') ? `${id}-time-hint ${statusId}` : `${id}-time-hint`}
        />
        <p class="hint" id={`${id}-time-hint`}>
          Your local time. Leave empty to use the time the file was recorded, if it says, or else the upload time.
        </p>
      </div>
      <div class="actions">
        <button type="submit" class="button primary" disabled={uploading}>
          {uploading ? 'Uploading…' : 'Upload'}
        </button>
        {uploading && (
          <button type="button" class="button" onClick={() => controller.current?.abort()}>
            Cancel upload
          </button>
        )}
      </div>
      {progress && (
        <div class="upload-progress">
          <progress id={`${id}-progress`} max={100} value={progress.percent ?? undefined} aria-label="Upload progress" />
          <span class="muted">
            {progress.percent === undefined ? 'Uploading…' : `${progress.percent} %`} · {formatBytes(progress.loaded)} of {formatBytes(progress.total || file?.size)}
          </span>
        </div>
      )}
      <p class="visually-hidden" role="status">
        {announcement}
      </p>
      {status && (
        <Notice tone={status.tone} id={statusId}>
          {status.text}
        </Notice>
      )}
    </form>
  );
}

/** Pages of a box's clips older than the first, read on request: a box with more than 50 clips showed only the newest 50. */
function useOlderClips(boxId: string) {
  const [state, setState] = useState<{ clips: GateVideo[]; more?: boolean; loading: boolean; error?: string }>({ clips: [], loading: false });
  useEffect(() => setState({ clips: [], loading: false }), [boxId]);
  const load = (afterId: string) => {
    setState((s) => ({ ...s, loading: true, error: undefined }));
    request(GateVideosQuery, { boxId, from: null, to: null, limit: VIDEO_LIST_LIMIT, after: afterId }).then(
      ({ gateVideos }) => setState((s) => ({ clips: [...s.clips, ...gateVideos], more: gateVideos.length >= VIDEO_LIST_LIMIT, loading: false })),
      (error: unknown) => setState((s) => ({ ...s, loading: false, error: messageOf(error) })),
    );
  };
  const remove = (id: string) => setState((s) => ({ ...s, clips: s.clips.filter((clip) => clip.id !== id) }));
  return { ...state, load, remove };
}

/** Stored clips of a box: the list (re-read while clips are processing), a player, and the upload form. */
export function ClipsSection({ boxId }: { boxId: string }) {
  const id = useId();
  // Re-read while a clip is being processed, to show its progress and then the player; otherwise before the links
  // expire, so a page left open still shows posters and plays (the player follows the renewed links).
  const videos = useQuery(
    GateVideosQuery,
    { boxId, from: null, to: null, limit: VIDEO_LIST_LIMIT, after: null },
    { pollMs: (d) => (d.gateVideos.some(isInProgress) ? PROCESSING_POLL_MS : refreshBeforeExpiry(d.gateVideos.flatMap((v) => [v.playlistURL, v.posterURL]))) },
  );
  const [playingId, setPlayingId] = useState<string | undefined>();
  const older = useOlderClips(boxId);
  const newest = videos.data?.gateVideos ?? [];
  // The first page is re-read (progress, renewed links); older pages are read once, on request.
  const list = [...newest, ...older.clips.filter((clip) => !newest.some((v) => v.id === clip.id))].sort(
    (a, b) => Date.parse(b.startTime) - Date.parse(a.startTime) || Number(b.id) - Number(a.id),
  );
  const moreToShow = older.more ?? newest.length >= VIDEO_LIST_LIMIT;
  const playing = list.find((v) => v.id === playingId && v.playlistURL);
  const playerId = `${id}-player`;

  return (
    <section class="card clips-card" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Recorded clips</h2>
      <p class="muted small">Times are {localTimeZone()} time.</p>
      <div class="clips-layout">
        <div class="clips-main">
          <div id={playerId}>
            {playing?.playlistURL && (
              <figure class="clip-player">
                <HlsPlayer key={playing.id} src={playing.playlistURL} poster={playing.posterURL} label={clipLabel(playing)} autoPlay />
                <figcaption>{clipLabel(playing)}</figcaption>
              </figure>
            )}
          </div>
          {videos.error && <LoadFailed title="Could not load the clips." message={videos.error.message} onRetry={videos.reload} />}
          {/* Without an answer there is no list to show: "No clips yet" only when the box was read and has none. */}
          {!videos.data ? (
            videos.loading && <Loading label="Loading clips…" />
          ) : list.length === 0 ? (
            <p class="empty">No clips yet. Upload one, or let the entrance camera send its recordings.</p>
          ) : (
            <>
              <ul class="clip-list" aria-label="Clips, newest first">
                {list.map((video) => (
                  <ClipItem
                    key={video.id}
                    video={video}
                    playing={video.id === playing?.id}
                    onPlay={() => setPlayingId(video.id)}
                    onStop={() => setPlayingId(undefined)}
                    onDeleted={() => {
                      if (video.id === playingId) setPlayingId(undefined);
                      older.remove(video.id);
                      videos.reload();
                    }}
                    playerId={playerId}
                  />
                ))}
              </ul>
              {older.error && <Notice tone="error">{older.error}</Notice>}
              {moreToShow && (
                <button type="button" class="button" aria-disabled={older.loading} onClick={() => !older.loading && older.load(list.at(-1)!.id)}>
                  {older.loading ? 'Loading older clips…' : 'Show older clips'}
                </button>
              )}
            </>
          )}
        </div>
        <UploadForm boxId={boxId} onUploaded={videos.reload} />
      </div>
    </section>
  );
}
