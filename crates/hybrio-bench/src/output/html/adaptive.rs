//! The adaptive engine's choices over a run, as points to chart: for a
//! run's page and for `hybrio compare`'s pictures alike.

use super::chart::Point;
use crate::stats::Timeline;

/// The adaptive engine's choices per window of `timeline`: the share of
/// its requests done inline (a point per window with requests), and a
/// point per window in which a class of requests switched its choice.
pub fn inline_share(timeline: &Timeline) -> (Vec<Point>, Vec<Point>) {
    let mut before = timeline.paths_at_start.unwrap_or_default();
    let mut inline = Vec::new();
    let mut switches = Vec::new();
    for p in &timeline.points {
        let Some(now) = p.paths else { continue };
        let t = p.t_ms as f64 / 1000.0;
        let done_inline = now.inline.saturating_sub(before.inline);
        let sent = now.asynchronous.saturating_sub(before.asynchronous);
        let switched = now.switches.saturating_sub(before.switches);
        if done_inline + sent > 0 {
            let share = 100.0 * done_inline as f64 / (done_inline + sent) as f64;
            inline.push(Point {
                x: t,
                y: share,
                tip: format!(
                    "at {t:.1} s: {share:.1}% inline ({done_inline} inline, {sent} asynchronous)"
                ),
            });
        }
        if switched > 0 {
            switches.push(Point {
                x: t,
                y: 100.0,
                tip: format!(
                    "at {t:.1} s: {switched} switch{}",
                    if switched == 1 { "" } else { "es" }
                ),
            });
        }
        before = now;
    }
    (inline, switches)
}
