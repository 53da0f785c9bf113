//! The page's resolution, chosen from the run's length: samples merged into at most
//! [`MAX_FRAMES`] frames (the player's steps), and activity kept exact unless the
//! units together have more than [`MAX_SEGMENTS`] stretches, in which case each
//! unit shows, frame by frame, the activity that took most of the frame; likewise
//! rendezvous beyond [`MAX_HANDOVERS`] are thinned. So a page stays a few megabytes
//! however long the run.

use crate::observe::activity::{Activity, Segment};
use crate::observe::counters::ComponentCounts;
use crate::observe::samples::Samples;
use spu_isa::Side;

/// Most frames a page steps through; the samples a page records are limited to
/// this many per unit (the sampler then keeps between half and all of them).
pub const MAX_FRAMES: usize = 2048;

/// Most activity stretches a page holds, all units together.
pub const MAX_SEGMENTS: usize = 200_000;

/// Most rendezvous a page lists, all units together.
pub const MAX_HANDOVERS: usize = 100_000;

/// Each unit's rendezvous (cycle, side), thinned to fit [`MAX_HANDOVERS`]: all of
/// them when they fit (step 1), else the first on each side in each stretch of
/// `step` cycles, `step` the frame length doubled until they fit. Returns the
/// step and the rendezvous kept.
pub fn thin_handovers(units: &[&[(u64, Side)]], frame_cycles: u64) -> (u64, Vec<Vec<(u64, Side)>>) {
    let thin = |step: u64| -> Vec<Vec<(u64, Side)>> {
        units
            .iter()
            .map(|hs| {
                let mut last: [Option<u64>; 4] = [None; 4];
                hs.iter()
                    .filter(|(t, side)| {
                        let slot = &mut last[usize::from(side.code())];
                        let fresh = *slot != Some(t / step);
                        *slot = Some(t / step);
                        fresh
                    })
                    .copied()
                    .collect()
            })
            .collect()
    };
    let total: usize = units.iter().map(|h| h.len()).sum();
    if total <= MAX_HANDOVERS {
        return (1, units.iter().map(|h| h.to_vec()).collect());
    }
    let mut step = frame_cycles.max(2);
    loop {
        let kept = thin(step);
        if kept.iter().map(Vec::len).sum::<usize>() <= MAX_HANDOVERS || step >= u64::MAX / 4 {
            return (step, kept);
        }
        step *= 2;
    }
}

/// Merges intervals pairwise until there are at most [`MAX_FRAMES`].
pub fn merge_samples(samples: &Samples) -> Samples {
    let mut interval = samples.interval_cycles.max(1);
    let mut intervals = samples.intervals.clone();
    while intervals.len() > MAX_FRAMES {
        intervals = intervals
            .chunks(2)
            .map(|pair| {
                let mut sum = ComponentCounts::default();
                for c in pair {
                    sum.merge(c);
                }
                sum
            })
            .collect();
        interval *= 2;
    }
    Samples {
        interval_cycles: interval,
        intervals,
    }
}

/// The stretches each unit shows at a resolution of `step` cycles: exact when
/// `step` is 1, else one stretch per run of frames with the same prevailing
/// activity and pass.
pub fn at_resolution(units: &[Vec<Segment>], step: u64) -> Vec<Vec<Segment>> {
    if step <= 1 {
        return units.to_vec();
    }
    units.iter().map(|segs| prevailing(segs, step)).collect()
}

/// The resolution that keeps the page's stretches within [`MAX_SEGMENTS`]: 1
/// (exact) when they fit, else the frame length, doubled until they fit.
pub fn resolution(units: &[Vec<Segment>], frame_cycles: u64) -> u64 {
    let total: usize = units.iter().map(Vec::len).sum();
    if total <= MAX_SEGMENTS {
        return 1;
    }
    let mut step = frame_cycles.max(2);
    loop {
        let n: usize = units.iter().map(|s| prevailing(s, step).len()).sum();
        if n <= MAX_SEGMENTS || step >= u64::MAX / 4 {
            return step;
        }
        step *= 2;
    }
}

/// One unit's stretches at frames of `step` cycles: in each frame the activity
/// (and pass) that covers most of it, idle when gaps do; ties go to the earlier.
fn prevailing(segs: &[Segment], step: u64) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    // The frame being summed, and its stretches' cycles by (activity, pass).
    let mut frame: Option<u64> = None;
    let mut acc: Vec<(Segment, u64)> = Vec::new();
    let flush = |out: &mut Vec<Segment>, frame: Option<u64>, acc: &mut Vec<(Segment, u64)>| {
        if let Some(f) = frame {
            let covered: u64 = acc.iter().map(|(_, n)| n).sum();
            let idle = step - covered;
            let best = acc.iter().fold(None::<&(Segment, u64)>, |b, c| match b {
                Some(b) if b.1 >= c.1 => Some(b),
                _ => Some(c),
            });
            if let Some((s, n)) = best
                && *n > idle
            {
                push(out, f * step, f.saturating_add(1).saturating_mul(step), *s);
            }
        }
        acc.clear();
    };
    for s in segs {
        let mut start = s.start;
        while start < s.end {
            let f = start / step;
            if frame != Some(f) {
                flush(&mut out, frame, &mut acc);
                frame = Some(f);
            }
            let frame_end = f.saturating_add(1).saturating_mul(step);
            if start == f * step && s.end >= frame_end {
                // Whole frames of one activity.
                let last = s.end / step;
                push(&mut out, start, last * step, *s);
                frame = None;
                start = last * step;
                continue;
            }
            let end = s.end.min(frame_end);
            match acc
                .iter_mut()
                .find(|(c, _)| c.activity == s.activity && c.pass == s.pass)
            {
                Some((_, n)) => *n += end - start,
                None => acc.push((*s, end - start)),
            }
            start = end;
        }
    }
    flush(&mut out, frame, &mut acc);
    out
}

