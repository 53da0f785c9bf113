// The kernel, line by line, and a chosen line's units and times.
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
    host.appendChild(el('p', { class: 'note' }, 'hot: the five lines with the most ' + (eLines ? 'energy' : 'issue and stall cycles') + '. Click a line: the units that ran it are outlined in yellow, the strip under the slider shows when it ran, and the timeline rows of those units are shaded where they ran code while it ran' +
      (run.line_times && run.line_times.frame_cycles > run.frame_cycles ? ' (when: in frames of ' + grouped(run.line_times.frame_cycles) + ' cycles, coarser than the player\'s step of ' + grouped(run.frame_cycles) + ', to keep the page small)' : '') + '.'));
  }
  host.appendChild(el('div', { id: 'line-info', class: 'note' }));
}
function hotMark(bar) { const s = el('span', { class: 'hot' }, 'hot '); s.appendChild(bar); return s; }
// The group (index into `line_times.groups`) a unit's runs of a line are counted in.
function groupOf(run, u) {
  const names = { sm: 'SMs', iu: 'IUs', dma: 'DMA engines' };
  return run.line_times ? run.line_times.groups.indexOf(names[u.kind]) : -1;
}
// When line i of a run ran: per group, a map from frame to warp instructions.
function lineFrames(run, i) {
  const lt = run.line_times;
  if (!lt || !lt.lines[i]) return [];
  return lt.lines[i].map((pairs) => {
    const m = new Map();
    let f = 0;
    for (let k = 0; k < pairs.length; k += 2) { f += pairs[k]; m.set(f, pairs[k + 1]); }
    return m;
  });
}
function chooseLine(run, i) {
  const units = new Set();
  let issued = 0;
  for (const u of run.units) {
    for (let k = 0; k < u.lines.length; k += 3) if (u.lines[k] === i && u.lines[k + 1] > 0) { units.add(u.index); issued += u.lines[k + 1]; }
  }
  const frames = lineFrames(run, i);
  const all = new Set();
  for (const m of frames) for (const f of m.keys()) all.add(f);
  view.line = { run: run.index, line: i, units: units, frames: frames, count: all.size };
  for (const r of RUNS) if (r.kernelRows) r.kernelRows.forEach((tr, k) => tr.classList.toggle('chosen', r === run && k === i));
  const l = run.lines[i];
  const names = [...units].map((k) => run.units[k].name);
  let when = '';
  if (run.line_times) {
    const fc = run.line_times.frame_cycles;
    const sorted = [...all].sort((a, b) => a - b);
    when = sorted.length ? '; ran in ' + sorted.length + ' frame' + (sorted.length === 1 ? '' : 's') + ' of ' + grouped(fc) + ' cycles, from cycle ' +
      grouped(sorted[0] * fc) + ' to ' + grouped(Math.min(run.cycles, (sorted[sorted.length - 1] + 1) * fc)) + ' (the strip under the slider)' : '; never ran';
  }
  $('line-info').textContent = l.key + ' (' + l.instructions.join('; ') + '): ' + grouped(issued) + ' warp instructions on ' + units.size + ' units' +
    (names.length ? ' (' + names.slice(0, 8).join(', ') + (names.length > 8 ? ', ...' : '') + ')' : '') + when;
  const box = $('line-when');
  box.hidden = !run.line_times;
  const strip = $('line-strip');
  strip.setAttribute('data-line', String(i));
  strip.setAttribute('data-frames', String(all.size));
  $('line-when-text').textContent = (RUNS.length > 1 ? run.label + ': ' : '') + 'when ' + l.key + ' ran: ' +
    (all.size ? 'darker where more of its warp instructions issued, one row per unit group (' + run.line_times.groups.filter((g, k) => frames[k] && frames[k].size).join(', ') + ')' : 'never');
  paint();
}
// ---- the strip: when the chosen line ran, on the slider's time axis ----
function paintStrip() {
  const box = $('line-when');
  if (!view.line || box.hidden) return;
  const run = RUNS[view.line.run];
  const lt = run.line_times;
  const c = $('line-strip');
  const width = Math.max(500, box.clientWidth || 860);
  const rows = Math.max(1, lt.groups.length), rowH = 10, height = rows * rowH + 4;
  if (c.width !== width) c.width = width;
  if (c.height !== height) c.height = height;
  const g = c.getContext('2d');
  g.fillStyle = '#fff'; g.fillRect(0, 0, width, height);
  const x = (t) => TL.left + (width - TL.left - TL.right) * t / Math.max(1, AXIS);
  g.font = '9px sans-serif'; g.textBaseline = 'middle';
  const most = Math.max(1, ...view.line.frames.map((m) => Math.max(0, ...m.values())));
  lt.groups.forEach((name, k) => {
    const y = 2 + k * rowH;
    g.fillStyle = '#333'; g.fillText(name, 4, y + rowH / 2);
    g.fillStyle = '#eee'; g.fillRect(TL.left, y, width - TL.left - TL.right, rowH - 1);
    const m = view.line.frames[k];
    if (!m) return;
    for (const [f, n] of m) {
      const x0 = x(toAxis(run, f * lt.frame_cycles)), x1 = x(toAxis(run, Math.min(run.cycles, (f + 1) * lt.frame_cycles)));
      g.fillStyle = 'rgba(230, 140, 0, ' + (0.25 + 0.75 * n / most).toFixed(3) + ')';
      g.fillRect(x0, y, Math.max(1, x1 - x0), rowH - 1);
    }
  });
  g.fillStyle = '#d00'; g.fillRect(x(view.t) - 0.5, 0, 1.5, height);
}
