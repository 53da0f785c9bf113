// The kernel, line by line, and a chosen line's units.
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
