// Time on canvas: one timeline row per unit, and the power (or activity) chart,
// each drawn once off screen and repainted with the player's cycle.
// ---- timelines: one row per unit, SMs by anti-diagonal x + y (thesis Figure 4.1b) ----
function rowOrder(run) {
  const sideRank = { north: 1, west: 2, south: 3, east: 4 };
  return run.units.filter((u) => u.ends.length > 0).sort((a, b) => {
    const ka = a.kind === 'sm' ? [0, a.x + a.y, a.y, a.x] : [sideRank[a.side], a.x, 0, 0];
    const kb = b.kind === 'sm' ? [0, b.x + b.y, b.y, b.x] : [sideRank[b.side], b.x, 0, 0];
    for (let i = 0; i < 4; i++) if (ka[i] !== kb[i]) return ka[i] - kb[i];
    return 0;
  });
}
const TL = { left: 92, right: 10, top: 4 };
function drawTimeline(run, host) {
  const rows = rowOrder(run);
  const width = Math.max(500, host.clientWidth - 10 || 860);
  const rowH = Math.max(3, Math.min(12, 300 / Math.max(1, rows.length)));
  const height = TL.top + rows.length * rowH + 22;
  const c = el('canvas', { class: 'timeline', width: width, height: height });
  run.tl = { canvas: c, rows: rows, rowH: rowH, width: width, height: height };
  const off = document.createElement('canvas');
  off.width = width; off.height = height;
  const g = off.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, width, height);
  // Row labels no taller than their rows, so neighbours do not touch.
  g.font = Math.max(7, Math.min(10, Math.floor(rowH))) + 'px sans-serif'; g.textBaseline = 'middle';
  const x = (t) => TL.left + (width - TL.left - TL.right) * t / Math.max(1, AXIS);
  let lastDiag = null;
  rows.forEach((u, i) => {
    const y = TL.top + i * rowH;
    const diag = u.kind === 'sm' ? u.x + u.y : null;
    if (diag !== lastDiag) {
      g.fillStyle = '#bbb'; g.fillRect(TL.left, y, width - TL.left - TL.right, 0.5);
      if (rowH < 9 && diag !== null) { g.fillStyle = '#333'; g.fillText('x+y = ' + diag, 4, y + rowH / 2); }
    }
    if (rowH >= 9) { g.fillStyle = '#333'; g.fillText(run.gpu ? 'SM ' + u.x : u.name, 4, y + rowH / 2); }
    lastDiag = diag;
    for (let k = 0; k < u.ends.length; k++) {
      const x0 = x(toAxis(run, u.starts[k])), x1 = x(toAxis(run, u.ends[k]));
      g.fillStyle = run.states[u.codes[k]].colour;
      g.fillRect(x0, y + 0.5, Math.max(1, x1 - x0), rowH - 1);
    }
  });
  const bottom = TL.top + rows.length * rowH;
  g.fillStyle = '#000'; g.fillRect(TL.left, bottom, width - TL.left - TL.right, 1);
  g.font = '10px sans-serif'; g.textBaseline = 'top'; g.textAlign = 'center';
  const step = tickStep(AXIS, 8);
  for (let t = 0; t <= AXIS; t += step) { g.fillRect(x(t), bottom, 1, 4); g.fillText(grouped(t), Math.min(x(t), width - 30), bottom + 6); }
  run.tl.image = off;
  run.tl.x = x;
  c.addEventListener('click', (ev) => {
    const rect = c.getBoundingClientRect();
    const px = (ev.clientX - rect.left) * (c.width / rect.width);
    const py = (ev.clientY - rect.top) * (c.height / rect.height);
    const row = Math.floor((py - TL.top) / rowH);
    if (row >= 0 && row < rows.length && px < TL.left) { select(run, rows[row]); return; }
    if (px >= TL.left) seek(Math.round((px - TL.left) / (width - TL.left - TL.right) * AXIS));
    if (row >= 0 && row < rows.length) select(run, rows[row]);
  });
  host.appendChild(c);
}
function tickStep(span, most) {
  let p = 1;
  for (;;) { for (const m of [1, 2, 5]) if (Math.ceil(span / (p * m)) <= most) return p * m; p *= 10; }
}
function paintTimeline(run) {
  const tl = run.tl;
  if (!tl) return;
  const g = tl.canvas.getContext('2d');
  g.drawImage(tl.image, 0, 0);
  const line = view.line && view.line.run === run.index ? view.line : null;
  tl.rows.forEach((u, i) => {
    const y = TL.top + i * tl.rowH;
    if (view.unit && view.unit.run === run.index && view.unit.unit === u.index) {
      g.strokeStyle = '#000'; g.lineWidth = 1.5; g.strokeRect(TL.left - 1, y, tl.width - TL.left - TL.right + 2, tl.rowH);
    }
    if (line && line.units.has(u.index)) {
      // Where the units that ran the line were running code while their group
      // ran it (all their code on pages without line times).
      g.fillStyle = 'rgba(255, 200, 0, 0.55)';
      const lt = run.line_times, grp = groupOf(run, u);
      const ran = lt && grp >= 0 ? line.frames[grp] : null;
      const shade = (a, b) => { const x0 = tl.x(toAxis(run, a)), x1 = tl.x(toAxis(run, b)); g.fillRect(x0, y, Math.max(1, x1 - x0), tl.rowH); };
      for (let k = 0; k < u.ends.length; k++) {
        if (u.codes[k] !== 1 && u.codes[k] !== 2) continue;
        if (!lt) { shade(u.starts[k], u.ends[k]); continue; }
        if (!ran) continue;
        const F = lt.frame_cycles;
        for (let f = Math.floor(u.starts[k] / F); f * F < u.ends[k]; f++) {
          if (ran.has(f)) shade(Math.max(u.starts[k], f * F), Math.min(u.ends[k], (f + 1) * F));
        }
      }
    }
  });
  const cx = tl.x(view.t);
  g.fillStyle = '#d00'; g.fillRect(cx - 0.5, 0, 1.5, TL.top + tl.rows.length * tl.rowH);
}

