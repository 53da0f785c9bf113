//! A deadlock, rendered for the terminal: its wait chain or cycle, what ends it,
//! where each unit's warps wait, and the syncs both ends of every blocked link
//! made, by work item and kernel source line, with the first pass in which they
//! disagree.

use super::{count, instr_line, line_of, location, role_text, xy};
use crate::exec::warp::WarpState;
use crate::load::Image;
use crate::load::kernel::Kernel;
use crate::observe::outcome::{BlockedLink, ChainEnd, Place, SyncsBy, Waiting};
use crate::observe::report::grouped;
use std::fmt::Write;

/// Units of a wait chain shown in full; longer chains are cut in the middle.
const CHAIN_SHOWN: usize = 12;
/// Work items shown per end of a blocked link.
const HISTORY_SHOWN: usize = 6;
/// Other waiting units named after the chain.
const OTHERS_NAMED: usize = 4;

/// Warp indices as ranges: "0", "0-3, 7".
fn ranges(ws: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let mut j = i;
        while j + 1 < ws.len() && ws[j + 1] == ws[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            ws[i].to_string()
        } else {
            format!("{}-{}", ws[i], ws[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// The warps of a waiting unit, grouped by where they wait.
fn render_warps(s: &mut String, w: &Waiting, kernel: &Kernel, image: &Image) {
    let mut groups: Vec<(u32, WarpState, Vec<u32>)> = Vec::new();
    for &(warp, pc, state) in &w.warps {
        match groups
            .iter_mut()
            .find(|(p, st, _)| *p == pc && *st == state)
        {
            Some((_, _, ws)) => ws.push(warp),
            None => groups.push((pc, state, vec![warp])),
        }
    }
    for (pc, state, ws) in groups {
        let side = match image.program.ops.get(pc as usize).map(|o| o.run) {
            Some(crate::exec::ops::Run::BlockSync(side)) => side,
            _ => None,
        };
        let plural = ws.len() > 1;
        let what = match (state, side) {
            (WarpState::AtBarrier(_), _) => "at bar.sync".to_string(),
            (WarpState::AtBlockSync(_), Some(side)) => format!("at blocksync towards {side}"),
            (WarpState::AtBlockSync(_), None) => "at the global blocksync".to_string(),
            _ => "blocked".to_string(),
        };
        let (at, _) = location(kernel, pc);
        let _ = writeln!(
            s,
            "     warp{} {} {} {what}: {} ({at})",
            if plural { "s" } else { "" },
            ranges(&ws),
            if plural { "wait" } else { "waits" },
            instr_line(kernel, pc)
        );
    }
}

/// A record's syncs and where they come from: "4 syncs at stencil.spu:89",
/// "5 syncs at a.spu:273 (3), a.spu:274 (2)", "1 sync by the runtime".
fn syncs_text(r: &SyncsBy, kernel: &Kernel) -> String {
    let n = count(r.count, "sync");
    match r.pcs.as_slice() {
        [] => format!("{n} by the runtime"),
        [(pc, _)] => format!("{n} at {}", line_of(kernel, *pc)),
        pcs => format!(
            "{n} at {}",
            pcs.iter()
                .map(|(pc, k)| format!("{} ({k})", line_of(kernel, *pc)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One end's syncs on a blocked link, by work item.
fn render_history(
    s: &mut String,
    end: &str,
    unit: Place,
    total: u64,
    records: &[SyncsBy],
    kernel: &Kernel,
) {
    let _ = writeln!(s, "       {end} {unit}: {}", count(total, "sync"));
    let skipped = records.len().saturating_sub(HISTORY_SHOWN);
    if skipped > 0 {
        let _ = writeln!(
            s,
            "         ... {} before these",
            count(skipped as u64, "work item")
        );
    }
    for r in &records[skipped..] {
        let _ = writeln!(
            s,
            "         pass {}, {}: {}",
            xy(r.pass),
            role_text(r.role, unit.unit),
            syncs_text(r, kernel)
        );
    }
}

/// The first pass in which the two ends of a link made different numbers of syncs,
/// with what each end ran there.
fn first_disagreement(link: &BlockedLink) -> Option<String> {
    let mut passes: Vec<[u32; 2]> = link.history.iter().flatten().map(|r| r.pass).collect();
    passes.sort_by_key(|[x, y]| (*y, *x));
    passes.dedup();
    let units = [link.producer, link.consumer];
    passes.into_iter().find_map(|pass| {
        let of = |end: usize| {
            let records: Vec<&SyncsBy> =
                link.history[end].iter().filter(|r| r.pass == pass).collect();
            let who = if records.is_empty() {
                format!("{} (no work there)", units[end])
            } else {
                records
                    .iter()
                    .map(|r| role_text(r.role, units[end].unit))
                    .collect::<Vec<_>>()
                    .join(" and ")
            };
            (records.iter().map(|r| r.count).sum::<u64>(), who)
        };
        let ((p, producer), (c, consumer)) = (of(0), of(1));
        (p != c).then(|| {
            format!(
                "the ends first disagree in pass {}: {producer} made {} on this link, {consumer} {}",
                xy(pass),
                count(p, "sync"),
                count(c, "sync"),
            )
        })
    })
}

/// One unit of a deadlock's chain: what it runs, where it waits, and the link;
/// `last`: its partner ends the chain, so the link's sync counts say who is wrong.
fn render_waiting(s: &mut String, w: &Waiting, last: bool, kernel: &Kernel, image: &Image) {
    let _ = writeln!(
        s,
        "   {} running {} in pass {}:",
        w.unit,
        role_text(w.role, w.unit.unit),
        xy(w.pass)
    );
    if let Some(e) = &w.engine {
        let _ = writeln!(s, "     {e}");
    }
    render_warps(s, w, kernel, image);
    let Some(link) = &w.link else {
        return;
    };
    let partner = if link.producer == w.unit {
        link.consumer
    } else {
        link.producer
    };
    let _ = writeln!(
        s,
        "     waits on its {} link, to {partner}{}; syncs on that link so far:",
        link.side,
        if link.inner {
            " (an inner link, a CB pair in the SM's shared memory)"
        } else {
            ""
        }
    );
    render_history(
        s,
        "producer",
        link.producer,
        link.arrivals[0],
        &link.history[0],
        kernel,
    );
    render_history(
        s,
        "consumer",
        link.consumer,
        link.arrivals[1],
        &link.history[1],
        kernel,
    );
    if let Some(d) = first_disagreement(link).filter(|_| last) {
        let _ = writeln!(s, "     {d}");
    }
}

/// A deadlock: its wait chain or cycle, what ends it, and the other waiting units.
pub(super) fn render(
    s: &mut String,
    cycle: Option<u64>,
    chain: &[Waiting],
    end: &ChainEnd,
    others: &[Place],
    kernel: &Kernel,
    image: &Image,
) {
    let n = (chain.len() + others.len()) as u64;
    let _ = writeln!(
        s,
        "error: deadlock{}: no unit can make progress; {} forever",
        cycle.map_or(String::new(), |c| format!(" at cycle {}", grouped(c))),
        if n == 1 {
            "1 unit waits".to_string()
        } else {
            format!("{n} units wait")
        }
    );
    let names: Vec<String> = chain.iter().map(|w| w.unit.to_string()).collect();
    let path = names.join(" -> ");
    let last = chain
        .last()
        .map_or_else(String::new, |w| w.unit.to_string());
    let summary = match end {
        ChainEnd::Cycle => format!(
            "wait cycle: {path} -> {}; each waits for the next",
            names.first().map_or("", String::as_str)
        ),
        ChainEnd::Finished(u) => {
            format!("wait chain: {path} -> {u}, which has finished all its work")
        }
        ChainEnd::NotStarted {
            unit,
            role,
            pass,
            now,
        } => format!(
            "wait chain: {path} -> {unit}, which runs {} in pass {} only after pass {} has finished (sequential passes)",
            role_text(*role, *unit),
            xy(*pass),
            xy(*now)
        ),
        ChainEnd::OwnWarps if chain.len() == 1 => {
            format!("{last} waits for its own warps, which wait at different barriers")
        }
        ChainEnd::OwnWarps => format!(
            "wait chain: {path}; {last} waits for its own warps, which wait at different barriers"
        ),
        ChainEnd::Global => format!(
            "wait chain: {path}; {last} waits at the global blocksync, which needs every busy unit"
        ),
    };
    let _ = writeln!(s, "   {summary}");
    let cut = chain.len().saturating_sub(CHAIN_SHOWN);
    for (i, w) in chain.iter().enumerate() {
        if cut > 0 && i == CHAIN_SHOWN / 2 {
            let _ = writeln!(
                s,
                "   ... {} further along the chain, each waiting for the next",
                count(cut as u64, "unit")
            );
        }
        if cut > 0 && (CHAIN_SHOWN / 2..CHAIN_SHOWN / 2 + cut).contains(&i) {
            continue;
        }
        let last = i + 1 == chain.len() && !matches!(end, ChainEnd::Cycle);
        render_waiting(s, w, last, kernel, image);
    }
    if !others.is_empty() {
        let named: Vec<String> = others
            .iter()
            .take(OTHERS_NAMED)
            .map(ToString::to_string)
            .collect();
        let more = others.len().saturating_sub(OTHERS_NAMED);
        let _ = writeln!(
            s,
            "   = {} {} too: {}{}",
            count(others.len() as u64, "other unit"),
            if others.len() == 1 { "waits" } else { "wait" },
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    let help = if matches!(end, ChainEnd::Cycle) {
        "units that wait for each other in a ring: in every unit, make the syncs on inputs (north, west) before those on outputs (south, east), so data flows one way"
    } else {
        "every warp of a block must reach the same barriers, and both ends of a link must make the same number of syncs on it"
    };
    let _ = writeln!(s, "   = help: {help}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_indices_read_as_ranges() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
        assert_eq!(ranges(&[3]), "3");
    }
}
