// Builds every view and starts the player.
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