// ---- charts: power (with energy) or instructions per cycle, over time ----
function drawCharts() {
  const host = $('charts');
  host.appendChild(el('h2', {}, RUNS.some((r) => r.energy) ? 'Power over time' : 'Activity over time'));
  const width = Math.max(500, host.clientWidth - 30 || 860), height = 170;
  const c = el('canvas', { id: 'chart', width: width, height: height, class: 'timeline' });
  host.appendChild(c);
  const readout = el('div', { id: 'chart-readout', class: 'note' });
  host.appendChild(readout);
  const series = RUNS.map((r) => {
    const e = r.energy && r.energy.breakdown;
    if (e && e.power_trace) return { run: r, name: 'dynamic power (W)', values: e.power_trace.map((p) => p.dynamic_w), leak: e.leakage_w };
    return { run: r, name: 'warp instructions per cycle', values: r.series.instructions.map((n) => n / r.frame_cycles) };
  });
  // A few frames far above the rest (the write-back when a kernel ends) would
  // flatten everything else: the scale then stops at twice the 99th percentile
  // and the note says what is off it.
  const all = [].concat(...series.map((s) => s.values)).filter((v) => v > 0).sort((a, b) => a - b);
  const top = all.length ? all[all.length - 1] : 0;
  const p99 = all.length ? all[Math.floor(0.99 * (all.length - 1))] : 0;
  const leakMax = Math.max(0, ...series.map((s) => s.leak || 0));
  const cap = top > 4 * p99 ? Math.max(2 * p99, 1.1 * leakMax) : top;
  const max = Math.max(1e-9, cap, leakMax);
  const over = all.filter((v) => v > max);
  const L = TL.left, R = TL.right, T = 10, B = 24;
  const x = (t) => L + (width - L - R) * t / Math.max(1, AXIS);
  const y = (v) => T + (height - T - B) * (1 - Math.min(v, max) / max);
  const colours = ['#1f77b4', '#ff7f0e'];
  const off = document.createElement('canvas');
  off.width = width; off.height = height;
  const g = off.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, width, height);
  g.font = '10px sans-serif';
  g.fillStyle = '#000'; g.fillRect(L, height - B, width - L - R, 1); g.fillRect(L, T, 1, height - B - T);
  g.fillText(max.toPrecision(3), 4, T + 8); g.fillText('0', 4, height - B);
  series.forEach((s, i) => {
    g.strokeStyle = colours[i]; g.lineWidth = 1.2; g.beginPath();
    s.values.forEach((v, k) => {
      const x0 = x(toAxis(s.run, k * s.run.frame_cycles)), x1 = x(toAxis(s.run, Math.min(s.run.cycles, (k + 1) * s.run.frame_cycles)));
      if (k === 0) g.moveTo(x0, y(v)); else g.lineTo(x0, y(v));
      g.lineTo(x1, y(v));
    });
    g.stroke();
    if (s.leak) { g.setLineDash([4, 3]); g.beginPath(); g.moveTo(L, y(s.leak)); g.lineTo(x(toAxis(s.run, s.run.cycles)), y(s.leak)); g.stroke(); g.setLineDash([]); }
    g.fillStyle = colours[i];
    g.fillText((RUNS.length > 1 ? s.run.label + ': ' : '') + s.name + (s.leak ? '; dashed: leakage (W)' : ''), L + 8, T + 10 + 12 * i);
  });
  c.addEventListener('click', (ev) => {
    const rect = c.getBoundingClientRect();
    const px = (ev.clientX - rect.left) * (c.width / rect.width);
    if (px >= L) seek(Math.round((px - L) / (width - L - R) * AXIS));
  });
  if (over.length) {
    host.appendChild(el('p', { class: 'note', id: 'chart-clipped' }, (over.length === 1 ? 'one frame is' : over.length + ' frames are') +
      ' above the scale (drawn at its top), the highest at ' + top.toPrecision(3) + (series.some((s) => s.leak) ? ' W' : '') + '.'));
  }
  return { canvas: c, image: off, x: x, series: series, readout: readout };
}
let CHART = null;
function paintChart() {
  const g = CHART.canvas.getContext('2d');
  g.drawImage(CHART.image, 0, 0);
  g.fillStyle = '#d00'; g.fillRect(CHART.x(view.t) - 0.5, 0, 1.5, CHART.canvas.height - 24);
  CHART.readout.textContent = CHART.series.map((s) => {
    const c = cycleOf(s.run, view.t);
    const k = Math.min(s.values.length - 1, Math.floor(c / s.run.frame_cycles));
    const v = k >= 0 ? s.values[k] : 0;
    const prefix = RUNS.length > 1 ? s.run.label + ': ' : '';
    return prefix + s.name + ' ' + v.toFixed(3) + (s.leak ? ' + leakage ' + s.leak.toFixed(2) + ' W' : '');
  }).join(' \u00b7 ');
}