/// Appends a stretch, joining it to the last one when they touch and agree.
fn push(out: &mut Vec<Segment>, start: u64, end: u64, like: Segment) {
    if end <= start {
        return;
    }
    if let Some(last) = out.last_mut()
        && last.end == start
        && last.activity == like.activity
        && last.pass == like.pass
    {
        last.end = end;
        return;
    }
    out.push(Segment {
        start,
        end,
        activity: like.activity,
        pass: like.pass,
    });
}

/// The activity of a unit at cycle `t` in its stretches (idle in gaps).
pub fn activity_at(segs: &[Segment], t: u64) -> Activity {
    let i = segs.partition_point(|s| s.end <= t);
    segs.get(i)
        .filter(|s| s.start <= t)
        .map_or(Activity::Idle, |s| s.activity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::counters::Component;

    fn seg(start: u64, end: u64, activity: Activity) -> Segment {
        Segment {
            start,
            end,
            activity,
            pass: 0,
        }
    }

    #[test]
    fn frames_show_what_took_most_of_them() {
        let segs = vec![
            seg(0, 7, Activity::Compute),
            seg(7, 30, Activity::Wait(None)),
            seg(30, 34, Activity::Compute),
        ];
        let out = prevailing(&segs, 10);
        // [0,10): compute 7 of 10; [10,30): waiting; [30,40): compute 4, idle 6.
        assert_eq!(
            out,
            vec![
                seg(0, 10, Activity::Compute),
                seg(10, 30, Activity::Wait(None))
            ]
        );
        // Exact at a resolution of 1.
        assert_eq!(at_resolution(std::slice::from_ref(&segs), 1)[0], segs);
    }

    #[test]
    fn long_stretches_keep_their_whole_frames() {
        let segs = vec![
            seg(5, 1005, Activity::Compute),
            seg(1005, 1010, Activity::Restore),
        ];
        let out = prevailing(&segs, 100);
        assert_eq!(out, vec![seg(0, 1000, Activity::Compute)]);
        assert_eq!(activity_at(&out, 999), Activity::Compute);
        assert_eq!(activity_at(&out, 1000), Activity::Idle);
    }

    #[test]
    fn the_resolution_keeps_the_page_bounded() {
        // 2 * MAX_SEGMENTS alternating stretches of 3 cycles.
        let n = 2 * MAX_SEGMENTS as u64;
        let segs: Vec<Segment> = (0..n)
            .map(|k| {
                let a = if k % 2 == 0 {
                    Activity::Compute
                } else {
                    Activity::Wait(None)
                };
                seg(3 * k, 3 * k + 3, a)
            })
            .collect();
        let units = vec![segs];
        let step = resolution(&units, 4);
        assert!(step >= 4);
        let out = at_resolution(&units, step);
        assert!(out[0].len() <= MAX_SEGMENTS);
        let small = vec![vec![seg(0, 5, Activity::Compute)]];
        assert_eq!(resolution(&small, 4), 1);
    }

    #[test]
    fn rendezvous_are_thinned_to_fit() {
        let few = [(5, Side::East), (6, Side::East), (6, Side::South)];
        assert_eq!(thin_handovers(&[&few], 100), (1, vec![few.to_vec()]));
        // One rendezvous per side every cycle, on two sides: 2.5 times too many.
        let n = MAX_HANDOVERS as u64 * 5 / 4;
        let many: Vec<(u64, Side)> = (0..n)
            .flat_map(|t| [(t, Side::East), (t, Side::South)])
            .collect();
        let (step, kept) = thin_handovers(&[&many], 4);
        assert!(step >= 4);
        assert!(kept[0].len() <= MAX_HANDOVERS && kept[0].len() > MAX_HANDOVERS / 4);
        // The first of each side in each step, in time order.
        assert_eq!(
            &kept[0][..4],
            &[
                (0, Side::East),
                (0, Side::South),
                (step, Side::East),
                (step, Side::South)
            ]
        );
    }

    #[test]
    fn samples_merge_into_at_most_max_frames() {
        let mut one = ComponentCounts::default();
        one.add(Component::Pipep, 1);
        let samples = Samples {
            interval_cycles: 3,
            intervals: vec![one; 3 * MAX_FRAMES + 1],
        };
        let merged = merge_samples(&samples);
        assert_eq!(merged.interval_cycles, 12);
        assert!(merged.intervals.len() <= MAX_FRAMES);
        let total: u64 = merged
            .intervals
            .iter()
            .map(|c| c.get(Component::Pipep))
            .sum();
        assert_eq!(total, 3 * MAX_FRAMES as u64 + 1);
    }
}
