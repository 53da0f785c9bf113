// The side panel (the selected unit, or the run's summary), the legend and the
// energy tables.
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
    e.appendChild(sw); e.appendChild(document.createTextNode(s.name + (s.group !== s.name ? ' (' + s.group + ')' : '')));
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
