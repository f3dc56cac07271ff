// Human-readable numbers for the dashboard: sizes, rates, durations, percentages.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 → "1.5 KiB". */
export function bytes(count) {
  if (count == null || !Number.isFinite(count)) return '?';
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** Received of expected: "1.5 MiB / 16 MiB", or just the received count when the size is unknown. */
export function byteProgress(received, expected) {
  return expected == null ? bytes(received) : `${bytes(received)} / ${bytes(expected)}`;
}

/** Bytes per second → "256 KiB/s"; nothing while idle. */
export function rate(bytesPerSecond) {
  return bytesPerSecond > 0 ? `${bytes(bytesPerSecond)}/s` : '–';
}

/** Seconds → "1 h 2 min", "3 min 4 s", "5 s"; a dash when unknown. */
export function duration(seconds) {
  if (seconds == null || !Number.isFinite(seconds)) return '–';
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${s} s`;
  return `${s} s`;
}

/** 0.1234 → "12%". */
export function percent(fraction) {
  return fraction == null ? '' : `${Math.floor(fraction * 100)}%`;
}

/** Priority 0–1 shown with two decimals. */
export function priority(value) {
  return Number(value).toFixed(2);
}
