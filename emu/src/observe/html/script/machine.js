// The machine as it is (SVG): the SPU's grid of SMs with the units around its edge
// and the CB links, or a GPU's SMs, L2 and DRAM; and the launch, block by block.
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
