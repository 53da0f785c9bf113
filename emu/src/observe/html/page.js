// The replay page: reads the runs from the JSON block, draws each machine (SVG),
// its launch block by block (SVG), its timeline and activity charts (canvas), and
// keeps them all at the player's time. No libraries, no network.
'use strict';
(function () {
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

  // ---- the machine ----
  function drawMachine(run, host) {
    const svgW = 440;
    const svg = svgEl('svg', { class: 'machine', width: svgW });
    run.rects = [];
    run.links = [];
    if (run.gpu) {
      const perRow = Math.min(8, run.units.length);
      const S = 46, G = 8, L = 10, T = 10;
      const rows = Math.ceil(run.units.length / perRow);
      run.units.forEach((u, i) => {
        const x = L + (i % perRow) * (S + G), y = T + Math.floor(i / perRow) * (S + G);
        addUnit(run, svg, u, x, y, S, S, 'SM ' + u.x);
      });
      const busY = T + rows * (S + G) + 14;
      const w = perRow * (S + G) - G;
      svg.appendChild(svgEl('line', { x1: L, x2: L + w, y1: busY - 7, y2: busY - 7, class: 'link' }));
      run.l2 = svgEl('rect', { x: L, y: busY, width: w, height: 30, fill: '#fff', stroke: '#555', 'data-part': 'l2' });
      svg.appendChild(run.l2);
      run.l2Text = svgEl('text', { x: L + 6, y: busY + 19, 'font-size': 11 });
      svg.appendChild(run.l2Text);
      run.dram = svgEl('rect', { x: L, y: busY + 44, width: w, height: 30, fill: '#fff', stroke: '#555', 'data-part': 'dram' });
      svg.appendChild(run.dram);
      run.dramText = svgEl('text', { x: L + 6, y: busY + 63, 'font-size': 11 });
      svg.appendChild(run.dramText);
      svg.appendChild(svgEl('line', { x1: L + w / 2, x2: L + w / 2, y1: busY + 30, y2: busY + 44, class: 'link' }));
      svg.setAttribute('height', busY + 84);
    } else {
      const P = run.machine.cols, Q = run.machine.rows;
      const S = Math.max(14, Math.min(72, 330 / Math.max(P, Q)));
      const G = S * 0.3, E = S * 0.4;
      const L = 8 + E + G, T = 8 + E + G;
      const sx = (x) => L + x * (S + G), sy = (y) => T + y * (S + G);
      const W = sx(P) + E + 8, H = sy(Q) + E + 8;
      svg.setAttribute('width', W); svg.setAttribute('height', H);
      run.cell = S;
      const place = (u) => {
        if (u.kind === 'sm') return [sx(u.x), sy(u.y), S, S];
        switch (u.side) {
          case 'north': return [sx(u.x), T - G - E, S, E];
          case 'south': return [sx(u.x), sy(Q), S, E];
          case 'west': return [L - G - E, sy(u.x), E, S];
          default: return [sx(P), sy(u.x), E, S];
        }
      };
      // Links first, under the units: from each producer port (east, south).
      run.units.forEach((u) => {
        for (const p of u.ports) {
          if (p.side !== 'east' && p.side !== 'south') continue;
          const a = place(u), b = place(run.units[p.partner]);
          let line;
          if (p.side === 'east') {
            const y = a[1] + a[3] / 2;
            line = svgEl('line', { x1: a[0] + a[2], x2: b[0], y1: y, y2: y, class: 'link' });
          } else {
            const x = a[0] + a[2] / 2;
            line = svgEl('line', { x1: x, x2: x, y1: a[1] + a[3], y2: b[1], class: 'link' });
          }
          line.appendChild(svgEl('title', {}, u.name + ' \u2192 ' + run.units[p.partner].name + ': ' +
            grouped(p.writes) + ' words written, ' + grouped(p.handovers) + ' rendezvous'));
          svg.appendChild(line);
          run.links.push({ el: line, unit: u, side: p.side === 'east' ? 3 : 1 });
        }
      });
      run.units.forEach((u) => {
        const [x, y, w, h] = place(u);
        addUnit(run, svg, u, x, y, w, h, u.kind === 'sm' && S >= 40 ? '(' + u.x + ',' + u.y + ')' : '');
      });
    }
    host.appendChild(svg);
  }
  function addUnit(run, svg, u, x, y, w, h, label) {
    const r = svgEl('rect', { x: x, y: y, width: w, height: h, class: 'unit', fill: '#fff', 'data-run': run.index, 'data-unit': u.index });
    const title = svgEl('title', {}, u.name);
    r.appendChild(title);
    r.addEventListener('click', () => select(run, u));
    svg.appendChild(r);
    u.rect = r; u.title = title;
    if (label) {
      svg.appendChild(svgEl('text', { x: x + w / 2, y: y + h / 2 - 2, 'text-anchor': 'middle', 'font-size': 11 }, label));
      u.sub = svgEl('text', { x: x + w / 2, y: y + h / 2 + 11, 'text-anchor': 'middle', 'font-size': 9 });
      svg.appendChild(u.sub);
    }
    run.rects.push(r);
  }

  // ---- the launch, block by block (thesis Figure 4.2a) ----
  function drawBlocks(run, host) {
    const [gx, gy] = run.grid;
    if (run.gpu || gx * gy === 0 || gx * gy > 65536) return;
    const B = Math.max(4, Math.min(36, 300 / Math.max(gx, gy)));
    const L = 6, T = 6;
    const svg = svgEl('svg', { class: 'blocks', width: L * 2 + gx * B, height: T * 2 + gy * B });
    run.blocks = [];
    const P = run.machine.cols, Q = run.machine.rows, px = run.passes[0] || 1;
    for (let by = 0; by < gy; by++) {
      for (let bx = 0; bx < gx; bx++) {
        const r = svgEl('rect', { x: L + bx * B, y: T + by * B, width: B, height: B, class: 'block', fill: '#fff' });
        const sm = run.byName.get('SM (' + (bx % P) + ',' + (by % Q) + ')');
        const pass = Math.floor(by / Q) * px + Math.floor(bx / P);
        r.appendChild(svgEl('title', {}, 'block (' + bx + ',' + by + ') on SM (' + (bx % P) + ',' + (by % Q) + ') in pass ' + passName(run, pass)));
        if (sm) r.addEventListener('click', () => select(run, sm));
        svg.appendChild(r);
        run.blocks.push({ el: r, sm: sm, pass: pass, bx: bx, by: by });
      }
    }
    for (let x = 0; x <= gx; x += P) svg.appendChild(svgEl('line', { x1: L + Math.min(x, gx) * B, x2: L + Math.min(x, gx) * B, y1: T, y2: T + gy * B, class: 'pass-edge' }));
    for (let y = 0; y <= gy; y += Q) svg.appendChild(svgEl('line', { y1: T + Math.min(y, gy) * B, y2: T + Math.min(y, gy) * B, x1: L, x2: L + gx * B, class: 'pass-edge' }));
    svg.appendChild(svgEl('rect', { x: L, y: T, width: gx * B, height: gy * B, class: 'pass-edge' }));
    host.appendChild(svg);
  }

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
    g.font = '10px sans-serif'; g.textBaseline = 'middle';
    const x = (t) => TL.left + (width - TL.left - TL.right) * t / Math.max(1, AXIS);
    let lastDiag = null;
    rows.forEach((u, i) => {
      const y = TL.top + i * rowH;
      const diag = u.kind === 'sm' ? u.x + u.y : null;
      if (diag !== lastDiag) {
        g.fillStyle = '#bbb'; g.fillRect(TL.left, y, width - TL.left - TL.right, 0.5);
        if (rowH < 9 && diag !== null) { g.fillStyle = '#333'; g.fillText('x+y = ' + diag, 4, y + rowH / 2); }
      }
      if (rowH >= 9) { g.fillStyle = '#333'; g.fillText(u.name, 4, y + rowH / 2); }
      lastDiag = diag;
      for (let k = 0; k < u.ends.length; k++) {
        const x0 = x(toAxis(run, u.starts[k])), x1 = x(toAxis(run, u.ends[k]));
        g.fillStyle = run.states[u.codes[k]].colour;
        g.fillRect(x0, y + 0.5, Math.max(1, x1 - x0), rowH - 1);
      }
    });
    const bottom = TL.top + rows.length * rowH;
    g.fillStyle = '#000'; g.fillRect(TL.left, bottom, width - TL.left - TL.right, 1);
    g.textBaseline = 'top'; g.textAlign = 'center';
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
        // When the units that ran the line were running code.
        g.fillStyle = 'rgba(255, 200, 0, 0.55)';
        for (let k = 0; k < u.ends.length; k++) {
          if (u.codes[k] !== 1 && u.codes[k] !== 2) continue;
          const x0 = tl.x(toAxis(run, u.starts[k])), x1 = tl.x(toAxis(run, u.ends[k]));
          g.fillRect(x0, y, Math.max(1, x1 - x0), tl.rowH);
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
    const max = Math.max(1e-9, ...series.map((s) => Math.max(0, ...s.values, s.leak || 0)));
    const L = TL.left, R = TL.right, T = 10, B = 24;
    const x = (t) => L + (width - L - R) * t / Math.max(1, AXIS);
    const y = (v) => T + (height - T - B) * (1 - v / max);
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

  // ---- the player ----
  function seek(t) {
    view.t = Math.max(0, Math.min(AXIS, t));
    $('slider').value = String(view.t);
    paint();
  }
  function paint() {
    for (const run of RUNS) paintRun(run);
    paintChart();
    paintPanelState();
    $('clock').textContent = RUNS.map((r) => {
      const c = cycleOf(r, view.t);
      return (RUNS.length > 1 ? r.label + ': ' : '') + 'cycle ' + grouped(c) + ' of ' + grouped(r.cycles) +
        ' (' + seconds(c / (r.machine.freq_mhz * 1e6)) + ')';
    }).join(' \u00b7 ');
  }
  function paintRun(run) {
    const c = cycleOf(run, view.t);
    let front = -1;
    const states = new Map();
    for (const u of run.units) {
      const [code, pass] = stateAt(u, c);
      states.set(u.index, [code, pass]);
      if (code === 1 && u.kind === 'sm' && !run.gpu) front = Math.max(front, u.x + u.y);
      const st = run.states[code];
      u.rect.setAttribute('fill', st.colour);
      u.rect.setAttribute('data-state', st.name);
      u.rect.setAttribute('data-pass', pass);
      u.title.textContent = u.name + ': ' + st.name + (pass >= 0 && !run.gpu ? ', pass ' + passName(run, pass) : '');
      if (u.sub) {
        const b = blockOf(run, u, pass);
        u.sub.textContent = b ? 'block ' + b[0] + ',' + b[1] : (pass >= 0 && !run.gpu ? 'pass ' + passName(run, pass) : '');
      }
    }
    for (const u of run.units) {
      const [code] = states.get(u.index);
      u.rect.classList.toggle('front', code === 1 && u.kind === 'sm' && u.x + u.y === front);
      u.rect.classList.toggle('selected', !!(view.unit && view.unit.run === run.index && view.unit.unit === u.index));
      u.rect.classList.toggle('ran-line', !!(view.line && view.line.run === run.index && view.line.units.has(u.index)));
    }
    run.frontText.textContent = run.gpu ? '' : (front >= 0 ? 'wavefront: SMs with x+y = ' + front + ' are the furthest computing (red outline)' : 'wavefront: no SM is computing now');
    // A link is lit while a tile handed over on it is recent (within a frame).
    const recent = Math.max(run.frame_cycles, run.handover_resolution_cycles, 1);
    for (const l of run.links) {
      const hit = l.unit.hand.some((h) => h[1] === l.side && h[0] <= c && h[0] > c - recent);
      l.el.classList.toggle('active', hit);
    }
    if (run.blocks) {
      // The launch's wavefront: the computing blocks furthest along bx + by.
      let reach = -1;
      const shown = run.blocks.map((b) => {
        let fill = '#fff', computing = false, state = 'not started';
        const span = b.sm && b.sm.passSpan.get(b.pass);
        if (span && c >= span[1]) { fill = '#b8b8b8'; state = 'done'; }
        else if (span && c >= span[0]) {
          const [code, pass] = states.get(b.sm.index);
          if (pass === b.pass) { fill = run.states[code].colour; computing = code === 1; state = run.states[code].name; }
        }
        if (computing) reach = Math.max(reach, b.bx + b.by);
        return [fill, state, computing];
      });
      run.blocks.forEach((b, i) => {
        b.el.setAttribute('fill', shown[i][0]);
        b.el.setAttribute('data-state', shown[i][1]);
        b.el.classList.toggle('front', shown[i][2] && b.bx + b.by === reach);
      });
    }
    if (run.gpu) {
      const k = Math.min(run.series.l2.length - 1, Math.floor(c / run.frame_cycles));
      const shade = (v, max) => { const a = max > 0 ? v / max : 0; const g = Math.round(255 - 150 * a); return 'rgb(255,' + g + ',' + g + ')'; };
      const l2 = k >= 0 ? run.series.l2[k] : 0, dram = k >= 0 ? run.series.dram[k] : 0;
      run.l2.setAttribute('fill', shade(l2, Math.max(...run.series.l2, 0)));
      run.dram.setAttribute('fill', shade(dram, Math.max(...run.series.dram, 0)));
      run.l2Text.textContent = 'L2 (' + run.machine.l2_kib + ' KiB): ' + grouped(l2) + ' line accesses in this frame of ' + grouped(run.frame_cycles) + ' cycles';
      run.dramText.textContent = 'DRAM: ' + grouped(dram) + ' transactions in this frame';
    }
    paintTimeline(run);
  }
  function tick(now) {
    if (!view.playing) return;
    const speed = Number($('speed').value);
    view.acc = (view.acc || 0) + speed;
    if (view.acc >= 1) {
      const frames = Math.floor(view.acc);
      view.acc -= frames;
      if (view.t >= AXIS) { view.playing = false; $('play').textContent = '\u25b6 play'; return; }
      seek(view.t + frames * STEP);
    }
    requestAnimationFrame(tick);
  }
  function togglePlay() {
    view.playing = !view.playing;
    $('play').textContent = view.playing ? '\u23f8 pause' : '\u25b6 play';
    if (view.playing) { if (view.t >= AXIS) seek(0); requestAnimationFrame(tick); }
  }

  // ---- the selected unit ----
  function select(run, u) {
    view.unit = { run: run.index, unit: u.index };
    showUnit(run, u);
    paint();
  }
  function showUnit(run, u) {
    const panel = $('panel');
    panel.textContent = '';
    panel.setAttribute('data-unit', u.name);
    panel.setAttribute('data-run', run.index);
    panel.appendChild(el('h2', {}, (RUNS.length > 1 ? run.label + ': ' : '') + u.name));
    panel.appendChild(el('div', { id: 'panel-state' }));
    panel.appendChild(el('h3', {}, 'Activity over the whole run'));
    const strip = el('canvas', { id: 'panel-strip', width: 340, height: 18 });
    const g = strip.getContext('2d');
    g.fillStyle = '#fff'; g.fillRect(0, 0, 340, 18);
    for (let k = 0; k < u.ends.length; k++) {
      const x0 = 340 * u.starts[k] / Math.max(1, run.cycles), x1 = 340 * u.ends[k] / Math.max(1, run.cycles);
      g.fillStyle = run.states[u.codes[k]].colour; g.fillRect(x0, 1, Math.max(1, x1 - x0), 16);
    }
    u.strip = strip.getContext('2d').getImageData(0, 0, 340, 18);
    panel.appendChild(strip);
    panel.appendChild(el('h3', {}, 'Counters'));
    const rows = [
      ['work_items', 'work items (blocks, IU programs, transfers)', u.work_items],
      ['busy_cycles', 'busy cycles (' + pct(u.busy_cycles, run.cycles) + ' of the run)', u.busy_cycles],
      ['code_cycles', 'cycles running code', u.code_cycles],
      ['spill_wait_cycles', 'cycles waiting for a spill', u.spill_wait_cycles],
      ['issued', 'warp instructions issued', u.issued],
      ['thread_instructions', 'thread instructions', u.thread_instructions],
    ];
    for (const k in u.stall_cycles) if (u.stall_cycles[k] > 0) rows.push(['stall.' + k, 'stall cycles: ' + k.replace('_', ' '), u.stall_cycles[k]]);
    for (const k in u.counters) if (u.counters[k] > 0) rows.push(['counter.' + k, k + (run.component_events[k] ? ': ' + run.component_events[k] : ''), u.counters[k]]);
    panel.appendChild(table(['', 'count'], rows.map((r) => ({ attrs: { 'data-key': r[0] }, cells: [r[1], grouped(r[2])] })), [false, true]));
    if (u.ports.length) {
      panel.appendChild(el('h3', {}, 'CB links'));
      panel.appendChild(table(['side', 'to / from', 'words', 'rendezvous'], u.ports.map((p) => {
        const out = p.side === 'east' || p.side === 'south';
        return { attrs: { 'data-side': p.side }, cells: [p.side + (out ? ' (out)' : ' (in)'), run.units[p.partner].name, grouped(out ? p.writes : p.reads), grouped(p.handovers)] };
      }), [false, false, true, true]));
    }
    if (run.energy) {
      const e = run.energy, b = e.breakdown, mine = e.units[u.index];
      panel.appendChild(el('h3', {}, 'Energy'));
      panel.appendChild(table(['', 'energy', 'share'], [
        { attrs: { 'data-key': 'dynamic' }, cells: ['dynamic (its events and busy time)', joules(mine.dynamic_j), pct(mine.dynamic_j, b.dynamic_j) + ' of dynamic'] },
        { attrs: { 'data-key': 'leakage' }, cells: ['leakage (' + mine.leakage_w.toFixed(3) + ' W for the whole run)', joules(mine.leakage_w * b.time_s), pct(mine.leakage_w * b.time_s, b.static_j) + ' of static'] },
      ], [false, true, true]));
    }
    const lines = [];
    for (let k = 0; k < u.lines.length; k += 3) lines.push([u.lines[k], u.lines[k + 1], u.lines[k + 2]]);
    if (lines.length) {
      lines.sort((a, b) => (b[1] + b[2]) - (a[1] + a[2]) || a[0] - b[0]);
      panel.appendChild(el('h3', {}, 'Source lines it spent its time on'));
      const t = table(['line', 'issued', 'stall cycles'], lines.slice(0, 10).map((l) => ({
        attrs: { 'data-line': l[0] }, cells: [run.lines[l[0]].key, grouped(l[1]), grouped(l[2])],
      })), [false, true, true]);
      t.classList.add('lines-of-unit');
      t.addEventListener('click', (ev) => { const tr = ev.target.closest('tr[data-line]'); if (tr) chooseLine(run, Number(tr.getAttribute('data-line'))); });
      panel.appendChild(t);
    }
    paintPanelState();
  }
  function paintPanelState() {
    const box = $('panel-state');
    if (!box || !view.unit) return;
    const run = RUNS[view.unit.run], u = run.units[view.unit.unit];
    const c = cycleOf(run, view.t);
    const [code, pass] = stateAt(u, c);
    const b = blockOf(run, u, pass);
    box.textContent = 'At cycle ' + grouped(c) + ': ' + run.states[code].name +
      (pass >= 0 && !run.gpu ? ', pass ' + passName(run, pass) : '') + (b ? ', block (' + b[0] + ',' + b[1] + ')' : '');
    box.setAttribute('data-state', run.states[code].name);
    const strip = $('panel-strip');
    if (strip && u.strip) {
      const g = strip.getContext('2d');
      g.putImageData(u.strip, 0, 0);
      g.fillStyle = '#d00'; g.fillRect(340 * c / Math.max(1, run.cycles) - 0.5, 0, 1.5, 18);
    }
  }
  function showSummary() {
    const panel = $('panel');
    panel.appendChild(el('h2', {}, 'The run'));
    for (const run of RUNS) {
      const t = run.totals;
      if (RUNS.length > 1) panel.appendChild(el('h3', {}, run.label));
      const rows = [
        ['cycles', grouped(run.cycles) + ' (' + seconds(run.cycles / (run.machine.freq_mhz * 1e6)) + ')'],
        ['warp instructions', grouped(t.warp_instructions)],
        ['off-chip words', grouped(t.offchip_words) + ' (' + grouped(t.spill_words) + ' spilled, ' + grouped(t.restore_words) + ' restored)'],
      ];
      if (!run.gpu) {
        rows.push(['passes', run.passes[0] + 'x' + run.passes[1] + ' (' + run.pass_mode + ')']);
        rows.push(['CB words', grouped(t.cb_words) + '; ' + grouped(t.link_rendezvous) + ' link rendezvous, ' + grouped(t.global_blocksyncs) + ' global blocksyncs']);
      }
      if (run.energy) rows.push(['energy', joules(run.energy.breakdown.total_j) + ' (static ' + joules(run.energy.breakdown.static_j) + ', dynamic ' + joules(run.energy.breakdown.dynamic_j) + ')']);
      panel.appendChild(table(['', ''], rows.map((r) => ({ cells: r }))));
    }
    panel.appendChild(el('p', { class: 'note' }, 'Click a unit (in the machine, the launch or a timeline row) to see what it did and what it cost; click a source line to see where and when it ran.'));
  }

  // ---- legend ----
  function drawLegend() {
    const host = $('legend');
    host.appendChild(el('h2', {}, 'Legend'));
    const used = new Set();
    for (const r of RUNS) for (const u of r.units) for (const c of u.codes) used.add(c);
    used.add(0); used.add(1);
    const named = new Set();
    BASE.states.forEach((s, code) => {
      if (!used.has(code) || named.has(s.name)) return;
      named.add(s.name);
      const e = el('span', { class: 'entry' });
      const sw = el('span', { class: 'swatch' }); sw.style.background = s.colour;
      e.appendChild(sw); e.appendChild(document.createTextNode(s.name + ' (' + s.group + ')'));
      host.appendChild(e);
    });
    const notes = RUNS.some((r) => !r.gpu)
      ? 'Red outline: the SMs (and blocks of the launch) furthest along the wavefront that are computing now. Red link: a tile was handed over it within the last frame. In the launch, grey blocks are done, white ones have not started, thick lines separate passes.'
      : 'An SM is computing while it holds resident blocks. L2 and DRAM are shaded by their accesses in the current frame.';
    host.appendChild(el('p', { class: 'note' }, notes));
    const res = RUNS.map((r) => (RUNS.length > 1 ? r.label + ': ' : '') + (r.resolution_cycles > 1
      ? 'activity drawn at ' + grouped(r.resolution_cycles) + '-cycle resolution (the activity that took most of each stretch)'
      : 'activity exact to the cycle') + '; one step is ' + grouped(r.frame_cycles) + ' cycles');
    host.appendChild(el('p', { class: 'note', id: 'resolution' }, res.join(' \u00b7 ')));
  }

  // ---- energy ----
  function drawEnergy() {
    const runs = RUNS.filter((r) => r.energy);
    if (!runs.length) return;
    const host = $('energy');
    host.appendChild(el('h2', {}, 'Where the energy went'));
    const box = el('div', { class: 'two' });
    for (const run of runs) {
      const b = run.energy.breakdown;
      const d = el('div');
      if (RUNS.length > 1) d.appendChild(el('h3', {}, run.label));
      d.appendChild(el('p', {}, 'total ' + joules(b.total_j) + ': static ' + joules(b.static_j) + ' (' + pct(b.static_j, b.total_j) +
        ', leakage ' + b.leakage_w.toFixed(2) + ' W for ' + seconds(b.time_s) + '), dynamic ' + joules(b.dynamic_j) + ' (' + pct(b.dynamic_j, b.total_j) + '); model ' + b.model));
      const comps = Object.keys(b.components).sort((x, y) => b.components[y] - b.components[x] || (x < y ? -1 : 1));
      d.appendChild(el('h3', {}, 'Dynamic energy by component'));
      d.appendChild(table(['component', 'energy', 'share', 'what it counts'], comps.map((k) => ({
        attrs: { 'data-component': k }, cells: [k, joules(b.components[k]), pct(b.components[k], b.dynamic_j), b.legend[k] || ''],
      })), [false, true, true, false]));
      d.appendChild(el('h3', {}, 'Leakage by unit type'));
      d.appendChild(table(['units', 'each', 'total', 'share'], b.leakage_by_unit.map((l) => ({
        cells: [l.what || l.unit, l.each_w.toFixed(4) + ' W', l.total_w.toFixed(3) + ' W', pct(l.total_w, b.leakage_w)],
      })), [false, true, true, true]));
      box.appendChild(d);
    }
    host.appendChild(box);
    host.appendChild(el('p', { class: 'note' }, 'Static energy is leakage power times run time: a unit leaks whether it works or waits. IDLE_COREP and CONST_DYNAMICP also grow with time, not with work.'));
  }

  // ---- the kernel ----
  function drawKernel() {
    const host = $('kernel');
    host.appendChild(el('h2', {}, 'The kernel, line by line'));
    const seen = new Set();
    for (const run of RUNS) {
      const key = run.kernel + '|' + run.sources.map((s) => s.name).join(',');
      if (seen.has(key)) { run.kernelRows = RUNS.find((r) => r.kernelKey === key).kernelRows; run.kernelKey = key; continue; }
      seen.add(key); run.kernelKey = key;
      run.kernelRows = new Map();
      if (RUNS.length > 1) host.appendChild(el('h3', {}, run.label + ': ' + run.kernel));
      const eLines = run.energy ? run.energy.breakdown.lines : null;
      const score = (l) => eLines ? (eLines[l.key] || 0) : l.issued + l.stall_cycles;
      const hot = new Set(run.lines.map((l, i) => [score(l), i]).filter((p) => p[0] > 0).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, 5).map((p) => p[1]));
      const maxScore = Math.max(1e-30, ...run.lines.map(score));
      const head = ['line', 'instructions', 'stall cycles'].concat(eLines ? ['energy'] : []).concat(['', 'source']);
      const num = [true, true, true].concat(eLines ? [true] : []).concat([false, false]);
      const rows = [];
      const byFileLine = new Map(run.lines.map((l, i) => [l.file + ':' + l.line, i]));
      const rowOf = (i, number, text) => {
        const l = i === undefined ? null : run.lines[i];
        const bar = el('span', { class: 'bar' });
        if (l) bar.style.width = Math.round(60 * score(l) / maxScore) + 'px';
        const cells = [String(number), l ? grouped(l.issued) : '', l ? grouped(l.stall_cycles) : '']
          .concat(eLines ? [l ? joules(eLines[l.key] || 0) : ''] : [])
          .concat([l && hot.has(i) ? hotMark(bar) : bar, el('span', { class: 'src' }, text)]);
        const attrs = l ? { class: 'has-code', 'data-line': i } : {};
        rows.push({ attrs: attrs, cells: cells });
      };
      run.sources.forEach((src, f) => {
        if (src.text !== undefined && src.text !== null) {
          rows.push({ cells: [el('b', {}, src.name)] });
          src.text.split('\n').forEach((t, n) => rowOf(byFileLine.get(f + ':' + (n + 1)), n + 1, t));
        }
      });
      run.lines.forEach((l, i) => {
        const quoted = l.file !== undefined && l.file !== null && run.sources[l.file] && run.sources[l.file].text;
        if (!quoted) rowOf(i, l.key, l.instructions.join('; '));
      });
      const wrap = el('div', { class: 'kernel-table' });
      const t = table(head, rows, num);
      t.addEventListener('click', (ev) => { const tr = ev.target.closest('tr[data-line]'); if (tr) chooseLine(run, Number(tr.getAttribute('data-line'))); });
      t.querySelectorAll('tr[data-line]').forEach((tr) => run.kernelRows.set(Number(tr.getAttribute('data-line')), tr));
      wrap.appendChild(t);
      host.appendChild(wrap);
      host.appendChild(el('p', { class: 'note' }, 'hot: the five lines with the most ' + (eLines ? 'energy' : 'issue and stall cycles') + '. Click a line: the units that ran it are outlined in yellow, and their timeline rows shaded where they ran code.'));
    }
    host.appendChild(el('div', { id: 'line-info', class: 'note' }));
  }
  function hotMark(bar) { const s = el('span', { class: 'hot' }, 'hot '); s.appendChild(bar); return s; }
  function chooseLine(run, i) {
    const units = new Set();
    let issued = 0;
    for (const u of run.units) {
      for (let k = 0; k < u.lines.length; k += 3) if (u.lines[k] === i && u.lines[k + 1] > 0) { units.add(u.index); issued += u.lines[k + 1]; }
    }
    view.line = { run: run.index, line: i, units: units };
    for (const r of RUNS) if (r.kernelRows) r.kernelRows.forEach((tr, k) => tr.classList.toggle('chosen', r === run && k === i));
    const l = run.lines[i];
    const names = [...units].map((k) => run.units[k].name);
    $('line-info').textContent = l.key + ' (' + l.instructions.join('; ') + '): ' + grouped(issued) + ' warp instructions on ' + units.size + ' units' +
      (names.length ? ' (' + names.slice(0, 8).join(', ') + (names.length > 8 ? ', ...' : '') + ')' : '');
    paint();
  }

  // ---- start ----
  function build() {
    $('title').textContent = RUNS.length > 1 ? RUNS.map((r) => r.label + ': ' + r.title).join('  vs  ') : BASE.title;
    const host = $('runs');
    for (const run of RUNS) {
      const box = el('div', { class: 'run', 'data-run': run.index });
      box.appendChild(el('h2', {}, (RUNS.length > 1 ? run.label + ': ' : '') + run.title));
      const views = el('div', { class: 'views' });
      const m = el('div');
      m.appendChild(el('div', { class: 'view-title' }, run.gpu ? 'the GPU: its SMs, L2 and DRAM' : 'the machine: SMs, ' + (run.machine.boundary === 'dma' ? 'DMA engines' : 'Interface Units') + ' around the edge, CB links'));
      drawMachine(run, m);
      run.frontText = el('div', { class: 'note' });
      m.appendChild(run.frontText);
      views.appendChild(m);
      if (!run.gpu) {
        const b = el('div');
        b.appendChild(el('div', { class: 'view-title' }, 'the launch: ' + run.grid[0] + 'x' + run.grid[1] + ' blocks in ' + run.passes[0] + 'x' + run.passes[1] + ' passes (' + run.pass_mode + ')'));
        drawBlocks(run, b);
        views.appendChild(b);
      }
      box.appendChild(views);
      box.appendChild(el('div', { class: 'view-title' }, 'timeline: one row per unit' + (run.gpu ? '' : ', SMs by anti-diagonal x+y') + '; click to jump there'));
      box.appendChild(el('div', { class: 'tl-host' }));
      host.appendChild(box);
      drawTimeline(run, box.querySelector('.tl-host'));
    }
    drawLegend();
    CHART = drawCharts();
    drawEnergy();
    drawKernel();
    showSummary();
    const slider = $('slider');
    slider.max = String(AXIS);
    slider.step = '1';
    slider.addEventListener('input', () => { view.t = Number(slider.value); paint(); });
    $('play').addEventListener('click', togglePlay);
    $('back').addEventListener('click', () => seek(view.t - STEP));
    $('fwd').addEventListener('click', () => seek(view.t + STEP));
    document.addEventListener('keydown', (ev) => {
      if (ev.target instanceof HTMLInputElement && ev.target.type !== 'range') return;
      if (ev.key === ' ') { ev.preventDefault(); togglePlay(); }
      else if (ev.key === 'ArrowRight') { ev.preventDefault(); seek(view.t + STEP); }
      else if (ev.key === 'ArrowLeft') { ev.preventDefault(); seek(view.t - STEP); }
    });
    seek(0);
    document.body.setAttribute('data-ready', '1');
    if (window.performance && performance.mark) performance.mark('spu-ready');
  }
  build();
})();
