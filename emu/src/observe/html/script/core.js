// The runs' data decoded for drawing, the time axis, and small helpers for
// numbers, elements and tables.
const DATA = JSON.parse(document.getElementById('spu-data').textContent);
const SVGNS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);
const RUNS = DATA.runs.map(prepare);
const BASE = RUNS[0];
// The time axis counts cycles of the first run's clock.
const AXIS = Math.max(...RUNS.map((r) => Math.ceil(toAxis(r, r.cycles))));
const STEP = Math.max(1, Math.round(Math.max(...RUNS.map((r) => toAxis(r, r.frame_cycles)))));
const view = { t: 0, playing: false, unit: null, line: null };

function toAxis(run, cycles) { return cycles * BASE.machine.freq_mhz / run.machine.freq_mhz; }
function cycleOf(run, t) { return Math.min(run.cycles, Math.floor(t * run.machine.freq_mhz / BASE.machine.freq_mhz)); }
function grouped(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f'); }
function seconds(s) {
  if (s >= 1) return s.toFixed(3) + ' s';
  if (s >= 1e-3) return (s * 1e3).toFixed(3) + ' ms';
  return (s * 1e6).toFixed(3) + ' \u00b5s';
}
function joules(j) {
  const units = [[1, 'J'], [1e-3, 'mJ'], [1e-6, '\u00b5J'], [1e-9, 'nJ'], [1e-12, 'pJ']];
  for (const [f, u] of units) if (Math.abs(j) >= f) return (j / f).toFixed(3) + ' ' + u;
  return j === 0 ? '0 J' : j.toExponential(2) + ' J';
}
function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(1) + '%' : '-'; }
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function table(head, rows, numeric) {
  const t = el('table');
  const tr = el('tr');
  head.forEach((h, i) => tr.appendChild(el('th', numeric && numeric[i] ? { class: 'num' } : {}, h)));
  t.appendChild(tr);
  for (const row of rows) {
    const r = el('tr', row.attrs || {});
    row.cells.forEach((c, i) => {
      const td = el('td', numeric && numeric[i] ? { class: 'num' } : {});
      if (c instanceof Node) td.appendChild(c); else td.textContent = c;
      r.appendChild(td);
    });
    t.appendChild(r);
  }
  return t;
}

// Decodes a run's flat arrays into per-unit arrays for binary search.
function prepare(run, index) {
  run.index = index;
  run.label = DATA.labels[index];
  run.gpu = run.machine.kind === 'gpu';
  run.units.forEach((u, i) => {
    u.index = i;
    const n = u.stretches.length / 4;
    u.starts = new Float64Array(n); u.ends = new Float64Array(n);
    u.codes = new Uint8Array(n); u.passes = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      u.starts[k] = u.stretches[4 * k]; u.ends[k] = u.stretches[4 * k + 1];
      u.codes[k] = u.stretches[4 * k + 2]; u.passes[k] = u.stretches[4 * k + 3];
    }
    u.hand = [];
    for (let k = 0; k < u.handovers.length; k += 2) u.hand.push([u.handovers[k], u.handovers[k + 1]]);
    u.busyFraction = run.cycles > 0 ? u.busy_cycles / run.cycles : 0;
    // First and last cycle of each pass's work.
    u.passSpan = new Map();
    for (let k = 0; k < n; k++) {
      const s = u.passSpan.get(u.passes[k]);
      if (s) s[1] = u.ends[k]; else u.passSpan.set(u.passes[k], [u.starts[k], u.ends[k]]);
    }
  });
  run.byName = new Map(run.units.map((u) => [u.name, u]));
  run.energy = run.energy || null;
  return run;
}

// The state (code and pass) of a unit at cycle c.
function stateAt(u, c) {
  let lo = 0, hi = u.ends.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (u.ends[m] <= c) lo = m + 1; else hi = m; }
  if (lo < u.ends.length && u.starts[lo] <= c) return [u.codes[lo], u.passes[lo]];
  return [0, -1];
}
function passName(run, p) {
  if (p < 0) return '-';
  const px = run.passes[0] || 1;
  return '(' + (p % px) + ',' + Math.floor(p / px) + ')';
}
function blockOf(run, u, p) {
  if (u.kind !== 'sm' || p < 0 || run.gpu) return null;
  const px = run.passes[0] || 1;
  const bx = (p % px) * run.machine.cols + u.x, by = Math.floor(p / px) * run.machine.rows + u.y;
  return bx < run.grid[0] && by < run.grid[1] ? [bx, by] : null;
}
