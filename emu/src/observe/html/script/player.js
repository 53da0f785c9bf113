// The player: the slider's cycle, and every view painted at it.
// ---- the player ----
function seek(t) {
  view.t = Math.max(0, Math.min(AXIS, t));
  $('slider').value = String(view.t);
  paint();
}
function paint() {
  for (const run of RUNS) paintRun(run);
  paintChart();
  paintStrip();
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
