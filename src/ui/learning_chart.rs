//! How the assistant is learning: per block of 20 questions, how often the user had to
//! correct it, and how often an applied memory was enough.

use leptos::prelude::*;

use crate::ui::page_context::use_page;
use remind_core::learning_curve::{CurveBucket, LearningCurve};

const BAR_WIDTH: f32 = 18.0;
const GAP: f32 = 10.0;
const HEIGHT: f32 = 80.0;

fn percent(share: Option<f32>) -> String {
    share.map_or_else(|| "—".into(), |s| format!("{:.0}%", s * 100.0))
}

fn bucket_label(bucket: &CurveBucket) -> String {
    format!(
        "questions {}–{}: corrected {}, memory enough {}",
        bucket.first_question,
        bucket.first_question + bucket.questions - 1,
        percent(Some(bucket.corrected_share())),
        percent(bucket.applied_success_share())
    )
}

/// One pair of bars per block: corrected share (left), memory-enough share (right).
fn bars(curve: &LearningCurve) -> Vec<(f32, f32, f32, String)> {
    curve
        .buckets
        .iter()
        .enumerate()
        .map(|(i, bucket)| {
            let x = i as f32 * (2.0 * BAR_WIDTH + GAP);
            let corrected = bucket.corrected_share() * HEIGHT;
            let helped = bucket.applied_success_share().unwrap_or(0.0) * HEIGHT;
            (x, corrected, helped, bucket_label(bucket))
        })
        .collect()
}

#[component]
pub fn LearningChart() -> impl IntoView {
    let page = use_page();
    let open = RwSignal::new(false);
    // Every ask, correction and confirmation ends in a new turn state or a new memory
    // snapshot; either may have appended to the turn log, so the curve is read again,
    // while the chart is open: the log grows by a question at a time, and reading all of
    // it twice an ask was a cost every question paid, chart shown or not.
    let curve = LocalResource::new(move || {
        let open = open.get();
        page.memory.track();
        page.asking.track();
        let session = page.session();
        async move {
            match open {
                true => Some(session.learning_curve().await.map_err(|e| e.to_string())),
                false => None,
            }
        }
    });
    let body = move || match curve.get().flatten() {
        None => view! { <p class="status">"Loading…"</p> }.into_any(),
        Some(Err(e)) => view! { <p class="error">{e}</p> }.into_any(),
        Some(Ok(c)) if c.buckets.is_empty() => {
            view! { <p class="status" id="learning-empty">"No questions asked yet."</p> }.into_any()
        }
        Some(Ok(c)) => view! { <Chart curve=c/> }.into_any(),
    };
    view! {
        <details class="learning" id="learning-curve" prop:open=open
            on:toggle=move |ev| open.set(event_target::<web_sys::HtmlDetailsElement>(&ev).open())>
            <summary>"How it is learning"</summary>
            {body}
        </details>
    }
}

#[component]
fn Chart(curve: LearningCurve) -> impl IntoView {
    let width = (curve.buckets.len() as f32 * (2.0 * BAR_WIDTH + GAP)).max(1.0);
    let view_box = format!("0 0 {width} {HEIGHT}");
    let labels: Vec<String> = curve.buckets.iter().map(bucket_label).collect();
    let rects = bars(&curve)
        .into_iter()
        .map(|(x, corrected, helped, label)| {
            view! {
                <g>
                    <title>{label}</title>
                    <rect class="bar-corrected" x=x y=HEIGHT - corrected width=BAR_WIDTH height=corrected/>
                    <rect class="bar-helped" x=x + BAR_WIDTH y=HEIGHT - helped width=BAR_WIDTH height=helped/>
                </g>
            }
        })
        .collect_view();
    // The list gives the same figures as text, which a screen reader reads for the
    // chart (`aria-describedby`).
    view! {
        <svg class="learning-chart" viewBox=view_box role="img" aria-label="Corrections and helpful memories per 20 questions"
            aria-describedby="learning-buckets">
            {rects}
        </svg>
        <p class="legend"><span class="swatch corrected"></span>" had to correct "
            <span class="swatch helped"></span>" applied memory was enough"</p>
        <ul id="learning-buckets" aria-label="The chart's figures">{labels.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
    }
}
