// hls.js ships its light build (no subtitles, alternate audio or DRM, none of which entrance video uses) without
// its own type entry; it has the full build's API.
declare module 'hls.js/light' {
  import Hls from 'hls.js';
  export default Hls;
}
