//! `accuracy-<arm>.svg`: running Acc(u) over the stream, drawn by hand as plain SVG.
//!
//! The paper's figures show accuracy rising as feedback accumulates; one small SVG per
//! arm shows the same without a plotting dependency, and opens in any browser.

use std::fmt::Write;

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 360.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 36.0;
const BOTTOM: f64 = 48.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The plot of `running` (Acc(u) after each step, each in [0, 1]) for `arm`.
pub fn render_svg(arm: &str, subtitle: &str, running: &[f64]) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let n = running.len();
    let x_of = |step: usize| {
        if n <= 1 {
            LEFT
        } else {
            LEFT + plot_w * (step as f64 - 1.0) / (n as f64 - 1.0)
        }
    };
    let y_of = |acc: f64| TOP + plot_h * (1.0 - acc.clamp(0.0, 1.0));
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="20" font-size="14" font-weight="bold">Running Acc(u): {}</text>"#,
        escape(arm)
    );
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="20" text-anchor="end" fill="#555">{}</text>"##,
        WIDTH - RIGHT,
        escape(subtitle)
    );
    for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let y = y_of(tick);
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
            WIDTH - RIGHT
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{:.0}%</text>"#,
            LEFT - 6.0,
            y + 4.0,
            tick * 100.0
        );
    }
    let axis_y = y_of(0.0);
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{axis_y:.1}" stroke="#333"/>"##
    );
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{axis_y:.1}" x2="{:.1}" y2="{axis_y:.1}" stroke="#333"/>"##,
        WIDTH - RIGHT
    );
    let ticks: Vec<usize> = if n == 0 {
        Vec::new()
    } else {
        let mut t: Vec<usize> = (0..=4).map(|i| 1 + (n - 1) * i / 4).collect();
        t.dedup();
        t
    };
    for step in ticks {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{step}</text>"#,
            x_of(step),
            axis_y + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">step</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 8.0
    );
    let points: Vec<String> = running
        .iter()
        .enumerate()
        .map(|(i, &acc)| format!("{:.1},{:.1}", x_of(i + 1), y_of(acc)))
        .collect();
    let _ = writeln!(
        svg,
        r##"<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="{}"/>"##,
        points.join(" ")
    );
    if let Some(last) = running.last() {
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" fill="#1f6feb">{:.1}%</text>"##,
            WIDTH - RIGHT,
            (y_of(*last) - 6.0).max(TOP + 12.0),
            last * 100.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_has_one_point_per_step_and_escapes_text() {
        let svg = render_svg("a<b", "P(fb) = 1 & seed 1", &[0.0, 0.5, 1.0]);
        assert!(svg.starts_with("<svg "));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("a&lt;b"));
        assert!(svg.contains("1 &amp; seed"));
        let points = svg
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(points, "56.0,312.0 340.0,174.0 624.0,36.0");
    }

    #[test]
    fn an_empty_or_single_step_run_still_draws() {
        assert!(render_svg("a", "", &[]).contains("points=\"\""));
        assert!(render_svg("a", "", &[1.0]).contains("points=\"56.0,36.0\""));
    }
}
